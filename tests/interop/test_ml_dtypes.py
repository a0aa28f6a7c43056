"""The zarr-extensions ML data types with tensorstore, both ways, on the same files.

tensorstore (the pinned release) writes float8_e3m4, float8_e4m3fn, float8_e4m3fnuz,
float8_e4m3b11fnuz, float8_e5m2, float8_e5m2fnuz, float8_e8m0fnu, float4_e2m1fn, int2 and
int4; zarrkit reads what it writes and writes what it reads back bit for bit, and its
uncompressed chunks are byte-identical to tensorstore's. The other zarr-extensions types
(float8_e4m3, float6_e2m3fn, float6_e3m2fn, uint2, uint4) have no writer here but zarrkit
itself; they go through the CLI (import --dtype, export, cp) and read back equal.

.npy has no ML types: NumPy saves them as raw bytes (|V1), so `zarrkit export --astype NAME`
writes |V1 (`--astype float32` the values) and `zarrkit import --dtype NAME` reads it.
"""

import math

import ml_dtypes
import numpy as np
import pytest
import tensorstore as ts

from zk_interop import v3_metadata

SHAPE = (11, 9)
CHUNKS = (4, 5)
TENSORSTORE_TYPES = ["float8_e3m4", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e4m3b11fnuz", "float8_e5m2",
                     "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn", "int2", "int4"]
ZARRKIT_ONLY_TYPES = ["float8_e4m3", "float6_e2m3fn", "float6_e3m2fn", "uint2", "uint4"]
# tensorstore 0.1.86 turns a float8_e8m0fnu fill value of 1.0 into the pattern 0x3f (2^-64),
# where the format (and ml_dtypes) give 0x7f; its stored values agree with ml_dtypes. So for
# that type the tests store every chunk and never ask tensorstore for its fill value.
TS_FILL_MISREAD = {"float8_e8m0fnu"}
VALUE_BITS = {"float6_e2m3fn": 6, "float6_e3m2fn": 6, "float4_e2m1fn": 4, "int2": 2, "uint2": 2, "int4": 4, "uint4": 4}


def values_of(name, seed=18):
    """Every bit pattern of the type first (NaNs, infinities, -0, subnormals), then random
    ones; the last chunk row is all fill value (not stored)."""
    rng = np.random.default_rng(seed)
    every = np.arange(1 << VALUE_BITS.get(name, 8), dtype=np.uint8)
    flat = np.concatenate([every, rng.choice(every, size=math.prod(SHAPE))])[: math.prod(SHAPE)]
    values = flat.reshape(SHAPE).view(getattr(ml_dtypes, name)).copy()
    values[8:, :] = fill_of(name)
    return values


def fill_of(name):
    return np.array([0.5 if name.startswith("float") and name != "float8_e8m0fnu" else 1]).astype(getattr(ml_dtypes, name))[0]


def as_bits(a):
    return np.asarray(a).view(np.uint8)


def ts_spec(path, name=None, codecs=None, fill=None):
    spec = {"driver": "zarr3", "kvstore": {"driver": "file", "path": str(path)}}
    if name is not None:
        spec["metadata"] = {"shape": list(SHAPE), "data_type": name, "fill_value": float(fill) if name.startswith("float") else int(fill),
                            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(CHUNKS)}},
                            "codecs": codecs}
    return spec


def ts_write(path, name, values, codecs):
    array = ts.open(ts_spec(path, name, codecs, fill_of(name)), create=True, delete_existing=True).result()
    array.write(values).result()


def ts_read(path):
    return ts.open(ts_spec(path)).result().read().result()


def chunk_files(path):
    return {p.relative_to(path).as_posix(): p.read_bytes() for p in path.rglob("*") if p.is_file()
            and p.name != "zarr.json"}


BYTES = {"name": "bytes"}
ZSTD = {"name": "zstd", "configuration": {"level": 1}}


