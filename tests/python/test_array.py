"""zarrkit.Array against NumPy: creation, metadata, reads and writes of basic selections."""

from __future__ import annotations

import numpy as np
import pytest

import zarrkit
from zarrkit.errors import InvalidArgumentError, ReadOnlyError

SELECTIONS = [
    (),
    ...,
    0,
    -1,
    (slice(None), 3),
    (slice(2, 17), slice(5, 30, 3)),
    (slice(None, None, -1), slice(None)),
    (slice(20, 3, -4), slice(None, None, -7)),
    (Ellipsis, 4),
    (5, Ellipsis),
    (slice(-5, None), -2),
    (slice(100, 200), slice(0, 0)),
    (np.int64(3), np.int32(7)),
]


def reference(shape=(23, 41), dtype="i4"):
    return np.arange(np.prod(shape)).reshape(shape).astype(dtype)


@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize("selection", SELECTIONS, ids=repr)
def test_reads_match_numpy(store, zarr_format, selection):
    expected = reference()
    a = zarrkit.create_array(store, name="a", data=expected, chunks=(5, 7), zarr_format=zarr_format)
    np.testing.assert_array_equal(a[selection], expected[selection])
    got = a[selection]
    assert np.asarray(got).dtype == expected.dtype
    assert np.shape(got) == np.shape(expected[selection])


@pytest.mark.parametrize("selection", SELECTIONS, ids=repr)
def test_writes_match_numpy(store, selection):
    expected = np.zeros((23, 41), dtype="f8")
    a = zarrkit.create_array(store, shape=expected.shape, chunks=(4, 9), dtype="f8")
    values = np.random.default_rng(0).random(np.shape(expected[selection]))
    expected[selection] = values
    a[selection] = values
    np.testing.assert_array_equal(a[...], expected)


def test_broadcast_and_scalar_writes(store):
    a = zarrkit.create_array(store, shape=(6, 8), chunks=(4, 4), dtype="u2")
    a[...] = 7
    a[1:3] = np.arange(8, dtype="u2")
    a[:, 2] = [[1]] * 6 if False else np.arange(6)
    expected = np.full((6, 8), 7, dtype="u2")
    expected[1:3] = np.arange(8)
    expected[:, 2] = np.arange(6)
    np.testing.assert_array_equal(a[:], expected)
    assert a[0, 2] == 0 and isinstance(a[0, 2], np.uint16)


@pytest.mark.parametrize(
    "dtype",
    ["b1", "i1", "u1", "i2", "<u4", "i8", "f2", "f4", "f8", "c8", "c16", "S5", "U3", "M8[ns]", "m8[s]"],
)
@pytest.mark.parametrize("zarr_format", [2, 3])
def test_dtypes_round_trip(tmp_path, dtype, zarr_format):
    rng = np.random.default_rng(1)
    raw = rng.integers(0, 100, size=(7, 9))
    if dtype.startswith("S"):
        data = raw.astype("S5")
    elif dtype.startswith("U"):
        data = np.char.add(raw.astype("U2"), "x").astype("U3")
    else:
        data = raw.astype(dtype)
    a = zarrkit.create_array(tmp_path / "a.zarr", data=data, chunks=(3, 4), zarr_format=zarr_format)
    assert a.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(a[:], data)
    b = zarrkit.open_array(tmp_path / "a.zarr", mode="r")
    np.testing.assert_array_equal(b[...], data)


def test_structured_dtype_v2(tmp_path):
    dt = np.dtype([("x", "<i4"), ("y", "<f8"), ("z", "S3", (2,))])
    data = np.zeros(5, dtype=dt)
    data["x"] = np.arange(5)
    data["y"] = np.linspace(0, 1, 5)
    data["z"] = [[b"ab", b"c"]] * 5
    a = zarrkit.create_array(tmp_path / "s.zarr", data=data, chunks=(2,), zarr_format=2)
    assert a.dtype == dt
    np.testing.assert_array_equal(a[:], data)


