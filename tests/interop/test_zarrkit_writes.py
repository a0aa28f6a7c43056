"""zarrkit writes, zarr-python 3 reads: `zarrkit import` (a .npy into a new array) and
`zarrkit cp` (v2 <-> v3, re-chunking, re-compressing) must produce arrays that zarr-python
reads with identical values and with the metadata the options asked for."""

import math

import numcodecs
import numpy as np
import pytest
import zarr
from zarr.codecs import BloscCodec, Crc32cCodec, GzipCodec, ZstdCodec

from zk_interop import (CORE_DTYPES, V2_ONLY_DTYPES, assert_same_array, sample_values, save_npy,
                        smooth_values, stored_chunk_keys, v2_metadata, v3_metadata)

SHAPE = (7, 5)
CHUNKS = "3,2"  # ragged: the last chunk row and column overhang the array


def zarr_python_read(path) -> np.ndarray:
    return zarr.open_array(str(path), mode="r")[...]


def codec_config(codec: dict) -> dict:
    return codec.get("configuration") or {}


# ---- --codec --------------------------------------------------------------------------------

# --codec SPEC -> what the v3 `codecs` list (after `bytes`) and the v2 `compressor` must hold.
# A check is (name, {config key: value}); only the keys listed are checked.
CODEC_SPECS = {
    "default": ([], [("zstd", {"level": 0})], ("zstd", {"level": 0})),
    "none": (["--codec", "none"], [], None),
    "zstd:level=3": (["--codec", "zstd:level=3"], [("zstd", {"level": 3})], ("zstd", {"level": 3})),
    "gzip:level=6": (["--codec", "gzip:level=6"], [("gzip", {"level": 6})], ("gzip", {"level": 6})),
    "blosc-lz4-shuffle": (["--codec", "blosc:cname=lz4,clevel=5,shuffle=shuffle"],
                          [("blosc", {"cname": "lz4", "clevel": 5, "shuffle": "shuffle"})],
                          ("blosc", {"cname": "lz4", "clevel": 5, "shuffle": 1})),
    "blosc-zstd-bitshuffle": (["--codec", "blosc:cname=zstd,clevel=3,shuffle=bitshuffle"],
                              [("blosc", {"cname": "zstd", "clevel": 3, "shuffle": "bitshuffle"})],
                              ("blosc", {"cname": "zstd", "clevel": 3, "shuffle": 2})),
    "blosc-blosclz-noshuffle": (["--codec", "blosc:cname=blosclz,clevel=9,shuffle=noshuffle"],
                                [("blosc", {"cname": "blosclz", "clevel": 9,
                                            "shuffle": "noshuffle"})],
                                ("blosc", {"cname": "blosclz", "clevel": 9, "shuffle": 0})),
    "blosc-lz4hc": (["--codec", "blosc:cname=lz4hc,clevel=4,shuffle=shuffle"],
                    [("blosc", {"cname": "lz4hc", "clevel": 4, "shuffle": "shuffle"})],
                    ("blosc", {"cname": "lz4hc", "clevel": 4, "shuffle": 1})),
    "blosc-zlib": (["--codec", "blosc:cname=zlib,clevel=2,shuffle=bitshuffle"],
                   [("blosc", {"cname": "zlib", "clevel": 2, "shuffle": "bitshuffle"})],
                   ("blosc", {"cname": "zlib", "clevel": 2, "shuffle": 2})),
    "crc32c": (["--codec", "crc32c"], [("crc32c", {})], "error"),
    "zlib:level=1": (["--codec", "zlib:level=1"], [("numcodecs.zlib", {"level": 1})],
                     ("zlib", {"level": 1})),
    "lz4": (["--codec", "lz4"], [("numcodecs.lz4", {})], ("lz4", {})),
    "bz2:level=9": (["--codec", "bz2:level=9"], [("numcodecs.bz2", {"level": 9})],
                    ("bz2", {"level": 9})),
    "lzma": (["--codec", "lzma"], [("numcodecs.lzma", {})], ("lzma", {})),
    "zstd+crc32c": (["--codec", "zstd:level=1", "--codec", "crc32c"],
                    [("zstd", {"level": 1}), ("crc32c", {})], "error"),
    "gzip+zstd": (["--codec", "gzip:level=1", "--codec", "zstd:level=2"],
                  [("gzip", {"level": 1}), ("zstd", {"level": 2})], "error"),
}


