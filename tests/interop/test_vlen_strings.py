"""Variable-length strings and bytes with zarr-python 3, both ways: v3 `string` /
`variable_length_bytes` (vlen-utf8 / vlen-bytes codecs) and v2 object arrays ("|O" with the
vlen-utf8 / vlen-bytes filter), as zarr-python writes them for NumPy StringDType and object
arrays.

.npy files cannot hold strings without pickle, so zarrkit's reads are checked through
`zarrkit cp`: it reads every chunk of a zarr-python array and writes it again. Without a
compressor each chunk zarrkit stores must be byte-identical to zarr-python's; with one,
zarr-python must read zarrkit's copy back equal to the original. Converting between v2 and v3
checks the same in both directions across formats.
"""

from pathlib import Path

import numpy as np
import pytest
import zarr
import zarr.dtype

from zk_interop import stored_chunk_keys, v2_metadata, v3_metadata

SHAPE = (7, 5)
CHUNKS = (3, 2)  # ragged edge chunks
PARTIAL = (slice(1, 5), slice(0, 3))  # some chunks missing, some partly written

PIECES = ["", "a", "Zarr", " ", "é", "水", "🙂", "Ñoño", "a\x00b", "x" * 300]


def text_values(seed):
    rng = np.random.default_rng(seed)
    flat = ["".join(rng.choice(PIECES, rng.integers(0, 4))) for _ in range(int(np.prod(SHAPE)))]
    return np.array(flat, dtype=np.dtypes.StringDType()).reshape(SHAPE)


def bytes_values(seed):
    rng = np.random.default_rng(seed)
    flat = [rng.integers(0, 256, rng.integers(0, 40), dtype=np.uint8).tobytes() for _ in range(int(np.prod(SHAPE)))]
    return np.array(flat, dtype=object).reshape(SHAPE)


KINDS = {
    "string": (lambda: zarr.dtype.VariableLengthUTF8(), text_values, "fill"),
    "bytes": (lambda: zarr.dtype.VariableLengthBytes(), bytes_values, b"\x00fill\xff"),
}


def write(path, kind, zarr_format, *, compressed, seed=0, order="C", region=PARTIAL, fill=True):
    dtype, make_values, fill_value = KINDS[kind]
    args = dict(store=str(path), shape=SHAPE, chunks=CHUNKS, dtype=dtype(), zarr_format=zarr_format)
    if fill:
        args["fill_value"] = fill_value
    if not compressed:
        args["compressors"] = None
    if zarr_format == 2:
        args["order"] = order
    array = zarr.create_array(**args)
    values = make_values(seed)
    array[region] = values[region]
    return array


def chunk_bytes(path) -> dict[str, bytes]:
    return {key: (Path(path) / key).read_bytes() for key in stored_chunk_keys(path)}


def assert_same_values(actual, expected):
    assert actual.shape == expected.shape
    assert actual.tolist() == expected.tolist()


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize("kind", KINDS)
def test_zarrkit_copy_is_byte_identical(tmp_path, zarrkit, kind, zarr_format, order):
    if zarr_format == 3 and order == "F":
        pytest.skip("order is a v2 setting")
    source = write(tmp_path / "source", kind, zarr_format, compressed=False, order=order)
    zarrkit.run("cp", tmp_path / "source", tmp_path / "copy")
    expected, actual = chunk_bytes(tmp_path / "source"), chunk_bytes(tmp_path / "copy")
    assert sorted(actual) == sorted(expected)
    for key in expected:
        assert actual[key] == expected[key], f"chunk {key}: {actual[key][:80]!r} != {expected[key][:80]!r}"
    copy = zarr.open_array(str(tmp_path / "copy"), mode="r")
    assert copy.dtype == source.dtype
    assert copy.fill_value == source.fill_value
    assert_same_values(copy[...], source[...])


@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize("kind", KINDS)
def test_compressed_arrays_round_trip(tmp_path, zarrkit, kind, zarr_format):
    source = write(tmp_path / "source", kind, zarr_format, compressed=True, seed=1)
    zarrkit.run("cp", tmp_path / "source", tmp_path / "copy")
    assert_same_values(zarr.open_array(str(tmp_path / "copy"), mode="r")[...], source[...])