def test_properties(store):
    a = zarrkit.create_array(
        store,
        name="g/arr",
        shape=(100, 50),
        chunks=(10, 25),
        dtype="f4",
        fill_value=1.5,
        attributes={"units": "m"},
        dimension_names=["y", None],
    )
    assert a.shape == (100, 50)
    assert a.chunks == (10, 25)
    assert a.shards is None
    assert a.ndim == 2 and a.size == 5000 and a.nbytes == 20000 and a.itemsize == 4
    assert a.dtype == np.float32
    assert a.fill_value == np.float32(1.5)
    assert a.path == "g/arr" and a.name == "/g/arr" and a.basename == "arr"
    assert a.zarr_format == 3
    assert a.nchunks == 20 and a.cdata_shape == (10, 2)
    assert a.dimension_names == ("y", None)
    assert dict(a.attrs) == {"units": "m"}
    assert a.metadata["node_type"] == "array"
    assert a.compressors[0]["name"] == "zstd"
    assert a.serializer["name"] == "bytes"
    assert len(a) == 100
    np.testing.assert_array_equal(a[:2, :2], np.full((2, 2), 1.5, dtype="f4"))
    assert a.nchunks_initialized == 0
    a[:10, :25] = 3
    assert a.nchunks_initialized == 1
    text = repr(a.info)
    assert "Shape" in text and "(100, 50)" in text and "Compressors" in text
    complete = repr(a.info_complete())
    assert "Chunks Initialized" in complete and "1 / 20" in complete


def test_sharded_array(store):
    data = reference((40, 30), "i2")
    a = zarrkit.create_array(store, name="s", data=data, chunks=(5, 5), shards=(20, 15))
    assert a.chunks == (5, 5)
    assert a.shards == (20, 15)
    assert a.nchunks == 4
    np.testing.assert_array_equal(a[3:37, ::4], data[3:37, ::4])
    a[0, 0] = -1
    assert a[0, 0] == -1


def test_shards_must_be_multiples_of_chunks(store):
    with pytest.raises(InvalidArgumentError, match="multiple of the chunk shape"):
        zarrkit.create_array(store, shape=(10,), chunks=(3,), shards=(10,), dtype="u1")