def assert_codec(actual: dict, name: str, config: dict, *, v2: bool) -> None:
    actual_name = actual["id"] if v2 else actual["name"]
    assert actual_name == name, f"codec {actual} is not {name}"
    actual_config = actual if v2 else codec_config(actual)
    for key, value in config.items():
        assert actual_config.get(key) == value, f"codec {actual}: {key} should be {value!r}"


@pytest.mark.parametrize("values", ["smooth-int32", "random-float64"])
@pytest.mark.parametrize("spec", CODEC_SPECS)
def test_import_v3_codec(tmp_path, zarrkit, spec, values):
    values = smooth_values("int32", SHAPE) if values == "smooth-int32" else sample_values("float64", SHAPE)
    options, v3_checks, _ = CODEC_SPECS[spec]
    zarrkit.import_npy(values, tmp_path / "a", "--zarr-format", "3", "--chunks", CHUNKS, *options)
    codecs = v3_metadata(tmp_path / "a")["codecs"]
    assert codecs[0]["name"] == "bytes", codecs
    assert codec_config(codecs[0]).get("endian", "little") == "little"
    assert len(codecs) == 1 + len(v3_checks), codecs
    for actual, (name, config) in zip(codecs[1:], v3_checks):
        assert_codec(actual, name, config, v2=False)
        if name == "blosc":  # the spec requires typesize when shuffling
            assert codec_config(actual)["typesize"] == values.dtype.itemsize
    assert_same_array(zarr_python_read(tmp_path / "a"), values)


@pytest.mark.parametrize("values", ["smooth-int32", "random-float64"])
@pytest.mark.parametrize("spec", CODEC_SPECS)
def test_import_v2_compressor(tmp_path, zarrkit, spec, values):
    values = smooth_values("int32", SHAPE) if values == "smooth-int32" else sample_values("float64", SHAPE)
    options, _, v2_check = CODEC_SPECS[spec]
    if v2_check == "error":  # crc32c and several compressors do not exist in v2
        npy = save_npy(tmp_path / "in", values)
        zarrkit.expect_error("import", npy, tmp_path / "a", "--zarr-format", "2", *options,
                             exit_code=2)
        assert not (tmp_path / "a" / ".zarray").exists()
        return
    zarrkit.import_npy(values, tmp_path / "a", "--zarr-format", "2", "--chunks", CHUNKS, *options)
    metadata = v2_metadata(tmp_path / "a")
    assert metadata["zarr_format"] == 2
    assert metadata["filters"] in (None, [])
    if v2_check is None:
        assert metadata["compressor"] is None
    else:
        assert_codec(metadata["compressor"], *v2_check, v2=True)
    assert_same_array(zarr_python_read(tmp_path / "a"), values)


# ---- data types -----------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", CORE_DTYPES)
@pytest.mark.parametrize("zarr_format", [2, 3])
def test_import_every_dtype(tmp_path, zarrkit, zarr_format, dtype):
    values = sample_values(dtype, SHAPE, seed=21)
    zarrkit.import_npy(values, tmp_path / "a", "--zarr-format", zarr_format, "--chunks", CHUNKS)
    if zarr_format == 3:
        assert v3_metadata(tmp_path / "a")["data_type"] == dtype
    else:
        assert v2_metadata(tmp_path / "a")["dtype"] == np.dtype(dtype).str
    read = zarr_python_read(tmp_path / "a")
    assert read.dtype == np.dtype(dtype)
    assert_same_array(read, values)


@pytest.mark.parametrize("dtype", list(V2_ONLY_DTYPES))
def test_import_v2_only_dtype(tmp_path, zarrkit, dtype):
    dtype = V2_ONLY_DTYPES[dtype]
    values = sample_values(dtype, SHAPE, seed=22)
    zarrkit.import_npy(values, tmp_path / "a", "--zarr-format", "2", "--chunks", CHUNKS)
    stored = v2_metadata(tmp_path / "a")["dtype"]
    if dtype.fields is not None:
        assert stored == [list(field) for field in dtype.descr]
    elif dtype.byteorder == ">":  # big-endian data may be stored either way round
        assert stored in (dtype.str, dtype.newbyteorder("<").str)
    else:
        assert stored == dtype.str
    assert_same_array(zarr_python_read(tmp_path / "a"), values)


