"""numcodecs array filters (fixedscaleoffset, quantize, bitround, packbits, astype, delta) in
both directions with zarr-python 3, as v2 filters and as v3 numcodecs.* codecs.

zarr-python writes -> zarrkit reads: `zarrkit export` must give exactly what zarr-python reads.
zarrkit writes -> zarr-python reads: `zarrkit cp` re-encodes every chunk of a zarr-python array
with the same filters; each chunk it stores must be byte-identical to the chunk zarr-python
stores for the same values (no compressor, so the filter output is compared directly), and
zarr-python must read the copy back unchanged.
"""

from pathlib import Path

import numcodecs
import numpy as np
import pytest
import zarr
import zarr.codecs.numcodecs as numcodecs_v3

from zk_interop import assert_same_array, sample_values, stored_chunk_keys

# The sample values include NaN, infinities and values out of the stored type's range on
# purpose (casts of those must match NumPy's too); NumPy warns about each.
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

SHAPE = (7, 5)
CHUNKS = (3, 2)  # ragged edge chunks
PARTIAL = (slice(1, 5), slice(0, 3))


def float_values(dtype, seed):
    rng = np.random.default_rng(seed)
    return (1000 + rng.standard_normal(SHAPE) * 3).astype(dtype)


# name -> (dtype, values, v2 filter factory, v3 filter factory). Factories, so that the codecs
# are made inside the tests (where zarr-python's warning about numcodecs.* is filtered).
FILTERS = {
    "fixedscaleoffset-f4-i2": (
        "float32", lambda: float_values("float32", 1),
        lambda: numcodecs.FixedScaleOffset(offset=1000, scale=10, dtype="<f4", astype="<i2"),
        lambda: numcodecs_v3.FixedScaleOffset(offset=1000, scale=10, dtype="<f4", astype="<i2")),
    "fixedscaleoffset-f8-u2-float-params": (
        "float64", lambda: float_values("float64", 2),
        lambda: numcodecs.FixedScaleOffset(offset=990.5, scale=2.5, dtype="<f8", astype="<u2"),
        lambda: numcodecs_v3.FixedScaleOffset(offset=990.5, scale=2.5, dtype="<f8", astype="<u2")),
    "fixedscaleoffset-i4-int-params": (
        "int32", lambda: sample_values("int32", SHAPE, seed=3) // 1000,
        lambda: numcodecs.FixedScaleOffset(offset=7, scale=3, dtype="<i4"),
        lambda: numcodecs_v3.FixedScaleOffset(offset=7, scale=3, dtype="<i4")),
    "fixedscaleoffset-big-endian-astype": (
        "float32", lambda: float_values("float32", 4),
        lambda: numcodecs.FixedScaleOffset(offset=1000, scale=100, dtype="<f4", astype=">i4"),
        lambda: numcodecs_v3.FixedScaleOffset(offset=1000, scale=100, dtype="<f4", astype=">i4")),
    # float16 data computes in float16 (NumPy 2 rounds after each operation).
    "fixedscaleoffset-f2-i2": (
        "float16", lambda: float_values("float16", 20),
        lambda: numcodecs.FixedScaleOffset(offset=1000, scale=10, dtype="<f2", astype="<i2"),
        lambda: numcodecs_v3.FixedScaleOffset(offset=1000, scale=10, dtype="<f2", astype="<i2")),
    "fixedscaleoffset-f2-float-params": (
        "float16", lambda: sample_values("float16", SHAPE, seed=21),
        lambda: numcodecs.FixedScaleOffset(offset=0.1, scale=2.5, dtype="<f2"),
        lambda: numcodecs_v3.FixedScaleOffset(offset=0.1, scale=2.5, dtype="<f2")),
    "fixedscaleoffset-f4-f2": (
        "float32", lambda: sample_values("float32", SHAPE, seed=22) / 100,
        lambda: numcodecs.FixedScaleOffset(offset=3.5, scale=4, dtype="<f4", astype="<f2"),
        lambda: numcodecs_v3.FixedScaleOffset(offset=3.5, scale=4, dtype="<f4", astype="<f2")),
    "quantize-f8": (
        "float64", lambda: sample_values("float64", SHAPE, seed=5),
        lambda: numcodecs.Quantize(digits=3, dtype="<f8"),
        lambda: numcodecs_v3.Quantize(digits=3, dtype="<f8")),
    "quantize-f8-to-f4": (
        "float64", lambda: float_values("float64", 6),
        lambda: numcodecs.Quantize(digits=2, dtype="<f8", astype="<f4"),
        lambda: numcodecs_v3.Quantize(digits=2, dtype="<f8", astype="<f4")),
    "quantize-f4": (
        "float32", lambda: sample_values("float32", SHAPE, seed=7),
        lambda: numcodecs.Quantize(digits=1, dtype="<f4"),
        lambda: numcodecs_v3.Quantize(digits=1, dtype="<f4")),
    "quantize-f2": (
        "float16", lambda: sample_values("float16", SHAPE, seed=23),
        lambda: numcodecs.Quantize(digits=2, dtype="<f2"),
        lambda: numcodecs_v3.Quantize(digits=2, dtype="<f2")),
    "quantize-f8-to-f2": (
        "float64", lambda: sample_values("float64", SHAPE, seed=24) / 100,
        lambda: numcodecs.Quantize(digits=3, dtype="<f8", astype="<f2"),
        lambda: numcodecs_v3.Quantize(digits=3, dtype="<f8", astype="<f2")),
    "bitround-f4": (
        "float32", lambda: sample_values("float32", SHAPE, seed=8),
        lambda: numcodecs.BitRound(keepbits=6), lambda: numcodecs_v3.BitRound(keepbits=6)),
    "bitround-f8": (
        "float64", lambda: sample_values("float64", SHAPE, seed=9),
        lambda: numcodecs.BitRound(keepbits=20), lambda: numcodecs_v3.BitRound(keepbits=20)),
    "bitround-f2": (
        "float16", lambda: sample_values("float16", SHAPE, seed=10),
        lambda: numcodecs.BitRound(keepbits=3), lambda: numcodecs_v3.BitRound(keepbits=3)),
    "packbits": (
        "bool", lambda: sample_values("bool", SHAPE, seed=11),
        lambda: numcodecs.PackBits(), lambda: numcodecs_v3.PackBits()),
    "astype-f8-i2": (
        "float64", lambda: (sample_values("float64", SHAPE, seed=12) % 30000).round(1),
        lambda: numcodecs.AsType(encode_dtype="<i2", decode_dtype="<f8"),
        lambda: numcodecs_v3.AsType(encode_dtype="<i2", decode_dtype="<f8")),
    "astype-i8-u1": (
        "int64", lambda: sample_values("int64", SHAPE, seed=13),
        lambda: numcodecs.AsType(encode_dtype="|u1", decode_dtype="<i8"),
        lambda: numcodecs_v3.AsType(encode_dtype="|u1", decode_dtype="<i8")),
    "astype-f4-f2": (
        "float32", lambda: sample_values("float32", SHAPE, seed=14),
        lambda: numcodecs.AsType(encode_dtype="<f2", decode_dtype="<f4"),
        lambda: numcodecs_v3.AsType(encode_dtype="<f2", decode_dtype="<f4")),
    "delta+fixedscaleoffset": (
        "float64", lambda: float_values("float64", 15),
        lambda: [numcodecs.FixedScaleOffset(offset=1000, scale=10, dtype="<f8", astype="<i4"),
                 numcodecs.Delta(dtype="<i4")],
        lambda: [numcodecs_v3.FixedScaleOffset(offset=1000, scale=10, dtype="<f8", astype="<i4"),
                 numcodecs_v3.Delta(dtype="<i4")]),
}


