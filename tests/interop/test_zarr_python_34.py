"""zarr-python 3.4 (the latest release; Python >= 3.12) against zarrkit, both ways.

The test venv pins zarr-python 3.1 on Python 3.11, so zarr-python 3.4 runs in its own venv,
.venv-zarr34, which scripts/setup makes where Python 3.12 exists, as a subprocess
(zarr34_driver.py). Where that venv is missing these tests skip and say how to get it.

zarr-python 3.4 writes every case (v3 and v2, every core type, the codecs, sharding,
strings, struct, rectilinear chunk grids, a consolidated hierarchy) once, and reads back what
it wrote: zarrkit must export the same values. Then `zarrkit cp` re-encodes each case with the
same codecs (and grids), and zarr-python 3.4 must read zarrkit's copies as the same values;
`zarrkit cp --chunks` with sizes that vary makes rectilinear grids zarr-python 3.4 reads.
"""

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from zk_interop import assert_same_array, read_json

REPO = Path(__file__).resolve().parents[2]
DRIVER = Path(__file__).with_name("zarr34_driver.py")
DRIVER_TIMEOUT_S = 300


@pytest.fixture(scope="module")
def zarr34_python():
    python = Path(os.environ.get("ZARRKIT_ZARR34_VENV", REPO / ".venv-zarr34")) / "bin" / "python"
    if not python.is_file():
        pytest.skip(f"no zarr-python 3.4 venv at {python.parent.parent}: it needs Python >= 3.12; "
                    "scripts/setup makes it where one exists (ZARR34_PYTHON=/path/to/python3.12 scripts/setup)")
    return python


def run_driver(python, *args):
    result = subprocess.run([str(python), str(DRIVER), *map(str, args)], capture_output=True, text=True,
                            timeout=DRIVER_TIMEOUT_S, stdin=subprocess.DEVNULL)
    if result.returncode != 0:
        pytest.fail(f"zarr34_driver.py {' '.join(map(str, args))} exited {result.returncode}:\n{result.stderr[-4000:]}",
                    pytrace=False)
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["zarr"] == "3.4.2", f"the zarr-python 3.4 venv has zarr {report['zarr']}"
    return report["cases"]


@pytest.fixture(scope="module")
def written(zarr34_python, tmp_path_factory):
    """Every case written by zarr-python 3.4: {case: array path}, and the directory."""
    root = tmp_path_factory.mktemp("zarr34")
    return root, run_driver(zarr34_python, "write", root)


@pytest.fixture(scope="module")
def copied(zarr34_python, written, zarrkit_bin, tmp_path_factory):
    """Each case copied by `zarrkit cp` (same codecs, re-encoded) and read by zarr-python 3.4."""
    root, cases = written
    copies = tmp_path_factory.mktemp("zarrkit-copies")
    failures = {}
    for case in cases:
        result = subprocess.run([zarrkit_bin, "cp", str(root / case), str(copies / case)], capture_output=True,
                                text=True, timeout=120, stdin=subprocess.DEVNULL)
        if result.returncode != 0:
            failures[case] = result.stderr.strip()
    for case, source, chunks in RECHUNKED:
        result = subprocess.run([zarrkit_bin, "cp", str(root / source), str(copies / case), "--chunks", chunks],
                                capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
        if result.returncode != 0:
            failures[case] = result.stderr.strip()
    readback = tmp_path_factory.mktemp("zarr34-readback")
    read = run_driver(zarr34_python, "read", copies, readback) if any(copies.iterdir()) else {}
    return readback, read, failures, copies


# The cast_value and scale_offset codecs (zarr-python 3.4 casts through cast-value-rs):
# their conversions are deterministic and uncompressed here, so chunks compare byte for byte.
VALUE_CODEC_CASES = [
    "v3-float64-scale_offset-cast_value-uint16", "v3-float32-scale_offset-cast_value-int8-wrap",
    "v3-float64-cast_value-float16-towards-zero", "v3-float32-cast_value-uint8-scalar-map", "v3-int32-scale_offset",
    "v3-int64-cast_value-int16-clamp", "v3-uint8-cast_value-float32", "v3-float32-scale_offset-cast_value-sharded",
]

CASES = [
    *(f"v3-{t}" for t in ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                          "float16", "float32", "float64", "complex64", "complex128"]),
    "v3-float64-big-endian", "v3-int16-gzip", "v3-int32-zstd-crc32c", "v3-float32-blosc-lz4",
    "v3-uint16-blosc-zstd-bitshuffle", "v3-int64-numcodecs.zlib", "v3-float32-none", "v3-int32-transpose",
    "v3-float32-sharded", "v3-int16-sharded-index-start", "v3-datetime64", "v3-timedelta64", "v3-fixed-U5",
    "v3-fixed-S7", "v3-string", "v3-struct", "v3-struct-sharded", "v3-int32-rectilinear",
    "v3-float64-rectilinear-runs", "v3-uint16-rectilinear-sharded", "v3-group-consolidated",
    *(f"v2-{t}" for t in ["bool", "int8", "int32", "uint64", "float16", "float64", "complex128"]),
    "v2-big-endian-i4", "v2-U5", "v2-S7", "v2-datetime64", "v2-datetime64-scaled-generic",
    "v2-timedelta64-scaled-generic", "v2-structured", "v2-string", "v2-blosc", "v2-zlib",
    "v2-no-compressor", "v2-order-F", "v2-delta-filter", "v2-nested-keys", "v2-fill-none",
    *VALUE_CODEC_CASES,
]