@pytest.mark.parametrize("dtype", [">i4", ">f8", ">c16", ">u2"])
def test_import_v3_from_big_endian_npy(tmp_path, zarrkit, dtype):
    values = sample_values(dtype, SHAPE, seed=23)
    zarrkit.import_npy(values, tmp_path / "a", "--zarr-format", "3", "--chunks", CHUNKS)
    assert v3_metadata(tmp_path / "a")["data_type"] == np.dtype(dtype).newbyteorder("=").name
    assert_same_array(zarr_python_read(tmp_path / "a"), values)


@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize("shape,chunks", [((), ""), ((13,), "4"), ((0,), "3"),
                                          ((2, 3, 4, 5), "1,2,3,2")],
                         ids=["0-d", "1-d", "empty", "4-d"])
def test_import_shapes(tmp_path, zarrkit, zarr_format, shape, chunks):
    values = sample_values("int16", shape, seed=24)
    options = ["--zarr-format", zarr_format] + (["--chunks", chunks] if chunks else [])
    zarrkit.import_npy(values, tmp_path / "a", *options)
    read = zarr.open_array(str(tmp_path / "a"), mode="r")
    assert read.shape == shape
    assert_same_array(read[...], values)


# ---- --fill-value ---------------------------------------------------------------------------

# (dtype, --fill-value JSON, the metadata's fill_value in v3, in v2)
FILLS = {
    "f4-NaN": ("float32", '"NaN"', "NaN", "NaN"),
    "f8-Infinity": ("float64", '"Infinity"', "Infinity", "Infinity"),
    "f2--Infinity": ("float16", '"-Infinity"', "-Infinity", "-Infinity"),
    "f8-1.5": ("float64", "1.5", 1.5, 1.5),
    "f4-0": ("float32", "0", 0.0, 0.0),
    "i2--7": ("int16", "-7", -7, -7),
    "u8-max": ("uint64", "18446744073709551615", 18446744073709551615, 18446744073709551615),
    "bool-true": ("bool", "true", True, True),
    "c16-nan,1": ("complex128", '["NaN", 1.0]', ["NaN", 1.0], ["NaN", 1.0]),
}


@pytest.mark.parametrize("fill", FILLS)
@pytest.mark.parametrize("zarr_format", [2, 3])
def test_import_fill_value(tmp_path, zarrkit, zarr_format, fill):
    dtype, option, in_v3, in_v2 = FILLS[fill]
    values = sample_values(dtype, SHAPE, seed=25)
    fill_value = np.array(_scalar(in_v3), dtype=dtype)
    values[0:3, :] = fill_value  # chunk row 0 is all fill: written or not, it reads the same
    zarrkit.import_npy(values, tmp_path / "a", "--zarr-format", zarr_format, "--chunks", CHUNKS,
                       "--fill-value", option)
    metadata = v3_metadata(tmp_path / "a") if zarr_format == 3 else v2_metadata(tmp_path / "a")
    assert metadata["fill_value"] == (in_v3 if zarr_format == 3 else in_v2)
    array = zarr.open_array(str(tmp_path / "a"), mode="r")
    assert_same_array(np.array(array.fill_value, dtype=dtype), fill_value)
    assert_same_array(array[...], values)


def _scalar(json_value):
    """The Python value of a fill value in v3 JSON form."""
    def number(x):
        return float(x.replace("Infinity", "inf")) if isinstance(x, str) else x
    if isinstance(json_value, list):
        return complex(number(json_value[0]), number(json_value[1]))
    return number(json_value)


def test_import_v2_null_fill_value(tmp_path, zarrkit):
    values = sample_values("float64", SHAPE, seed=26)
    zarrkit.import_npy(values, tmp_path / "a", "--zarr-format", "2", "--chunks", CHUNKS,
                       "--fill-value", "null")
    assert v2_metadata(tmp_path / "a")["fill_value"] is None
    assert_same_array(zarr_python_read(tmp_path / "a"), values)


