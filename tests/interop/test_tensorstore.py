"""tensorstore <-> zarrkit: arrays that tensorstore writes (zarr3 driver, and the v2 `zarr`
driver) must export from zarrkit with the same values that tensorstore reads, and arrays that
zarrkit writes must read in tensorstore with the values that were imported."""

import math

import numpy as np
import pytest
import tensorstore as ts

from zk_interop import CORE_DTYPES, assert_same_array, nonzero_fill, sample_values

SHAPE = [7, 5]
CHUNKS = [3, 2]  # ragged edges
PARTIAL = (slice(1, 5), slice(0, 3))  # leaves chunk row 2 and chunk column 2 missing


def json_fill(value):
    """A fill value as Zarr metadata JSON (tensorstore takes the same form)."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, complex):
        return [json_fill(value.real), json_fill(value.imag)]
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
    return value


def tensorstore_write(path, driver, metadata, values, region=PARTIAL) -> np.ndarray:
    """Creates an array with tensorstore, writes VALUES[REGION], returns what tensorstore reads."""
    store = ts.open({"driver": driver, "kvstore": {"driver": "file", "path": str(path)},
                     "metadata": metadata}, create=True, delete_existing=True).result()
    store[region].write(values[region]).result()
    return store.read().result()


def tensorstore_read(path, driver) -> np.ndarray:
    store = ts.open({"driver": driver, "kvstore": {"driver": "file", "path": str(path)}},
                    open=True).result()
    return store.read().result()


def zarr3_metadata(dtype, codecs, fill_value=0, chunks=CHUNKS, **extra):
    return {"shape": SHAPE, "data_type": dtype, "fill_value": json_fill(fill_value),
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": chunks}},
            "codecs": codecs, **extra}


LITTLE = {"name": "bytes", "configuration": {"endian": "little"}}
BIG = {"name": "bytes", "configuration": {"endian": "big"}}


# ---- tensorstore zarr3 -> zarrkit --------------------------------------------------------------

@pytest.mark.parametrize("dtype", CORE_DTYPES)
def test_tensorstore_zarr3_dtype(tmp_path, zarrkit, dtype):
    values = sample_values(dtype, SHAPE, seed=41)
    serializer = {"name": "bytes"} if np.dtype(dtype).itemsize == 1 else LITTLE
    expected = tensorstore_write(tmp_path / "a", "zarr3",
                                 zarr3_metadata(dtype, [serializer], nonzero_fill(dtype)), values)
    assert_same_array(zarrkit.export(tmp_path / "a"), expected)


ZARR3_CODECS = {
    "gzip": [LITTLE, {"name": "gzip", "configuration": {"level": 6}}],
    "zstd": [LITTLE, {"name": "zstd", "configuration": {"level": 3, "checksum": True}}],
    "blosc-lz4-shuffle": [LITTLE, {"name": "blosc", "configuration": {
        "cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 4, "blocksize": 0}}],
    "blosc-zstd-bitshuffle": [LITTLE, {"name": "blosc", "configuration": {
        "cname": "zstd", "clevel": 3, "shuffle": "bitshuffle", "typesize": 4, "blocksize": 0}}],
    "blosc-zlib-noshuffle": [LITTLE, {"name": "blosc", "configuration": {
        "cname": "zlib", "clevel": 1, "shuffle": "noshuffle", "blocksize": 0}}],
    "crc32c": [LITTLE, {"name": "crc32c"}],
    "big-endian+zstd+crc32c": [BIG, {"name": "zstd", "configuration": {"level": 1}},
                               {"name": "crc32c"}],
    "transpose": [{"name": "transpose", "configuration": {"order": [1, 0]}}, LITTLE],
    "transpose+blosc": [{"name": "transpose", "configuration": {"order": [1, 0]}}, BIG,
                        {"name": "blosc", "configuration": {"cname": "blosclz", "clevel": 9,
                                                            "shuffle": "shuffle", "typesize": 4}}],
    "sharding": [{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [1, 2],
        "codecs": [LITTLE, {"name": "zstd", "configuration": {"level": 1}}],
        "index_codecs": [LITTLE, {"name": "crc32c"}]}}],
    "sharding-index-start": [{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [3, 1], "index_location": "start",
        "codecs": [{"name": "transpose", "configuration": {"order": [1, 0]}}, BIG,
                   {"name": "gzip", "configuration": {"level": 1}}],
        "index_codecs": [LITTLE]}}],
}


@pytest.mark.parametrize("dtype", ["int32", "float32"])
@pytest.mark.parametrize("codecs", ZARR3_CODECS)
def test_tensorstore_zarr3_codecs(tmp_path, zarrkit, codecs, dtype):
    values = sample_values(dtype, SHAPE, seed=42)
    expected = tensorstore_write(tmp_path / "a", "zarr3",
                                 zarr3_metadata(dtype, ZARR3_CODECS[codecs], -1), values)
    assert_same_array(zarrkit.export(tmp_path / "a"), expected)


@pytest.mark.parametrize("encoding", [{"name": "default", "configuration": {"separator": "."}},
                                      {"name": "v2", "configuration": {"separator": "/"}}],
                         ids=["default.", "v2/"])
def test_tensorstore_zarr3_chunk_key_encoding(tmp_path, zarrkit, encoding):
    values = sample_values("uint16", SHAPE, seed=43)
    expected = tensorstore_write(tmp_path / "a", "zarr3", zarr3_metadata(
        "uint16", [LITTLE], 3, chunk_key_encoding=encoding), values)
    assert_same_array(zarrkit.export(tmp_path / "a"), expected)


@pytest.mark.parametrize("fill", [math.nan, -math.inf, -0.0], ids=["NaN", "-inf", "-0"])
def test_tensorstore_zarr3_float_fill(tmp_path, zarrkit, fill):
    values = sample_values("float64", SHAPE, seed=44)
    expected = tensorstore_write(tmp_path / "a", "zarr3",
                                 zarr3_metadata("float64", [LITTLE], fill), values)
    exported = zarrkit.export(tmp_path / "a")
    assert_same_array(exported, expected)
    assert np.signbit(exported[6, 4]) == np.signbit(expected[6, 4])


# ---- zarrkit -> tensorstore (zarr3) ------------------------------------------------------------

@pytest.mark.parametrize("dtype", CORE_DTYPES)
def test_zarrkit_v3_dtype_read_by_tensorstore(tmp_path, zarrkit, dtype):
    values = sample_values(dtype, SHAPE, seed=45)
    zarrkit.import_npy(values, tmp_path / "a", "--zarr-format", "3", "--chunks", "3,2")
    assert_same_array(tensorstore_read(tmp_path / "a", "zarr3"), values)


@pytest.mark.parametrize("options", [
    ["--codec", "none"],
    ["--codec", "gzip:level=6"],
    ["--codec", "zstd:level=3"],
    ["--codec", "blosc:cname=lz4,clevel=5,shuffle=shuffle"],
    ["--codec", "blosc:cname=zstd,clevel=3,shuffle=bitshuffle"],
    ["--codec", "crc32c"],
    ["--codec", "zstd:level=1", "--codec", "crc32c"],
    ["--order", "F"],
    ["--order", "F", "--codec", "blosc:cname=lz4hc,clevel=5,shuffle=noshuffle"],
    ["--separator", "."],
    ["--fill-value", '"NaN"'],
], ids=lambda options: " ".join(options))
def test_zarrkit_v3_codecs_read_by_tensorstore(tmp_path, zarrkit, options):
    values = sample_values("float32", SHAPE, seed=46)
    values[0:3, 0:2] = np.nan  # an all-NaN chunk: with fill NaN it is not stored
    zarrkit.import_npy(values, tmp_path / "a", "--zarr-format", "3", "--chunks", "3,2", *options)
    assert_same_array(tensorstore_read(tmp_path / "a", "zarr3"), values)


# ---- tensorstore zarr (v2) <-> zarrkit ---------------------------------------------------------

def zarr2_metadata(dtype, compressor, fill_value=0, order="C", separator="."):
    return {"shape": SHAPE, "chunks": CHUNKS, "dtype": np.dtype(dtype).str,
            "compressor": compressor, "fill_value": json_fill(fill_value), "order": order,
            "filters": None, "dimension_separator": separator}


V2_COMPRESSORS = {
    "none": None,
    "zlib": {"id": "zlib", "level": 1},
    "gzip": {"id": "gzip", "level": 5},
    "bz2": {"id": "bz2", "level": 9},
    "zstd": {"id": "zstd", "level": 3},
    "blosc-lz4-shuffle": {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1},
    "blosc-zstd-bitshuffle": {"id": "blosc", "cname": "zstd", "clevel": 3, "shuffle": 2},
}


@pytest.mark.parametrize("compressor", V2_COMPRESSORS)
def test_tensorstore_zarr2_compressor(tmp_path, zarrkit, compressor):
    values = sample_values("int32", SHAPE, seed=47)
    expected = tensorstore_write(tmp_path / "a", "zarr",
                                 zarr2_metadata("int32", V2_COMPRESSORS[compressor], 11), values)
    assert_same_array(zarrkit.export(tmp_path / "a"), expected)


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint64", "float16", "float64", "complex128",
                                   ">i4", ">f8", ">c8"])
@pytest.mark.parametrize("order,separator", [("C", "."), ("F", "/")])
def test_tensorstore_zarr2_dtype_and_layout(tmp_path, zarrkit, dtype, order, separator):
    values = sample_values(dtype, SHAPE, seed=48)
    expected = tensorstore_write(tmp_path / "a", "zarr",
                                 zarr2_metadata(dtype, {"id": "zstd", "level": 1},
                                                nonzero_fill(dtype), order, separator), values)
    assert_same_array(zarrkit.export(tmp_path / "a"), expected)


def test_tensorstore_zarr2_null_fill(tmp_path, zarrkit):
    values = sample_values("float32", SHAPE, seed=49)
    expected = tensorstore_write(tmp_path / "a", "zarr", zarr2_metadata("float32", None, None),
                                 values)
    assert_same_array(zarrkit.export(tmp_path / "a"), expected)


@pytest.mark.parametrize("dtype", ["bool", "int16", "uint32", "float32", "complex64", ">f8"])
@pytest.mark.parametrize("options", [
    [],
    ["--codec", "zlib:level=1"],
    ["--codec", "blosc:cname=lz4,clevel=5,shuffle=bitshuffle"],
    ["--codec", "bz2:level=9", "--order", "F", "--separator", "/"],
], ids=lambda options: " ".join(options) or "default")
def test_zarrkit_v2_read_by_tensorstore(tmp_path, zarrkit, options, dtype):
    values = sample_values(dtype, SHAPE, seed=50)
    zarrkit.import_npy(values, tmp_path / "a", "--zarr-format", "2", "--chunks", "3,2", *options)
    assert_same_array(tensorstore_read(tmp_path / "a", "zarr"), values)
