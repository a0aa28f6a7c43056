"""`zarrkit export --astype`: bfloat16 arrays (a type .npy has no name for) written as
float32 or float64 values, or as their raw 2-byte patterns for ml_dtypes.

The arrays are written here by hand (zarr.json and gzip-compressed big-endian chunks) so that
what export reads does not depend on zarrkit's own writer; ml_dtypes gives the expected values.
"""

import gzip
import json
import os
import subprocess

import ml_dtypes
import numpy as np
import pytest

ZARRKIT = os.environ.get("ZARRKIT_BIN")
if not ZARRKIT:
    pytest.skip("ZARRKIT_BIN is not set (path of the zarrkit binary)", allow_module_level=True)

CHUNKS = (4, 4)


def zk(*args, expect=0):
    proc = subprocess.run([ZARRKIT, *map(str, args)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == expect, f"zarrkit {args}: exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return proc


def bfloat16_sample():
    """6x10 bfloat16 values with the awkward ones: NaN, infinities, -0, the smallest subnormal,
    the largest finite."""
    rng = np.random.default_rng(17)
    a = (rng.standard_normal((6, 10)) * 1000).astype(ml_dtypes.bfloat16)
    special = np.array([np.nan, np.inf, -np.inf, -0.0, 9.2e-41, 3.3895e38], dtype=ml_dtypes.bfloat16)
    a.flat[[0, 7, 13, 22, 41, 59]] = special
    return a


def write_bfloat16_array(path, values, missing=()):
    """A Zarr v3 bfloat16 array: big-endian bytes then gzip, 4x4 chunks (edge chunks padded
    with the fill value), the chunks in `missing` not written (they read as the fill value)."""
    path.mkdir()
    meta = {
        "zarr_format": 3, "node_type": "array", "shape": list(values.shape), "data_type": "bfloat16",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(CHUNKS)}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": 1.5,
        "codecs": [{"name": "bytes", "configuration": {"endian": "big"}}, {"name": "gzip", "configuration": {"level": 1}}],
    }
    (path / "zarr.json").write_text(json.dumps(meta))
    for i in range(-(-values.shape[0] // CHUNKS[0])):
        for j in range(-(-values.shape[1] // CHUNKS[1])):
            if (i, j) in missing:
                continue
            chunk = np.full(CHUNKS, 1.5, dtype=ml_dtypes.bfloat16)
            part = values[i * CHUNKS[0]:(i + 1) * CHUNKS[0], j * CHUNKS[1]:(j + 1) * CHUNKS[1]]
            chunk[:part.shape[0], :part.shape[1]] = part
            big_endian = chunk.view(np.uint16).astype(">u2").tobytes()
            (path / "c" / str(i)).mkdir(parents=True, exist_ok=True)
            (path / "c" / str(i) / str(j)).write_bytes(gzip.compress(big_endian, compresslevel=1))


def same_bits(a, b):
    return a.shape == b.shape and a.view(np.uint16).tobytes() == b.view(np.uint16).tobytes()


@pytest.mark.parametrize("astype", ["float32", "float64"])
def test_bfloat16_as_float_values(tmp_path, astype):
    values = bfloat16_sample()
    write_bfloat16_array(tmp_path / "bf.zarr", values, missing={(1, 2)})
    expected = values.copy()
    expected[4:6, 8:10] = 1.5  # the missing chunk
    zk("export", tmp_path / "bf.zarr", tmp_path / "out.npy", "--astype", astype)
    out = np.load(tmp_path / "out.npy")
    assert out.dtype == np.dtype(astype)
    np.testing.assert_array_equal(out, expected.astype(astype))  # NaN where NaN
    assert np.array_equal(np.signbit(out), np.signbit(expected.astype(astype)))  # -0 stays -0
    assert out.flat[41] > 0 and out.flat[41] == float(values.flat[41])  # the subnormal survives
    # Every bfloat16 is a float32: the conversion back gives the same patterns.
    assert same_bits(out.astype(np.float32).astype(ml_dtypes.bfloat16), expected)


def test_bfloat16_as_float32_of_a_selection(tmp_path):
    values = bfloat16_sample()
    write_bfloat16_array(tmp_path / "bf.zarr", values)
    zk("export", tmp_path / "bf.zarr", tmp_path / "out.npy", "--select", "1:6:2, ::-3", "--astype", "float32")
    np.testing.assert_array_equal(np.load(tmp_path / "out.npy"), values[1:6:2, ::-3].astype(np.float32))


def test_bfloat16_raw_patterns_read_back_with_ml_dtypes(tmp_path):
    values = bfloat16_sample()
    write_bfloat16_array(tmp_path / "bf.zarr", values)
    zk("export", tmp_path / "bf.zarr", tmp_path / "raw.npy", "--astype", "bfloat16")
    raw = np.load(tmp_path / "raw.npy")
    assert raw.dtype == np.dtype("V2") and raw.shape == values.shape
    assert same_bits(raw.view(ml_dtypes.bfloat16), values)
    # The data are the bytes np.save writes for the ml_dtypes array (little-endian patterns).
    np.save(tmp_path / "numpy.npy", values)
    numpy_raw = np.load(tmp_path / "numpy.npy")
    assert numpy_raw.dtype == raw.dtype and numpy_raw.tobytes() == raw.tobytes()


def test_bfloat16_without_astype_names_the_choices(tmp_path):
    write_bfloat16_array(tmp_path / "bf.zarr", bfloat16_sample())
    proc = zk("export", tmp_path / "bf.zarr", tmp_path / "out.npy", expect=2)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("zarrkit: error: bfloat16 has no NumPy .npy type"), proc.stderr
    assert "--astype float32" in lines[0] and "--astype bfloat16" in lines[0]
    assert not (tmp_path / "out.npy").exists()


def test_astype_converts_only_what_npy_cannot_name(tmp_path):
    a = np.arange(24, dtype="<i2").reshape(4, 6)
    np.save(tmp_path / "in.npy", a)
    zk("import", tmp_path / "in.npy", tmp_path / "i.zarr")
    # Naming the array's own type changes nothing.
    zk("export", tmp_path / "i.zarr", tmp_path / "out.npy", "--astype", "int16")
    out = np.load(tmp_path / "out.npy")
    assert out.dtype == np.dtype("<i2")
    np.testing.assert_array_equal(out, a)
    for astype in ["float32", "complex256"]:
        proc = zk("export", tmp_path / "i.zarr", tmp_path / "bad.npy", "--astype", astype, expect=2)
        words = "converts only the types .npy has no name for"
        assert words in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
        assert not (tmp_path / "bad.npy").exists()
    write_bfloat16_array(tmp_path / "bf.zarr", bfloat16_sample())
    proc = zk("export", tmp_path / "bf.zarr", tmp_path / "bad.npy", "--astype", "float16", expect=2)
    assert "not a type export converts bfloat16 to" in proc.stderr
