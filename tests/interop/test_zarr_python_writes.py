"""zarr-python 3 writes, zarrkit reads: every array here is written by zarr-python, exported
by `zarrkit export` to .npy, and must equal what zarr-python itself reads back, value for value.

Arrays are tiny (a few dozen elements) with ragged edge chunks, and most are only partly
written, so that some chunks are missing (read as the fill value) and some are partly filled.
"""

import json
import math

import numcodecs
import numpy as np
import pytest
import zarr
import zarr.codecs.numcodecs as numcodecs_v3
from zarr.codecs import (BloscCodec, BytesCodec, Crc32cCodec, GzipCodec, ShardingCodec,
                         TransposeCodec, ZstdCodec)

from zk_interop import (CORE_DTYPES, V2_ONLY_DTYPES, assert_same_array, nonzero_fill,
                        sample_values, smooth_values, v2_metadata, v3_metadata)

SHAPE = (7, 5)
CHUNKS = (3, 2)  # 3x3 chunks; the last row and column of chunks overhang the array
# Written region: touches chunks (0..1, 0..1) only, and only part of some of them, so chunk
# row 2 and chunk column 2 are never written (missing: the fill value).
PARTIAL = (slice(1, 5), slice(0, 3))
EVERYTHING = (Ellipsis,)


def zarr_python_write(path, values, *, zarr_format, chunks=CHUNKS, region=PARTIAL, **create_args):
    """Creates an array with zarr-python, writes VALUES[REGION] into it, and returns what
    zarr-python reads back: the reference that zarrkit must match."""
    array = zarr.create_array(store=str(path), shape=values.shape, dtype=values.dtype,
                              chunks=chunks, zarr_format=zarr_format, **create_args)
    if values.ndim == 0 or region == EVERYTHING:
        array[...] = values
    else:
        array[region] = values[region]
    return array[...]


# ---- every data type ------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", CORE_DTYPES)
def test_v3_every_dtype(tmp_path, zarrkit, dtype):
    values = sample_values(dtype, SHAPE)
    expected = zarr_python_write(tmp_path / "a", values, zarr_format=3,
                                 fill_value=nonzero_fill(dtype))
    assert_same_array(zarrkit.export(tmp_path / "a"), expected)


@pytest.mark.parametrize("dtype", CORE_DTYPES + list(V2_ONLY_DTYPES))
def test_v2_every_dtype(tmp_path, zarrkit, dtype):
    dtype = V2_ONLY_DTYPES.get(dtype, dtype)
    values = sample_values(dtype, SHAPE)
    expected = zarr_python_write(tmp_path / "a", values, zarr_format=2,
                                 fill_value=nonzero_fill(dtype))
    stored_dtype = v2_metadata(tmp_path / "a")["dtype"]
    if np.dtype(dtype).fields is None:
        assert stored_dtype == np.dtype(dtype).str
    else:
        assert stored_dtype == [list(field) for field in np.dtype(dtype).descr]
    assert_same_array(zarrkit.export(tmp_path / "a"), expected)


@pytest.mark.parametrize("dtype", CORE_DTYPES)
def test_v2_every_dtype_zero_fill_fully_written(tmp_path, zarrkit, dtype):
    values = sample_values(dtype, SHAPE, seed=7)
    expected = zarr_python_write(tmp_path / "a", values, zarr_format=2, fill_value=0,
                                 region=EVERYTHING)
    assert_same_array(zarrkit.export(tmp_path / "a"), expected)


@pytest.mark.parametrize("dtype", ["int16", "uint32", "int64", "float32", "float64",
                                   "complex64", "complex128"])
def test_v3_big_endian_bytes_codec(tmp_path, zarrkit, dtype):
    values = sample_values(dtype, SHAPE, seed=3)
    expected = zarr_python_write(tmp_path / "a", values, zarr_format=3,
                                 serializer=BytesCodec(endian="big"), fill_value=nonzero_fill(dtype))
    assert v3_metadata(tmp_path / "a")["codecs"][0] == {"name": "bytes",
                                                        "configuration": {"endian": "big"}}
    assert_same_array(zarrkit.export(tmp_path / "a"), expected)


# ---- every compressor ------------------------------------------------------------------------

BLOSC_CNAMES = ["lz4", "lz4hc", "blosclz", "zstd", "zlib"]
BLOSC_SHUFFLES = ["noshuffle", "shuffle", "bitshuffle"]