def test_import_v3_rejects_null_fill_value(tmp_path, zarrkit):
    npy = save_npy(tmp_path / "in", sample_values("int32", SHAPE))
    zarrkit.expect_error("import", npy, tmp_path / "a", "--zarr-format", "3", "--fill-value",
                         "null")
    assert not (tmp_path / "a" / "zarr.json").exists()


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_write_empty_chunks(tmp_path, zarrkit, zarr_format):
    values = sample_values("int32", SHAPE, seed=27)
    values[0:3, 0:2] = 9  # chunk (0, 0) is all fill
    common = ["--zarr-format", zarr_format, "--chunks", CHUNKS, "--fill-value", "9"]
    zarrkit.import_npy(values, tmp_path / "skipped", *common)
    zarrkit.import_npy(values, tmp_path / "written", *common, "--write-empty-chunks")
    first_key = {2: "0.0", 3: "c/0/0"}[zarr_format]
    assert first_key not in stored_chunk_keys(tmp_path / "skipped")
    assert first_key in stored_chunk_keys(tmp_path / "written")
    assert len(stored_chunk_keys(tmp_path / "written")) == 9
    for name in ["skipped", "written"]:
        assert_same_array(zarr_python_read(tmp_path / name), values)


# ---- --order, --separator, --chunks, --dimension-names, --overwrite ---------------------------

@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("zarr_format", [2, 3])
def test_import_order(tmp_path, zarrkit, zarr_format, order):
    values = sample_values("uint16", (5, 4, 3), seed=28)
    zarrkit.import_npy(values, tmp_path / "a", "--zarr-format", zarr_format, "--chunks", "2,3,2",
                       "--order", order)
    if zarr_format == 2:
        assert v2_metadata(tmp_path / "a")["order"] == order
    else:
        codecs = v3_metadata(tmp_path / "a")["codecs"]
        transposes = [c for c in codecs if c["name"] == "transpose"]
        if order == "C":
            assert transposes == []
        else:
            assert codecs[0]["name"] == "transpose"
            assert codec_config(codecs[0])["order"] == [2, 1, 0]
    assert_same_array(zarr_python_read(tmp_path / "a"), values)


@pytest.mark.parametrize("separator", ["/", "."])
@pytest.mark.parametrize("zarr_format", [2, 3])
def test_import_separator(tmp_path, zarrkit, zarr_format, separator):
    values = sample_values("int8", (5, 4, 3), seed=29)
    zarrkit.import_npy(values, tmp_path / "a", "--zarr-format", zarr_format, "--chunks", "2,3,2",
                       "--separator", separator)
    keys = stored_chunk_keys(tmp_path / "a")
    if zarr_format == 2:
        assert v2_metadata(tmp_path / "a").get("dimension_separator", ".") == separator
        expected_key = "2/1/1" if separator == "/" else "2.1.1"
    else:
        encoding = v3_metadata(tmp_path / "a")["chunk_key_encoding"]
        assert encoding["name"] == "default"
        assert codec_config(encoding).get("separator", "/") == separator
        expected_key = "c/2/1/1" if separator == "/" else "c.2.1.1"
    assert expected_key in keys, f"{expected_key} not among {sorted(keys)}"
    assert len(keys) == 3 * 2 * 2
    assert_same_array(zarr_python_read(tmp_path / "a"), values)


@pytest.mark.parametrize("chunks,count", [("7,5", 1), ("1,5", 7), ("4,4", 4), ("10,10", 1)])
@pytest.mark.parametrize("zarr_format", [2, 3])
def test_import_chunks(tmp_path, zarrkit, zarr_format, chunks, count):
    values = sample_values("float32", SHAPE, seed=30)
    zarrkit.import_npy(values, tmp_path / "a", "--zarr-format", zarr_format, "--chunks", chunks)
    expected = [int(c) for c in chunks.split(",")]
    if zarr_format == 2:
        assert v2_metadata(tmp_path / "a")["chunks"] == expected
    else:
        grid = v3_metadata(tmp_path / "a")["chunk_grid"]
        assert grid["name"] == "regular"
        assert grid["configuration"]["chunk_shape"] == expected
    assert len(stored_chunk_keys(tmp_path / "a")) == count
    assert_same_array(zarr_python_read(tmp_path / "a"), values)