@pytest.mark.parametrize("direction", [(2, 3), (3, 2)])
@pytest.mark.parametrize("kind", KINDS)
def test_conversion_between_formats(tmp_path, zarrkit, kind, direction):
    source_format, target_format = direction
    source = write(tmp_path / "source", kind, source_format, compressed=True, seed=2)
    zarrkit.run("cp", tmp_path / "source", tmp_path / "copy", "--zarr-format", target_format)
    copy = zarr.open_array(str(tmp_path / "copy"), mode="r")
    assert copy.metadata.zarr_format == target_format
    assert_same_values(copy[...], source[...])
    codec_name = "vlen-utf8" if kind == "string" else "vlen-bytes"
    if target_format == 2:
        metadata = v2_metadata(tmp_path / "copy")
        assert metadata["dtype"] == "|O"
        assert metadata["filters"][0] == {"id": codec_name}
    else:
        metadata = v3_metadata(tmp_path / "copy")
        assert metadata["data_type"] == ("string" if kind == "string" else "variable_length_bytes")
        assert metadata["codecs"][0] == {"name": codec_name, "configuration": {}}


@pytest.mark.parametrize("compressed", [False, True])
@pytest.mark.parametrize("kind", KINDS)
def test_sharded(tmp_path, zarrkit, kind, compressed):
    """zarr-python's `shards=`: vlen codecs inside sharding_indexed, some inner chunks empty."""
    dtype, make_values, fill_value = KINDS[kind]
    args = dict(store=str(tmp_path / "source"), shape=SHAPE, chunks=(2, 2), shards=(4, 4), dtype=dtype(),
                zarr_format=3, fill_value=fill_value)
    if not compressed:
        args["compressors"] = None
    source = zarr.create_array(**args)
    source[PARTIAL] = make_values(4)[PARTIAL]
    zarrkit.run("cp", tmp_path / "source", tmp_path / "copy")
    if not compressed:
        assert chunk_bytes(tmp_path / "copy") == chunk_bytes(tmp_path / "source")
    assert_same_values(zarr.open_array(str(tmp_path / "copy"), mode="r")[...], source[...])


def test_default_fill_and_fully_written(tmp_path, zarrkit):
    source = write(tmp_path / "source", "string", 3, compressed=False, region=(Ellipsis,), fill=False, seed=3)
    assert v3_metadata(tmp_path / "source")["fill_value"] == ""
    zarrkit.run("cp", tmp_path / "source", tmp_path / "copy")
    assert chunk_bytes(tmp_path / "copy") == chunk_bytes(tmp_path / "source")
    assert_same_values(zarr.open_array(str(tmp_path / "copy"), mode="r")[...], source[...])


def test_info_names_the_data_type(tmp_path, zarrkit):
    write(tmp_path / "v3", "string", 3, compressed=True)
    write(tmp_path / "v2", "bytes", 2, compressed=True)
    assert "string" in zarrkit.run("info", tmp_path / "v3").stdout
    info = zarrkit.run("info", tmp_path / "v2").stdout
    assert "bytes (|O)" in info
    assert "vlen-bytes" in info


@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize("kind", list(KINDS))
def test_export_writes_fixed_width_numpy_strings(tmp_path, zarrkit, kind, zarr_format):
    # As wide as the longest element selected: <U for text, S for bytes (NumPy's own
    # conversion of what zarr-python reads, trailing NULs dropped as NumPy drops them).
    array = write(tmp_path / "a", kind, zarr_format, compressed=True)
    numpy_kind = str if kind == "string" else "S"
    for select, index in ((None, ...), ("1:5,::2", (slice(1, 5), slice(None, None, 2)))):
        out = tmp_path / "a.npy"
        zarrkit.run("export", tmp_path / "a", out, *(["--select", select] if select else []))
        got = np.load(out)
        expected = np.array(np.asarray(array[index], dtype=object).tolist(), dtype=numpy_kind)
        assert got.dtype.kind == ("U" if kind == "string" else "S")
        assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
        np.testing.assert_array_equal(got, expected)
