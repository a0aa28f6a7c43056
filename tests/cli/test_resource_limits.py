"""Hostile but valid input through the CLI: decompression bombs and huge claimed sizes are
refused with one clear error line, and the process's peak memory stays bounded (measured as
the peak resident set of the zarrkit process); a huge grid of mostly absent chunks exports in
time proportional to what is stored.

The bombs are made at test time (small on disk, large when inflated), so the repository keeps
no large files.
"""

from __future__ import annotations

import gzip
import json
import os
import struct
import subprocess
import sys
import time
import zipfile

import numpy as np
import pytest

ZARRKIT = os.environ.get("ZARRKIT_BIN")
if not ZARRKIT:
    pytest.skip("ZARRKIT_BIN is not set (path of the zarrkit binary)", allow_module_level=True)

MiB = 1 << 20

# Runs zarrkit in a fresh Python process and reports its exit code, stderr and peak RSS (KiB):
# RUSAGE_CHILDREN of that process covers only this one child.
MEASURE = r"""
import json, resource, subprocess, sys
proc = subprocess.run(sys.argv[1:], capture_output=True, text=True, timeout=300)
print(json.dumps({"rc": proc.returncode, "stderr": proc.stderr,
                  "peak_kib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))
"""


def measured(*args: str, env: dict[str, str] | None = None) -> dict:
    proc = subprocess.run([sys.executable, "-c", MEASURE, ZARRKIT, *map(str, args)], capture_output=True, text=True,
                          timeout=320, env={**os.environ, **(env or {})})
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def error_lines(result: dict) -> list[str]:
    return [line for line in result["stderr"].splitlines() if line.strip()]


def v3_array(shape: list[int], chunks: list[int], dtype: str, codecs: list[dict]) -> str:
    return json.dumps({
        "zarr_format": 3, "node_type": "array", "shape": shape, "data_type": dtype,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": chunks}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": 0, "codecs": codecs, "attributes": {},
    })


def test_zip_member_that_inflates_far_beyond_its_chunk_is_refused_before_inflating(tmp_path):
    archive = tmp_path / "bomb.zip"
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as z:
        z.writestr("zarr.json", v3_array([16], [16], "uint8", [{"name": "bytes"}]))
        with z.open("c/0", "w", force_zip64=True) as member:  # 512 MiB of zeros, about 0.5 MB stored
            block = bytes(16 * MiB)
            for _ in range(32):
                member.write(block)
    assert archive.stat().st_size < 4 * MiB
    result = measured("export", archive, tmp_path / "out.npy", env={"ZARRKIT_MAX_CHUNK_BYTES": "64M"})
    assert result["rc"] != 0
    lines = error_lines(result)
    assert len(lines) == 1 and "zarrkit: error:" in lines[0], result["stderr"]
    assert "c/0" in lines[0] and ("limit" in lines[0] or "max_chunk_bytes" in lines[0]), lines[0]
    assert result["peak_kib"] < 150 * 1024, f"peak {result['peak_kib']} KiB"


V2_ARRAY = json.dumps({"zarr_format": 2, "shape": [16], "chunks": [16], "dtype": "<u1", "compressor": None,
                       "fill_value": 0, "order": "C", "filters": None})


# A metadata document inside a zip archive that declares (and inflates to) 256 MiB, four times
# the 64 MiB JSON limit, beside whatever makes the archive a node of its kind.
@pytest.mark.parametrize("document, beside", [
    ("zarr.json", {}),
    (".zarray", {}),
    (".zattrs", {".zarray": V2_ARRAY}),
    (".zmetadata", {".zgroup": '{"zarr_format": 2}'}),
])
def test_a_zip_metadata_member_declaring_more_than_the_json_limit_is_refused_before_inflating(
        tmp_path, document, beside):
    archive = tmp_path / "meta-bomb.zip"
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as z:
        for name, text in beside.items():
            z.writestr(name, text)
        with z.open(document, "w", force_zip64=True) as member:  # about 0.25 MB stored
            member.write(b"{")
            block = b" " * (16 * MiB)
            for _ in range(16):
                member.write(block)
            member.write(b"}")
    assert archive.stat().st_size < 2 * MiB
    started = time.monotonic()
    result = measured("info", archive)
    elapsed = time.monotonic() - started
    assert result["rc"] == 1, result
    lines = error_lines(result)
    assert len(lines) == 1 and "zarrkit: error:" in lines[0], result["stderr"]
    assert document in lines[0] and f"declares {256 * MiB + 2} bytes" in lines[0] and "limit" in lines[0], lines[0]
    # Refused by the size the archive declares: not even the 64 MiB up to the limit is inflated.
    assert result["peak_kib"] < 48 * 1024, f"peak {result['peak_kib']} KiB"
    assert elapsed < 10, f"{elapsed:.1f} s"