# Factories, so that the codecs are made inside the tests (where zarr-python's warning that
# numcodecs.* codecs are not in the v3 spec is filtered).
V3_CODECS = {
    "none": lambda: dict(compressors=None),
    "gzip": lambda: dict(compressors=[GzipCodec(level=5)]),
    "zstd": lambda: dict(compressors=[ZstdCodec(level=3)]),
    "zstd-checksum": lambda: dict(compressors=[ZstdCodec(level=-2, checksum=True)]),
    "crc32c": lambda: dict(compressors=[Crc32cCodec()]),
    "zstd+crc32c": lambda: dict(compressors=[ZstdCodec(level=1), Crc32cCodec()]),
    "gzip+zstd": lambda: dict(compressors=[GzipCodec(level=1), ZstdCodec(level=1)]),
    "numcodecs.zlib": lambda: dict(compressors=[numcodecs_v3.Zlib(level=1)]),
    "numcodecs.bz2": lambda: dict(compressors=[numcodecs_v3.BZ2(level=9)]),
    "numcodecs.lzma": lambda: dict(compressors=[numcodecs_v3.LZMA()]),
    "numcodecs.lz4": lambda: dict(compressors=[numcodecs_v3.LZ4()]),
    **{f"blosc-{cname}-{shuffle}": (lambda cname=cname, shuffle=shuffle: dict(
        compressors=[BloscCodec(cname=cname, clevel=5, shuffle=shuffle)]))
       for cname in BLOSC_CNAMES for shuffle in BLOSC_SHUFFLES},
}

V2_COMPRESSORS = {
    "none": None,
    "gzip": numcodecs.GZip(level=5),
    "zstd": numcodecs.Zstd(level=3),
    "zlib": numcodecs.Zlib(level=1),
    "bz2": numcodecs.BZ2(level=9),
    "lzma": numcodecs.LZMA(),
    "lz4": numcodecs.LZ4(),
    **{f"blosc-{cname}-{shuffle}": numcodecs.Blosc(cname=cname, clevel=5, shuffle=number)
       for cname in BLOSC_CNAMES
       for number, shuffle in enumerate(BLOSC_SHUFFLES)},
}

# (dtype, values): compressible integers, and incompressible floats with NaN/inf/-0.0 (blosc
# stores those "memcpyed", a different path through its decoder).
VALUE_KINDS = {
    "smooth-int32": lambda: smooth_values("int32", SHAPE),
    "random-float64": lambda: sample_values("float64", SHAPE, seed=11),
}


@pytest.mark.parametrize("values", VALUE_KINDS)
@pytest.mark.parametrize("codec", V3_CODECS)
def test_v3_codec(tmp_path, zarrkit, codec, values):
    values = VALUE_KINDS[values]()
    expected = zarr_python_write(tmp_path / "a", values, zarr_format=3, fill_value=0,
                                 **V3_CODECS[codec]())
    assert_same_array(zarrkit.export(tmp_path / "a"), expected)


@pytest.mark.parametrize("values", VALUE_KINDS)
@pytest.mark.parametrize("codec", V2_COMPRESSORS)
def test_v2_compressor(tmp_path, zarrkit, codec, values):
    values = VALUE_KINDS[values]()
    expected = zarr_python_write(tmp_path / "a", values, zarr_format=2, fill_value=0,
                                 compressors=V2_COMPRESSORS[codec])
    compressor = v2_metadata(tmp_path / "a")["compressor"]
    assert (compressor is None) == (codec == "none")
    assert_same_array(zarrkit.export(tmp_path / "a"), expected)


@pytest.mark.parametrize("order", [(1, 0, 2), (2, 0, 1), (2, 1, 0)])
def test_v3_transpose(tmp_path, zarrkit, order):
    values = sample_values("int32", (5, 4, 3), seed=5)
    expected = zarr_python_write(tmp_path / "a", values, zarr_format=3, chunks=(2, 3, 2),
                                 region=(slice(0, 3), slice(1, 4), slice(None)),
                                 filters=[TransposeCodec(order=order)], fill_value=-1)
    assert_same_array(zarrkit.export(tmp_path / "a"), expected)