@pytest.mark.parametrize("name", TENSORSTORE_TYPES)
@pytest.mark.parametrize("codecs", [[BYTES], [BYTES, ZSTD]], ids=["raw", "zstd"])
def test_tensorstore_writes_zarrkit_reads_and_copies_back(tmp_path, zarrkit, name, codecs):
    values = values_of(name)
    ts_write(tmp_path / "ts.zarr", name, values, codecs)
    info = zarrkit.run("info", tmp_path / "ts.zarr").stdout
    assert name in info
    np.testing.assert_array_equal(as_bits(zarrkit.export(tmp_path / "ts.zarr", astype=name)), as_bits(values))
    np.testing.assert_array_equal(as_bits(zarrkit.export(tmp_path / "ts.zarr", select="1:9:2,::-3", astype=name)),
                                  as_bits(values[1:9:2, ::-3]))
    np.testing.assert_array_equal(zarrkit.export(tmp_path / "ts.zarr", astype="float32"), values.astype(np.float32))
    every_chunk = ["--write-empty-chunks"] if name in TS_FILL_MISREAD else []
    zarrkit.run("cp", tmp_path / "ts.zarr", tmp_path / "copy.zarr", "--codec", "none", *every_chunk)
    ours, theirs = v3_metadata(tmp_path / "copy.zarr"), v3_metadata(tmp_path / "ts.zarr")
    assert ours["data_type"] == theirs["data_type"] == name
    assert ours["fill_value"] == theirs["fill_value"]
    back = ts_read(tmp_path / "copy.zarr")
    assert back.dtype == getattr(ml_dtypes, name)
    np.testing.assert_array_equal(as_bits(back), as_bits(values))
    if codecs == [BYTES] and name not in TS_FILL_MISREAD:
        assert chunk_files(tmp_path / "copy.zarr") == chunk_files(tmp_path / "ts.zarr"), (
            f"zarrkit's {name} chunks differ from tensorstore's")


@pytest.mark.parametrize("name", TENSORSTORE_TYPES)
def test_zarrkit_imports_tensorstore_reads(tmp_path, zarrkit, name):
    values = values_of(name, seed=5)
    # numpy.save of an ml_dtypes array writes raw bytes (|V1), which --dtype names.
    every_chunk = ["--write-empty-chunks"] if name in TS_FILL_MISREAD else []
    zarrkit.import_npy(values, tmp_path / "zk.zarr", "--dtype", name, "--chunks", "4,5", *every_chunk,
                       "--fill-value", str(float(fill_of(name)) if name.startswith("float") else int(fill_of(name))))
    metadata = v3_metadata(tmp_path / "zk.zarr")
    assert metadata["data_type"] == name
    back = ts_read(tmp_path / "zk.zarr")
    assert back.dtype == getattr(ml_dtypes, name)
    np.testing.assert_array_equal(as_bits(back), as_bits(values))
    if name not in TS_FILL_MISREAD:  # missing chunks read as the fill value in both
        assert not (tmp_path / "zk.zarr" / "c" / "2" / "0").exists()
        assert as_bits(back[9, 0]) == as_bits(fill_of(name))


@pytest.mark.parametrize("name", ["int4", "int2", "float4_e2m1fn"])
def test_stored_high_bits_are_ignored(tmp_path, zarrkit, name):
    """The extension pages: the bits above a sub-byte value are ignored when reading. zarrkit
    clears them. tensorstore hands the stored byte through; for the integers its values are
    still the same numbers (ml_dtypes ignores those bits), while ml_dtypes' float4_e2m1fn
    takes the byte's top bit as the sign, so there they differ."""
    values = values_of(name)
    ts_write(tmp_path / "ts.zarr", name, values, [BYTES])
    key = tmp_path / "ts.zarr" / "c" / "0" / "0"
    stored = np.frombuffer(key.read_bytes(), dtype=np.uint8)
    noisy = stored | np.uint8(0xF0 if VALUE_BITS[name] == 4 else 0xA8)
    key.write_bytes(noisy.tobytes())
    np.testing.assert_array_equal(as_bits(zarrkit.export(tmp_path / "ts.zarr", astype=name)), as_bits(values))
    if name != "float4_e2m1fn":
        np.testing.assert_array_equal(ts_read(tmp_path / "ts.zarr").astype(np.float32), values.astype(np.float32))