def test_import_dimension_names(tmp_path, zarrkit):
    values = sample_values("int32", SHAPE, seed=31)
    zarrkit.import_npy(values, tmp_path / "a", "--zarr-format", "3", "--dimension-names", "y,x")
    assert v3_metadata(tmp_path / "a")["dimension_names"] == ["y", "x"]
    array = zarr.open_array(str(tmp_path / "a"), mode="r")
    assert tuple(array.metadata.dimension_names) == ("y", "x")
    assert_same_array(array[...], values)


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_import_overwrite(tmp_path, zarrkit, zarr_format):
    first = sample_values("int32", SHAPE, seed=32)
    second = sample_values("int32", (3, 3), seed=33)
    zarrkit.import_npy(first, tmp_path / "a", "--zarr-format", zarr_format)
    npy = save_npy(tmp_path / "in", second)
    zarrkit.expect_error("import", npy, tmp_path / "a", "--zarr-format", zarr_format, exit_code=1)
    assert_same_array(zarr_python_read(tmp_path / "a"), first)  # untouched
    zarrkit.run("import", npy, tmp_path / "a", "--zarr-format", zarr_format, "--overwrite")
    assert_same_array(zarr_python_read(tmp_path / "a"), second)


# ---- zarrkit cp -----------------------------------------------------------------------------

def write_source(path, zarr_format, **create_args):
    values = sample_values(create_args.pop("dtype", "int32"), SHAPE, seed=34)
    array = zarr.create_array(store=str(path), shape=SHAPE, dtype=values.dtype, chunks=(3, 2),
                              zarr_format=zarr_format, fill_value=create_args.pop("fill_value", 5),
                              attributes={"units": "m", "scale": [1, 2]}, **create_args)
    array[1:5, 0:3] = values[1:5, 0:3]  # partial: some chunks missing
    return array[...]


@pytest.mark.parametrize("compressor,expected", [
    (numcodecs.Blosc(cname="lz4", clevel=5, shuffle=1),
     ("blosc", {"cname": "lz4", "clevel": 5, "shuffle": "shuffle"})),
    (numcodecs.Zstd(level=4), ("zstd", {"level": 4})),
    (numcodecs.GZip(level=3), ("gzip", {"level": 3})),
    (None, None),
], ids=["blosc", "zstd", "gzip", "none"])
def test_cp_v2_to_v3(tmp_path, zarrkit, compressor, expected):
    values = write_source(tmp_path / "v2", 2, compressors=compressor)
    zarrkit.run("cp", tmp_path / "v2", tmp_path / "v3", "--zarr-format", "3")
    metadata = v3_metadata(tmp_path / "v3")
    assert metadata["zarr_format"] == 3
    assert metadata["fill_value"] == 5
    assert metadata["chunk_grid"]["configuration"]["chunk_shape"] == [3, 2]
    assert metadata["attributes"] == {"units": "m", "scale": [1, 2]}
    compressors = [c for c in metadata["codecs"] if c["name"] not in ("bytes", "transpose")]
    if expected is None:
        assert compressors == []
    else:
        assert len(compressors) == 1, metadata["codecs"]
        assert_codec(compressors[0], *expected, v2=False)
    assert_same_array(zarr_python_read(tmp_path / "v3"), values)


@pytest.mark.parametrize("compressors,expected", [
    ([GzipCodec(level=4)], ("gzip", {"level": 4})),
    ([BloscCodec(cname="zstd", clevel=2, shuffle="bitshuffle")],
     ("blosc", {"cname": "zstd", "clevel": 2, "shuffle": 2})),
    ([ZstdCodec(level=2), Crc32cCodec()], ("zstd", {"level": 2})),  # crc32c has no v2 form
    (None, None),
], ids=["gzip", "blosc", "zstd+crc32c", "none"])
def test_cp_v3_to_v2(tmp_path, zarrkit, compressors, expected):
    values = write_source(tmp_path / "v3", 3, compressors=compressors)
    zarrkit.run("cp", tmp_path / "v3", tmp_path / "v2", "--zarr-format", "2")
    metadata = v2_metadata(tmp_path / "v2")
    assert metadata["zarr_format"] == 2
    assert metadata["fill_value"] == 5
    assert metadata["chunks"] == [3, 2]
    assert zarr.open_array(str(tmp_path / "v2"), mode="r").attrs.asdict() == {
        "units": "m", "scale": [1, 2]}
    if expected is None:
        assert metadata["compressor"] is None
    else:
        assert_codec(metadata["compressor"], *expected, v2=True)
    assert_same_array(zarr_python_read(tmp_path / "v2"), values)