# zarr-python 3.1 cannot use these as v3 codecs: Quantize does not tell the bytes codec about
# its astype (writing fails to reshape), and FixedScaleOffset with a big-endian astype reads
# its own chunks back byte-swapped (in v3 the bytes codec, not the filter, owns byte order).
V2_ONLY = {"quantize-f8-to-f4", "quantize-f8-to-f2", "fixedscaleoffset-big-endian-astype"}


def skip_if_v2_only(name, zarr_format):
    if zarr_format == 3 and name in V2_ONLY:
        pytest.skip(f"{name}: zarr-python cannot round-trip it as a v3 codec (see V2_ONLY)")


def create(path, dtype, zarr_format, filters, *, order="C"):
    filters = filters if isinstance(filters, list) else [filters]
    args = dict(store=str(path), shape=SHAPE, chunks=CHUNKS, dtype=dtype, zarr_format=zarr_format,
                filters=filters, compressors=None, fill_value=0)
    if zarr_format == 2:
        args["order"] = order
    return zarr.create_array(**args)


def chunk_bytes(path) -> dict[str, bytes]:
    return {key: (Path(path) / key).read_bytes() for key in stored_chunk_keys(path)}


@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize("name", FILTERS)
def test_zarr_python_writes_zarrkit_reads(tmp_path, zarrkit, name, zarr_format):
    skip_if_v2_only(name, zarr_format)
    dtype, values, v2_filter, v3_filter = FILTERS[name]
    array = create(tmp_path / "a", dtype, zarr_format, v2_filter() if zarr_format == 2 else v3_filter())
    array[PARTIAL] = values()[PARTIAL]  # some chunks missing, some partly written
    assert_same_array(zarrkit.export(tmp_path / "a"), array[...])
    assert_same_array(zarrkit.export(tmp_path / "a", "1:6:2,::-1"), array[...][1:6:2, ::-1])