# zarrkit cp --chunks onto rectilinear grids: (copy, source case, --chunks).
RECHUNKED = [
    ("rechunked-int32-rectilinear", "v3-int32", "1x2+5,3+2"),
    ("rechunked-float64-regular", "v3-float64-rectilinear-runs", "4,5"),
    ("rechunked-int16-onto-runs", "v3-int16-gzip", "2x3+1,5"),
]


def test_the_driver_writes_every_case(written):
    _, cases = written
    assert sorted(cases) == sorted(CASES)


@pytest.mark.parametrize("case", CASES)
def test_zarr_python_34_writes_zarrkit_reads(written, zarrkit, case):
    root, cases = written
    expected = np.load(root / f"{case}.npy", allow_pickle=False)
    assert_same_array(zarrkit.export(root / cases[case]), expected, case)


@pytest.mark.parametrize("case", CASES)
def test_zarrkit_writes_zarr_python_34_reads(written, copied, case):
    root, cases = written
    readback, read, failures, _ = copied
    assert case not in failures, f"zarrkit cp failed: {failures.get(case)}"
    assert case in read, f"zarr-python 3.4 did not read zarrkit's copy of {case}"
    expected = np.load(root / f"{case}.npy", allow_pickle=False)
    assert_same_array(np.load(readback / f"{case}.npy", allow_pickle=False), expected, case)


@pytest.mark.parametrize("case,source,chunks", RECHUNKED)
def test_zarrkit_cp_chunks_makes_grids_zarr_python_34_reads(written, copied, case, source, chunks):
    root, _ = written
    readback, read, failures, copies = copied
    assert case not in failures, f"zarrkit cp --chunks {chunks} failed: {failures.get(case)}"
    assert case in read, f"zarr-python 3.4 did not read {case}"
    expected = np.load(root / f"{source}.npy", allow_pickle=False)
    assert_same_array(np.load(readback / f"{case}.npy", allow_pickle=False), expected, case)
    grid = read_json(copies / case / "zarr.json")["chunk_grid"]
    if "+" in chunks or "x" in chunks:
        assert grid["name"] == "rectilinear" and grid["configuration"]["kind"] == "inline", grid
    else:
        assert grid == {"name": "regular", "configuration": {"chunk_shape": [4, 5]}}, grid


def test_rectilinear_grids_as_zarr_python_34_writes_them(written):
    """The chunk_shapes of zarr-python 3.4: runs as [size, count], single sizes bare, an axis
    of one size repeating without end as a bare integer."""
    root, _ = written
    shapes = {case: read_json(root / case / "zarr.json")["chunk_grid"]["configuration"]["chunk_shapes"]
              for case in ["v3-int32-rectilinear", "v3-float64-rectilinear-runs", "v3-uint16-rectilinear-sharded"]}
    assert shapes == {"v3-int32-rectilinear": [[3, 1, 3], 2], "v3-float64-rectilinear-runs": [[[2, 3], 1], [1, 4]],
                      "v3-uint16-rectilinear-sharded": [[4, 2, 1], [2, 3]]}


def test_copies_keep_the_metadata_zarr_python_34_wrote(written, copied):
    """zarrkit's copy names the same data type, fill value and codecs (the struct spelling
    zarr-python 3.4 writes included)."""
    root, _ = written
    copies = copied[3]
    for case in ["v3-struct", "v3-float32-sharded", "v3-int16-sharded-index-start", "v3-string", "v3-datetime64",
                 "v3-int32-zstd-crc32c", "v3-int32-rectilinear", "v3-float64-rectilinear-runs",
                 "v3-uint16-rectilinear-sharded"]:
        theirs, ours = read_json(root / case / "zarr.json"), read_json(copies / case / "zarr.json")
        for key in ["data_type", "fill_value", "chunk_grid", "chunk_key_encoding"]:
            assert ours[key] == theirs[key], f"{case}: {key} {ours[key]} != {theirs[key]}"
        # The same codecs in the same order (zarrkit leaves out zstd's "checksum": false).
        assert [c["name"] for c in ours["codecs"]] == [c["name"] for c in theirs["codecs"]], case


def chunk_files(array_dir: Path) -> dict[str, bytes]:
    return {str(p.relative_to(array_dir)): p.read_bytes() for p in sorted(array_dir.rglob("*"))
            if p.is_file() and p.name != "zarr.json"}


@pytest.mark.parametrize("case", VALUE_CODEC_CASES)
def test_value_codec_chunks_are_byte_identical(written, copied, case):
    """zarrkit's copy, re-encoded from the decoded values, stores the bytes zarr-python 3.4
    stored: the same chunks, each the same bytes, and the same codec metadata."""
    root, cases = written
    copies = copied[3]
    assert case not in copied[2], f"zarrkit cp failed: {copied[2].get(case)}"
    theirs, ours = chunk_files(root / case), chunk_files(copies / case)
    assert sorted(ours) == sorted(theirs), case
    for key in theirs:
        assert ours[key] == theirs[key], f"{case}: chunk {key} differs"
    theirs_meta, ours_meta = read_json(root / case / "zarr.json"), read_json(copies / case / "zarr.json")
    for key in ["data_type", "fill_value"]:
        assert ours_meta[key] == theirs_meta[key], f"{case}: {key} {ours_meta[key]} != {theirs_meta[key]}"
    assert value_codecs(ours_meta["codecs"]) == value_codecs(theirs_meta["codecs"]), case


def value_codecs(codecs: list) -> list:
    """The cast_value and scale_offset entries of a codec list, those inside sharding too."""
    found = []
    for codec in codecs:
        if isinstance(codec, dict) and codec.get("name") in ("cast_value", "scale_offset"):
            found.append(codec)
        elif isinstance(codec, dict) and codec.get("name") == "sharding_indexed":
            found += value_codecs(codec["configuration"]["codecs"])
    assert found or codecs == [], codecs
    return found