def test_a_chunk_shape_beyond_the_chunk_limit_is_refused_before_any_read(tmp_path):
    # A 96 KB zstd chunk whose metadata declares a 4 GiB chunk: nothing is fetched or allocated.
    path = tmp_path / "huge.zarr"
    path.mkdir()
    (path / "zarr.json").write_text(v3_array([1 << 30], [1 << 30], "int32",
                                             [{"name": "bytes", "configuration": {"endian": "little"}},
                                              {"name": "zstd", "configuration": {"level": 1}}]))
    (path / "c").mkdir()
    (path / "c" / "0").write_bytes(os.urandom(96 * 1024))
    result = measured("export", path, tmp_path / "out.npy", "--select", "0:10")
    assert result["rc"] != 0
    lines = error_lines(result)
    assert len(lines) == 1 and "max_chunk_bytes" in lines[0], result["stderr"]
    assert result["peak_kib"] < 150 * 1024, f"peak {result['peak_kib']} KiB"


def vlen_utf8_chunk(strings: int, length: int) -> bytes:
    # numcodecs' vlen-utf8 layout: the count, then (length, bytes) per item, little-endian.
    item = struct.pack("<I", length) + b"a" * length
    return struct.pack("<I", strings) + item * strings


def test_string_chunks_that_inflate_to_gigabytes_are_bounded_by_the_request_limit(tmp_path):
    path = tmp_path / "strings.zarr"
    path.mkdir()
    (path / "zarr.json").write_text(json.dumps({
        "zarr_format": 3, "node_type": "array", "shape": [16], "data_type": "string",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": "", "codecs": [{"name": "vlen-utf8"}, {"name": "gzip", "configuration": {"level": 1}}],
        "attributes": {},
    }))
    (path / "c").mkdir()
    bomb = gzip.compress(vlen_utf8_chunk(4, 48 * MiB), compresslevel=1)  # 192 MiB of strings per chunk
    assert len(bomb) < 2 * MiB
    for i in range(4):
        (path / "c" / str(i)).write_bytes(bomb)
    limits = {"ZARRKIT_MAX_CHUNK_BYTES": "64M", "ZARRKIT_MAX_REQUEST_BYTES": "96M"}
    result = measured("cp", path, tmp_path / "copy.zarr", env=limits)
    assert result["rc"] != 0
    lines = error_lines(result)
    assert len(lines) == 1 and "zarrkit: error:" in lines[0], result["stderr"]
    # Refused by a setting, or by the bound on how far a string chunk may plausibly expand.
    assert "c/" in lines[0] and any(w in lines[0] for w in ("max_chunk_bytes", "max_request_bytes", "limit")), lines[0]
    assert result["peak_kib"] < 400 * 1024, f"peak {result['peak_kib']} KiB"  # not 4 x 192 MiB
    assert not (tmp_path / "copy.zarr" / "zarr.json").exists()  # the failed copy is no array


def test_a_huge_grid_of_absent_chunks_exports_in_proportion_to_what_is_stored(tmp_path):
    path = tmp_path / "sparse.zarr"
    path.mkdir()
    n = 1 << 24  # 2^22 chunks of 4 int16
    (path / "zarr.json").write_text(v3_array([n], [4], "int16", [{"name": "bytes",
                                                                   "configuration": {"endian": "little"}}]))
    (path / "c").mkdir()
    stored = {0: 1, 12345: 2, (1 << 22) - 1: 3}
    for chunk, value in stored.items():
        (path / "c" / str(chunk)).write_bytes(np.full(4, value, dtype="<i2").tobytes())
    started = time.monotonic()
    result = measured("export", path, tmp_path / "out.npy")
    elapsed = time.monotonic() - started
    assert result["rc"] == 0, result["stderr"]
    data = np.load(tmp_path / "out.npy")
    assert int(np.count_nonzero(data)) == 12
    for chunk, value in stored.items():
        assert (data[chunk * 4 : chunk * 4 + 4] == value).all()
    # A listing, not 2^22 lookups (about 25 s at the 5-8 us per absent chunk measured before).
    assert elapsed < 20, f"{elapsed:.1f} s"


def test_string_chunks_within_the_chunk_limit_are_bounded_in_sum_per_request(tmp_path):
    # Eight chunks of 2 MiB of (incompressible) strings each, each within every per-chunk
    # bound: together past max_request_bytes.
    path = tmp_path / "many.zarr"
    path.mkdir()
    (path / "zarr.json").write_text(json.dumps({
        "zarr_format": 3, "node_type": "array", "shape": [16], "data_type": "string",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": "", "codecs": [{"name": "vlen-utf8"}], "attributes": {},
    }))
    (path / "c").mkdir()
    rng = np.random.default_rng(5)
    for i in range(8):
        text = rng.integers(ord("a"), ord("z") + 1, 2 * MiB, dtype=np.uint8).tobytes()
        half = len(text) // 2
        item = lambda b: struct.pack("<I", len(b)) + b  # noqa: E731
        (path / "c" / str(i)).write_bytes(struct.pack("<I", 2) + item(text[:half]) + item(text[half:]))
    result = measured("cp", path, tmp_path / "copy.zarr", env={"ZARRKIT_MAX_REQUEST_BYTES": "8M"})
    assert result["rc"] != 0
    lines = error_lines(result)
    assert len(lines) == 1 and "max_request_bytes" in lines[0], result["stderr"]
    ok = measured("cp", path, tmp_path / "copy2.zarr", env={"ZARRKIT_MAX_REQUEST_BYTES": "64M"})
    assert ok["rc"] == 0, ok["stderr"]