@pytest.mark.parametrize("layout", ["shards", "index-start-gzip", "nested-compressor"])
def test_v3_sharding(tmp_path, zarrkit, layout):
    values = sample_values("uint16", (9, 8), seed=2)
    if layout == "shards":  # zarr-python's own: index at the end, crc32c on the index
        args = dict(chunks=(2, 2), shards=(4, 4), compressors=[ZstdCodec(level=1)])
    elif layout == "index-start-gzip":
        args = dict(chunks=(4, 6), compressors=None, serializer=ShardingCodec(
            chunk_shape=(2, 3), codecs=[BytesCodec(), GzipCodec(level=1)],
            index_codecs=[BytesCodec()], index_location="start"))
    else:  # a bytes->bytes codec on the whole shard, after sharding
        args = dict(chunks=(6, 6), compressors=[Crc32cCodec()], serializer=ShardingCodec(
            chunk_shape=(3, 2), codecs=[TransposeCodec(order=(1, 0)), BytesCodec(endian="big"),
                                        ZstdCodec(level=1)]))
    # Writes inner chunks partly: some inner chunks and some whole shards stay missing.
    expected = zarr_python_write(tmp_path / "a", values, zarr_format=3, fill_value=7,
                                 region=(slice(1, 5), slice(0, 5)), **args)
    assert_same_array(zarrkit.export(tmp_path / "a"), expected)


# ---- fill values -----------------------------------------------------------------------------

FLOAT_FILLS = {"zero": 0.0, "nonzero": 2.5, "NaN": math.nan, "inf": math.inf, "-inf": -math.inf,
               "negative-zero": -0.0}


@pytest.mark.parametrize("fill", FLOAT_FILLS)
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("zarr_format", [2, 3])
def test_float_fill_value(tmp_path, zarrkit, zarr_format, dtype, fill):
    values = sample_values(dtype, SHAPE, seed=4)
    expected = zarr_python_write(tmp_path / "a", values, zarr_format=zarr_format,
                                 fill_value=FLOAT_FILLS[fill])
    exported = zarrkit.export(tmp_path / "a")
    assert_same_array(exported, expected)
    # -0.0 == 0.0, so check the sign of the fill where it was not written.
    assert np.signbit(exported[6, 4]) == np.signbit(expected[6, 4])


@pytest.mark.parametrize("fill", [complex(math.nan, math.inf), complex(-math.inf, 0.5),
                                  complex(0, -0.0)], ids=["nan,inf", "-inf,0.5", "0,-0"])
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("zarr_format", [2, 3])
def test_complex_fill_value(tmp_path, zarrkit, zarr_format, dtype, fill):
    values = sample_values(dtype, SHAPE, seed=4)
    expected = zarr_python_write(tmp_path / "a", values, zarr_format=zarr_format, fill_value=fill)
    assert_same_array(zarrkit.export(tmp_path / "a"), expected)


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint64", "float32", "complex128", ">i4",
                                   "<M8[ns]"])
def test_v2_null_fill_value(tmp_path, zarrkit, dtype):
    """v2 allows `fill_value: null`: missing chunks then read as zeros in zarr-python."""
    values = sample_values(dtype, SHAPE, seed=6)
    expected = zarr_python_write(tmp_path / "a", values, zarr_format=2, fill_value=None)
    assert v2_metadata(tmp_path / "a")["fill_value"] is None
    assert_same_array(zarrkit.export(tmp_path / "a"), expected)


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_never_written_array_is_all_fill(tmp_path, zarrkit, zarr_format):
    values = np.zeros(SHAPE, dtype="int16")
    zarr.create_array(store=str(tmp_path / "a"), shape=SHAPE, dtype="int16", chunks=CHUNKS,
                      zarr_format=zarr_format, fill_value=-1234)
    expected = np.full_like(values, -1234)
    assert_same_array(zarrkit.export(tmp_path / "a"), expected)


# ---- layout: v2 order, chunk key separators, shapes ------------------------------------------

@pytest.mark.parametrize("dtype", ["int16", ">f8", "<U5", "complex64"])
@pytest.mark.parametrize("separator", ["/", "."])
@pytest.mark.parametrize("order", ["C", "F"])
def test_v2_order_and_separator(tmp_path, zarrkit, order, separator, dtype):
    values = sample_values(dtype, (5, 4, 3), seed=8)
    expected = zarr_python_write(
        tmp_path / "a", values, zarr_format=2, chunks=(2, 3, 2), order=order,
        chunk_key_encoding={"name": "v2", "separator": separator},
        region=(slice(0, 3), slice(1, 4), slice(None)), fill_value=nonzero_fill(dtype))
    metadata = v2_metadata(tmp_path / "a")
    assert metadata["order"] == order
    assert metadata.get("dimension_separator", ".") == separator
    assert_same_array(zarrkit.export(tmp_path / "a"), expected)