@pytest.mark.parametrize(
    "compressors",
    [
        None,
        {"name": "gzip", "configuration": {"level": 3}},
        [{"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 4}}],
        "zstd",
        {"id": "zlib", "level": 1},
    ],
)
def test_v3_compressors(store, compressors):
    data = reference((30, 30), "i4")
    a = zarrkit.create_array(store, data=data, chunks=(8, 8), compressors=compressors)
    np.testing.assert_array_equal(a[:], data)


def test_v3_codec_objects_from_zarr_python(tmp_path):
    zarr = pytest.importorskip("zarr")
    data = reference((30, 30), "f8")
    a = zarrkit.create_array(
        tmp_path / "c.zarr",
        data=data,
        chunks=(8, 8),
        filters=[zarr.codecs.TransposeCodec(order=(1, 0))],
        serializer=zarr.codecs.BytesCodec(endian="big"),
        compressors=[zarr.codecs.BloscCodec(cname="zstd", clevel=3), zarr.codecs.Crc32cCodec()],
    )
    np.testing.assert_array_equal(a[:], data)
    # zarr-python reads what zarrkit wrote.
    z = zarr.open_array(tmp_path / "c.zarr", mode="r")
    np.testing.assert_array_equal(z[:], data)


def test_v2_compressor_and_filters(tmp_path):
    numcodecs = pytest.importorskip("numcodecs")
    zarr = pytest.importorskip("zarr")
    data = reference((20, 20), "i8")
    a = zarrkit.create_array(
        tmp_path / "v2.zarr",
        data=data,
        chunks=(6, 6),
        zarr_format=2,
        compressors=numcodecs.Blosc(cname="lz4", clevel=5, shuffle=numcodecs.Blosc.BITSHUFFLE),
        filters=[numcodecs.Delta(dtype="<i8")],
        order="F",
    )
    assert a.order == "F"
    assert a.compressors[0]["id"] == "blosc"
    np.testing.assert_array_equal(a[:], data)
    z = zarr.open_array(tmp_path / "v2.zarr", mode="r")
    np.testing.assert_array_equal(z[:], data)
    # A v3 codec given for a v2 array becomes its numcodecs form.
    b = zarrkit.create_array(tmp_path / "v2b.zarr", data=data, zarr_format=2, compressors={"name": "gzip", "configuration": {"level": 2}})
    assert b.compressors == ({"id": "gzip", "level": 2},)


def test_reads_zarr_python_data(tmp_path):
    zarr = pytest.importorskip("zarr")
    data = reference((33, 17), "u4")
    z = zarr.create_array(tmp_path / "z.zarr", shape=data.shape, chunks=(10, 5), dtype="u4", fill_value=9)
    z[:20] = data[:20]
    a = zarrkit.open_array(tmp_path / "z.zarr", mode="r")
    expected = data.copy()
    expected[20:] = 9
    np.testing.assert_array_equal(a[:], expected)
    assert a.fill_value == 9


def test_v2_null_fill_value(tmp_path):
    a = zarrkit.create_array(tmp_path / "n.zarr", shape=(4,), dtype="f8", zarr_format=2, fill_value=None)
    assert a.fill_value is None
    assert a.metadata["fill_value"] is None
    np.testing.assert_array_equal(a[:], np.zeros(4))


def test_out_argument(store):
    data = reference((10, 12), "f4")
    a = zarrkit.create_array(store, data=data, chunks=(3, 5))
    out = np.empty((12, 10), dtype="f4").T  # F-ordered view
    result = a.get_basic_selection(..., out=out)
    assert result is out
    np.testing.assert_array_equal(out, data)
    with pytest.raises(ValueError, match="selection needs"):
        a.get_basic_selection(0, out=np.empty(3, dtype="f4"))


def test_array_protocol(store):
    data = reference((5, 6), "i2")
    a = zarrkit.create_array(store, data=data)
    np.testing.assert_array_equal(np.asarray(a), data)
    assert np.asarray(a, dtype="f8").dtype == np.float64
    assert np.array(a).sum() == data.sum()
    rows = list(a)
    assert len(rows) == 5
    np.testing.assert_array_equal(rows[2], data[2])


def test_bad_indices(store):
    a = zarrkit.create_array(store, shape=(4, 5), dtype="u1")
    with pytest.raises(IndexError, match="out of bounds"):
        a[4]
    with pytest.raises(IndexError, match="out of bounds"):
        a[0, -6]
    with pytest.raises(IndexError, match="too many indices"):
        a[0, 0, 0]
    with pytest.raises(IndexError, match="single ellipsis"):
        a[..., ...]
    with pytest.raises(IndexError):
        a[None]
    with pytest.raises(IndexError):
        a[True]
    with pytest.raises(ValueError, match="step"):
        a[::0]


def test_read_only(tmp_path):
    zarrkit.create_array(tmp_path / "r.zarr", shape=(3,), dtype="i4")
    a = zarrkit.open_array(tmp_path / "r.zarr", mode="r")
    assert a.read_only
    with pytest.raises(ReadOnlyError):
        a[0] = 1
    with pytest.raises(ReadOnlyError):
        a.attrs["x"] = 1
    with pytest.raises(ValueError):  # ReadOnlyError is a ValueError
        a[:] = 2


def test_write_value_of_wrong_type(store):
    a = zarrkit.create_array(store, shape=(3,), dtype="i4")
    with pytest.raises(ValueError):
        a[:] = ["a", "b", "c"]
    with pytest.raises(ValueError):
        a[:] = np.zeros(4)


def test_config_write_empty_chunks_per_array(store):
    a = zarrkit.create_array(store, name="w", shape=(8,), chunks=(4,), dtype="i4", config={"write_empty_chunks": True})
    a[:] = 0
    assert a.nchunks_initialized == 2
    b = zarrkit.create_array(store, name="x", shape=(8,), chunks=(4,), dtype="i4")
    b[:] = 0
    assert b.nchunks_initialized == 0


def test_zero_dimensional(store):
    a = zarrkit.create_array(store, shape=(), dtype="f8", fill_value=2.5)
    assert a[()] == 2.5
    a[()] = 4.0
    assert a[...] == 4.0
    assert a.shape == () and a.size == 1


def test_bfloat16(tmp_path):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    data = np.linspace(0, 1, 12, dtype=np.float32).astype(ml_dtypes.bfloat16)
    a = zarrkit.create_array(tmp_path / "bf.zarr", data=data, chunks=(5,))
    assert a.dtype == np.dtype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(a[:].astype("f4"), data.astype("f4"))