@pytest.mark.parametrize("dtype", [">i4", ">f8", "float16", "complex64", "bool"])
def test_cp_v2_to_v3_dtypes(tmp_path, zarrkit, dtype):
    values = write_source(tmp_path / "v2", 2, dtype=dtype, fill_value=0)
    zarrkit.run("cp", tmp_path / "v2", tmp_path / "v3", "--zarr-format", "3")
    assert_same_array(zarr_python_read(tmp_path / "v3"), values)


@pytest.mark.parametrize("source_format,target_format", [(2, 3), (3, 2), (3, 3), (2, 2)])
def test_cp_rechunk_and_recompress(tmp_path, zarrkit, source_format, target_format):
    values = write_source(tmp_path / "src", source_format, dtype="float64", fill_value=math.nan)
    zarrkit.run("cp", tmp_path / "src", tmp_path / "dst", "--zarr-format", target_format,
                "--chunks", "4,4", "--codec", "zlib:level=1")
    array = zarr.open_array(str(tmp_path / "dst"), mode="r")
    assert array.metadata.zarr_format == target_format
    assert array.chunks == (4, 4)
    assert math.isnan(array.fill_value)
    if target_format == 2:
        assert_codec(v2_metadata(tmp_path / "dst")["compressor"], "zlib", {"level": 1}, v2=True)
    else:
        codecs = v3_metadata(tmp_path / "dst")["codecs"]
        assert_codec(codecs[-1], "numcodecs.zlib", {"level": 1}, v2=False)
    assert_same_array(array[...], values)


@pytest.mark.parametrize("source_format,target_format", [(2, 3), (3, 2)])
def test_cp_hierarchy(tmp_path, zarrkit, source_format, target_format):
    root = zarr.open_group(str(tmp_path / "src"), mode="w", zarr_format=source_format)
    root.attrs["title"] = "copied"
    expected = {}
    for path, dtype in [("a", "int16"), ("inner/b", "float32"), ("inner/deeper/c", "uint8")]:
        group = root
        for depth, part in enumerate(path.split("/")[:-1], start=1):
            group = group.require_group(part)
            group.attrs["level"] = depth
        array = group.create_array(path.split("/")[-1], shape=SHAPE, chunks=(3, 2), dtype=dtype,
                                   fill_value=1, attributes={"name": path})
        values = sample_values(dtype, SHAPE, seed=len(path))
        array[1:5, 0:3] = values[1:5, 0:3]
        expected[path] = array[...]
    zarrkit.run("cp", tmp_path / "src", tmp_path / "dst", "--zarr-format", target_format)
    copied = zarr.open_group(str(tmp_path / "dst"), mode="r")
    assert copied.metadata.zarr_format == target_format
    assert copied.attrs.asdict() == {"title": "copied"}
    assert copied["inner"].attrs.asdict() == {"level": 1}
    assert copied["inner/deeper"].attrs.asdict() == {"level": 2}
    for path, values in expected.items():
        array = copied[path]
        assert array.metadata.zarr_format == target_format
        assert array.attrs.asdict() == {"name": path}
        assert_same_array(array[...], values, what=path)


# ---- errors ---------------------------------------------------------------------------------

def test_bad_select_is_a_usage_error(tmp_path, zarrkit):
    zarrkit.import_npy(sample_values("int32", SHAPE), tmp_path / "a")
    zarrkit.expect_error("export", tmp_path / "a", tmp_path / "out.npy", "--select=1:2:3:4",
                         exit_code=2)
    zarrkit.expect_error("export", tmp_path / "a", tmp_path / "out.npy", "--select=0,0,0",
                         exit_code=2)


def test_missing_array_is_an_error(tmp_path, zarrkit):
    zarrkit.expect_error("export", tmp_path / "nothing-here", tmp_path / "out.npy", exit_code=1)


def test_unknown_codec_is_a_usage_error(tmp_path, zarrkit):
    npy = save_npy(tmp_path / "in", sample_values("int32", SHAPE))
    zarrkit.expect_error("import", npy, tmp_path / "a", "--codec", "nosuchcodec", exit_code=2)
    assert not (tmp_path / "a").exists() or not any((tmp_path / "a").iterdir())