@pytest.mark.parametrize("encoding", [{"name": "default", "separator": "/"},
                                      {"name": "default", "separator": "."},
                                      {"name": "v2", "separator": "."},
                                      {"name": "v2", "separator": "/"}],
                         ids=["default/", "default.", "v2.", "v2/"])
def test_v3_chunk_key_encoding(tmp_path, zarrkit, encoding):
    values = sample_values("float32", (5, 4, 3), seed=9)
    expected = zarr_python_write(tmp_path / "a", values, zarr_format=3, chunks=(2, 3, 2),
                                 chunk_key_encoding=encoding,
                                 region=(slice(0, 3), slice(1, 4), slice(None)), fill_value=0.5)
    assert_same_array(zarrkit.export(tmp_path / "a"), expected)


SHAPES = {
    "0-d": ((), ()),
    "1-d": ((13,), (4,)),
    "one-element": ((1,), (1,)),
    "empty": ((0,), (3,)),
    "empty-2d": ((3, 0), (2, 2)),
    "chunk-larger-than-array": ((3, 4), (10, 10)),
    "chunk-of-one": ((3, 4), (1, 1)),
    "4-d": ((2, 3, 4, 5), (1, 2, 3, 2)),
}


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("zarr_format", [2, 3])
def test_shapes(tmp_path, zarrkit, zarr_format, shape):
    shape, chunks = SHAPES[shape]
    values = sample_values("int32", shape, seed=10)
    expected = zarr_python_write(tmp_path / "a", values, zarr_format=zarr_format, chunks=chunks,
                                 region=EVERYTHING, fill_value=3)
    assert_same_array(zarrkit.export(tmp_path / "a"), expected)


# ---- selections, groups, info ----------------------------------------------------------------

SELECTIONS = {
    "3": (3,),
    "0:10": (slice(0, 10),),
    "::2": (slice(None, None, 2),),
    "...": (Ellipsis,),
    "-1": (-1,),
    "1:6:2,::3": (slice(1, 6, 2), slice(None, None, 3)),
    "...,-1": (Ellipsis, -1),
    "2,1:4": (2, slice(1, 4)),
    "-3:,4": (slice(-3, None), 4),
    "5:2": (slice(5, 2),),
    "-1,-1": (-1, -1),
}


@pytest.mark.parametrize("select", SELECTIONS)
@pytest.mark.parametrize("zarr_format", [2, 3])
def test_export_select(tmp_path, zarrkit, zarr_format, select):
    values = sample_values("int64", SHAPE, seed=12)
    full = zarr_python_write(tmp_path / "a", values, zarr_format=zarr_format, fill_value=-9)
    expected = np.asarray(full[SELECTIONS[select]])
    assert_same_array(zarrkit.export(tmp_path / "a", select=select), expected)


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_array_inside_group(tmp_path, zarrkit, zarr_format):
    root = zarr.open_group(str(tmp_path / "g"), mode="w", zarr_format=zarr_format)
    root.attrs["title"] = "interop"
    sub = root.create_group("sub")
    array = sub.create_array("values", shape=SHAPE, chunks=CHUNKS, dtype="float64",
                             fill_value=math.nan)
    values = sample_values("float64", SHAPE, seed=13)
    array[PARTIAL] = values[PARTIAL]
    assert_same_array(zarrkit.export(tmp_path / "g" / "sub" / "values"), array[...])


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_info_json_is_the_stored_metadata(tmp_path, zarrkit, zarr_format):
    values = sample_values("uint16", SHAPE)
    array = zarr.create_array(store=str(tmp_path / "a"), shape=SHAPE, chunks=CHUNKS,
                              dtype="uint16", zarr_format=zarr_format, fill_value=5,
                              attributes={"units": "K"})
    array[...] = values
    result = zarrkit.run("info", tmp_path / "a", "--json")
    printed = json.loads(result.stdout)
    # Either the document itself, or the documents keyed by their store key.
    key = "zarr.json" if zarr_format == 3 else ".zarray"
    stored = v3_metadata(tmp_path / "a") if zarr_format == 3 else v2_metadata(tmp_path / "a")
    assert printed.get(key, printed) == stored
    if zarr_format == 2 and ".zattrs" in printed:
        assert printed[".zattrs"] == {"units": "K"}
    readable = zarrkit.run("info", tmp_path / "a").stdout
    for fact in ["7", "5", "3", "2", "uint16"]:
        assert fact in readable.replace("<u2", "uint16"), f"{fact!r} missing from:\n{readable}"