@pytest.mark.parametrize("name", ZARRKIT_ONLY_TYPES)
def test_types_without_a_second_writer_round_trip_through_the_cli(tmp_path, zarrkit, name):
    values = values_of(name, seed=9)
    zarrkit.import_npy(values, tmp_path / "a.zarr", "--dtype", name, "--chunks", "4,5", "--codec", "zstd:level=1")
    assert name in zarrkit.run("info", tmp_path / "a.zarr").stdout
    zarrkit.run("cp", tmp_path / "a.zarr", tmp_path / "b.zarr", "--chunks", "3,3", "--shards", "6,9")
    for path in ("a.zarr", "b.zarr"):
        exported = zarrkit.export(tmp_path / path, astype=name)
        assert exported.dtype == np.dtype("V1")
        np.testing.assert_array_equal(zarrkit.export(tmp_path / path, astype="float64"), values.astype(np.float64))
        np.testing.assert_array_equal(as_bits(exported), as_bits(values))


def test_export_needs_astype(tmp_path, zarrkit):
    zarrkit.import_npy(values_of("int4"), tmp_path / "a.zarr", "--dtype", "int4")
    error = zarrkit.expect_error("export", tmp_path / "a.zarr", tmp_path / "out.npy", exit_code=2)
    assert "--astype float32" in error and "--astype int4" in error
    assert not (tmp_path / "out.npy").exists()


def test_import_refuses_bytes_that_are_not_values(tmp_path, zarrkit):
    raw = np.array([0x01, 0x1F], dtype=np.uint8)
    error = zarrkit.expect_error("import", _save(tmp_path, raw), tmp_path / "x.zarr", "--dtype", "uint4")
    assert "0x1f" in error and "uint4" in error
    error = zarrkit.expect_error("import", _save(tmp_path, raw), tmp_path / "y.zarr", "--dtype", "float16", exit_code=2)
    assert "--dtype float16" in error
    error = zarrkit.expect_error("import", _save(tmp_path, raw), tmp_path / "z.zarr", "--dtype", "float8_e4m3FN",
                                 exit_code=2)
    assert "float8_e4m3FN" in error
    # numpy.save writes float8_e5m2 (alone of these types) as '<f1': only --dtype says what it is.
    error = zarrkit.expect_error("import", _save(tmp_path, raw.view(ml_dtypes.float8_e5m2)), tmp_path / "w.zarr",
                                 exit_code=2)
    assert "--dtype" in error and "<f1" in error
    assert not list(tmp_path.rglob("zarr.json")), "a failed import left an array behind"


@pytest.mark.parametrize("name", ["float8_e4m3fn", "float8_e5m2fnuz", "float4_e2m1fn", "int4", "int2"])
def test_v2_with_tensorstore_both_ways(tmp_path, zarrkit, name):
    """tensorstore's zarr (v2) driver names these types in "dtype"; zarrkit does the same.
    (Its float4_e2m1fn fill value is Base64 of the byte, which zarrkit reads and writes.)"""
    values = values_of(name, seed=4)
    fill = (float(fill_of(name)) if name.startswith("float") else int(fill_of(name))) if name != "float4_e2m1fn" else "AQ=="
    written = ts.open({"driver": "zarr", "kvstore": {"driver": "file", "path": str(tmp_path / "ts2")},
                       "metadata": {"shape": list(SHAPE), "chunks": list(CHUNKS), "dtype": name, "fill_value": fill,
                                    "compressor": {"id": "zstd", "level": 1}}},
                      create=True).result()
    written[...] = values
    np.testing.assert_array_equal(as_bits(zarrkit.export(tmp_path / "ts2", astype=name)), as_bits(values))
    zarrkit.run("cp", tmp_path / "ts2", tmp_path / "zk2")
    zarray = (tmp_path / "zk2" / ".zarray").read_text()
    assert f'"dtype": "{name}"' in zarray.replace('":"', '": "')
    back = ts.open({"driver": "zarr", "kvstore": {"driver": "file", "path": str(tmp_path / "zk2")}}).result()
    np.testing.assert_array_equal(as_bits(back.read().result()), as_bits(values))


def _save(tmp_path, array):
    path = tmp_path / f"in-{array.dtype}-{array.size}.npy"
    np.save(path, array)
    return path