@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize("name", FILTERS)
def test_zarrkit_writes_the_bytes_numcodecs_writes(tmp_path, zarrkit, name, zarr_format):
    skip_if_v2_only(name, zarr_format)
    dtype, values, v2_filter, v3_filter = FILTERS[name]
    make = v2_filter if zarr_format == 2 else v3_filter
    source = create(tmp_path / "source", dtype, zarr_format, make())
    source[...] = values()
    # zarrkit decodes every chunk of the source and encodes it again with the same filters.
    zarrkit.run("cp", tmp_path / "source", tmp_path / "copy")
    # What zarr-python stores for exactly the values zarrkit decoded (for lossy filters these
    # are the decoded values, not the originals).
    decoded = source[...]
    reference = create(tmp_path / "reference", dtype, zarr_format, make())
    reference[...] = decoded
    expected, actual = chunk_bytes(tmp_path / "reference"), chunk_bytes(tmp_path / "copy")
    assert sorted(actual) == sorted(expected)
    for key in expected:
        assert actual[key] == expected[key], f"chunk {key}: {actual[key].hex()} != {expected[key].hex()}"
    assert_same_array(zarr.open_array(str(tmp_path / "copy"), mode="r")[...], reference[...])


def test_v2_filters_with_order_f(tmp_path, zarrkit):
    """order "F": numcodecs sees the chunk in Fortran order, zarrkit through a transpose."""
    source = create(tmp_path / "a", "float64", 2, [numcodecs.Quantize(digits=2, dtype="<f8"),
                                                    numcodecs.Delta(dtype="<f8")], order="F")
    source[...] = float_values("float64", 16)
    assert_same_array(zarrkit.export(tmp_path / "a"), source[...])
    zarrkit.run("cp", tmp_path / "a", tmp_path / "copy")
    assert chunk_bytes(tmp_path / "copy") == chunk_bytes(tmp_path / "a")


def test_v2_filter_metadata_is_kept_by_cp(tmp_path, zarrkit):
    source = create(tmp_path / "a", "float32", 2,
                    numcodecs.FixedScaleOffset(offset=1000, scale=10, dtype="<f4", astype="<i2"))
    source[...] = float_values("float32", 17)
    zarrkit.run("cp", tmp_path / "a", tmp_path / "copy")
    copy = zarr.open_array(str(tmp_path / "copy"), mode="r")
    assert copy.metadata.filters == source.metadata.filters


@pytest.mark.parametrize("checksum", ["CRC32", "Adler32", "Fletcher32"])
def test_v3_numcodecs_checksums_survive_a_zarrkit_copy(tmp_path, zarrkit, checksum):
    """numcodecs.* codecs without parameters: zarr-python needs their empty configuration."""
    source = zarr.create_array(store=str(tmp_path / "a"), shape=SHAPE, chunks=CHUNKS, dtype="int32",
                               compressors=[getattr(numcodecs_v3, checksum)()], fill_value=0)
    source[...] = sample_values("int32", SHAPE, seed=18)
    zarrkit.run("cp", tmp_path / "a", tmp_path / "copy")
    copy = zarr.open_array(str(tmp_path / "copy"), mode="r")
    assert_same_array(copy[...], source[...])
    assert chunk_bytes(tmp_path / "copy") == chunk_bytes(tmp_path / "a")
