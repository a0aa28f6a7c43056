"""Sharded arrays (v3 sharding_indexed) between zarrkit, zarr-python 3 and tensorstore.

zarrkit writes shards byte for byte as zarr-python does (inner chunks in zarr-python's Morton
order, empty ones left out, index at the end with crc32c). tensorstore lays inner chunks out in
C order instead, so its shards equal zarrkit's byte for byte where the two orders agree (one
axis with more than one inner chunk) and otherwise hold the same inner chunk bytes under the
same index entries. Every shard any of them writes reads in the others with the same values,
for both index locations and for nested sharding.
"""

from pathlib import Path

import numpy as np
import pytest
import tensorstore as ts
import zarr

from zk_interop import assert_same_array, sample_values, smooth_values, v3_metadata

LITTLE = {"name": "bytes", "configuration": {"endian": "little"}}
CRC = {"name": "crc32c"}


def chunk_files(array_path) -> dict[str, bytes]:
    root = Path(array_path)
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*")
            if p.is_file() and p.name != "zarr.json"}


def with_zero_blocks(values: np.ndarray) -> np.ndarray:
    """VALUES with a zero (fill) corner and a zero band, so that some inner chunks are empty
    and some shards hold nothing at all."""
    out = values.copy()
    out[: out.shape[0] // 2, : out.shape[1] // 3] = 0
    out[-2:, :] = 0
    return out


# ---- zarrkit writes what zarr-python writes ---------------------------------------------------

@pytest.mark.parametrize("shape,chunks,shards", [
    ((10, 9), (2, 3), (4, 6)),        # ragged edge shards
    ((16, 16), (2, 2), (8, 8)),       # 4x4 inner chunks: Morton order differs from C order
    ((37,), (4,), (16,)),             # 1-d
    ((6, 5, 8), (1, 5, 2), (3, 5, 4)),
])
@pytest.mark.parametrize("dtype", ["int32", "float64", "uint8"])
def test_import_shards_byte_identical_to_zarr_python(tmp_path, zarrkit, shape, chunks, shards, dtype):
    values = with_zero_blocks(smooth_values(dtype, shape)) if len(shape) > 1 else smooth_values(dtype, shape)
    z = zarr.create_array(tmp_path / "zp", shape=shape, chunks=chunks, shards=shards, dtype=dtype)
    z[...] = values
    zarrkit.import_npy(values, tmp_path / "zk", "--chunks", ",".join(map(str, chunks)),
                       "--shards", ",".join(map(str, shards)))
    expected = chunk_files(tmp_path / "zp")
    assert chunk_files(tmp_path / "zk") == expected
    assert len(expected) > 0
    meta = v3_metadata(tmp_path / "zk")
    assert meta["chunk_grid"]["configuration"]["chunk_shape"] == list(shards)
    assert meta["codecs"][0]["name"] == "sharding_indexed"
    assert_same_array(zarr.open_array(tmp_path / "zk")[...], values)


def test_cp_shards_unsharded_zarr_python_array(tmp_path, zarrkit):
    values = with_zero_blocks(smooth_values("int16", (20, 12)))
    src = zarr.create_array(tmp_path / "src", shape=values.shape, chunks=(5, 3), dtype="int16")
    src[...] = values
    zarrkit.run("cp", tmp_path / "src", tmp_path / "zk", "--shards", "10,6")  # source chunks go inside
    ref = zarr.create_array(tmp_path / "zp", shape=values.shape, chunks=(5, 3), shards=(10, 6), dtype="int16")
    ref[...] = values
    assert chunk_files(tmp_path / "zk") == chunk_files(tmp_path / "zp")
    assert_same_array(zarrkit.export(tmp_path / "zk"), values)


def test_cp_reshards_and_unshards(tmp_path, zarrkit):
    values = smooth_values("float32", (16, 12))
    src = zarr.create_array(tmp_path / "src", shape=values.shape, chunks=(2, 3), shards=(4, 6), dtype="float32")
    src[...] = values
    zarrkit.run("cp", tmp_path / "src", tmp_path / "bigger", "--shards", "8,12")
    meta = v3_metadata(tmp_path / "bigger")
    assert meta["chunk_grid"]["configuration"]["chunk_shape"] == [8, 12]
    assert meta["codecs"][0]["configuration"]["chunk_shape"] == [2, 3]
    assert_same_array(zarr.open_array(tmp_path / "bigger")[...], values)
    # To v2: the inner chunks become the v2 chunks.
    zarrkit.run("cp", tmp_path / "src", tmp_path / "v2", "--zarr-format", "2")
    v2 = zarr.open_array(tmp_path / "v2")
    assert v2.chunks == (2, 3)
    assert_same_array(v2[...], values)


def test_shards_option_errors(tmp_path, zarrkit):
    values = smooth_values("int32", (8, 8))
    zarrkit.import_npy(values, tmp_path / "ok", "--chunks", "2,2")
    assert "multiple" in zarrkit.expect_error("cp", tmp_path / "ok", tmp_path / "a", "--shards", "5,4", exit_code=2)
    assert "v2" in zarrkit.expect_error("cp", tmp_path / "ok", tmp_path / "b", "--shards", "4,4",
                                        "--zarr-format", "2", exit_code=2)
    from zk_interop import save_npy
    npy = save_npy(tmp_path / "in", values)
    assert "--chunks" in zarrkit.expect_error("import", npy, tmp_path / "c", "--shards", "4,4", exit_code=2)


# ---- tensorstore ----------------------------------------------------------------------------

def sharding(inner, codecs, location=None, index_codecs=(LITTLE, CRC)):
    config = {"chunk_shape": list(inner), "codecs": list(codecs), "index_codecs": list(index_codecs)}
    if location is not None:
        config["index_location"] = location
    return {"name": "sharding_indexed", "configuration": config}


TS_LAYOUTS = {
    "end-1d": ((40,), (16,), [sharding((4,), [LITTLE])]),
    "start-1d": ((40,), (16,), [sharding((4,), [LITTLE], "start")]),
    "end-2d": ((10, 12), (4, 6), [sharding((2, 3), [LITTLE])]),
    "start-2d": ((10, 12), (4, 6), [sharding((2, 3), [LITTLE], "start")]),
    "nested-1d": ((40,), (16,), [sharding((8,), [sharding((2,), [LITTLE], "start")])]),
    "nested-2d": ((12, 8), (6, 8), [sharding((3, 4), [sharding((1, 2), [LITTLE])], "start")]),
    "row-shards": ((6, 20), (1, 20), [sharding((1, 5), [LITTLE])]),  # one non-trivial inner axis
}


def ts_create(path, shape, shards, codecs, dtype="int32"):
    return ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(path)},
                    "metadata": {"shape": list(shape), "data_type": dtype, "fill_value": 0,
                                 "chunk_grid": {"name": "regular",
                                                "configuration": {"chunk_shape": list(shards)}},
                                 "codecs": codecs}},
                   create=True, delete_existing=True).result()


def ts_values(shape):
    values = sample_values("int32", shape, seed=11)
    values.reshape(-1)[: values.size // 4] = 0  # empty inner chunks at the start
    return values


def index_entries(shard: bytes, n: int, location: str, index_size: int):
    index = shard[:index_size] if location == "start" else shard[-index_size:]
    return np.frombuffer(index[: 16 * n], "<u8").reshape(n, 2)


def inner_chunks_by_entry(shard: bytes, n: int, location: str, index_size: int):
    """{inner chunk ordinal: its stored bytes} of a shard, following its index."""
    entries = index_entries(shard, n, location, index_size)
    return {i: shard[int(o): int(o) + int(b)] for i, (o, b) in enumerate(entries) if o != 2**64 - 1}


@pytest.mark.parametrize("layout", TS_LAYOUTS)
def test_tensorstore_shards_read_by_zarrkit(tmp_path, zarrkit, layout):
    shape, shards, codecs = TS_LAYOUTS[layout]
    values = ts_values(shape)
    store = ts_create(tmp_path / "ts", shape, shards, codecs)
    store[...].write(values).result()
    assert_same_array(zarrkit.export(tmp_path / "ts"), values)
    # Partial reads (index, then the inner chunks needed): a strided, reversed selection.
    sel = "::-3" if len(shape) == 1 else "1:9:2,::-5"
    index = (slice(None, None, -3),) if len(shape) == 1 else (slice(1, 9, 2), slice(None, None, -5))
    assert_same_array(zarrkit.export(tmp_path / "ts", select=sel), values[index])


@pytest.mark.parametrize("layout", TS_LAYOUTS)
def test_zarrkit_shards_read_by_tensorstore_and_matching_its_bytes(tmp_path, zarrkit, layout):
    shape, shards, codecs = TS_LAYOUTS[layout]
    values = ts_values(shape)
    reference = ts_create(tmp_path / "ts", shape, shards, codecs)
    reference[...].write(values).result()
    # zarrkit re-encodes tensorstore's array with the same codecs.
    zarrkit.run("cp", tmp_path / "ts", tmp_path / "zk")
    read_back = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(tmp_path / "zk")}},
                        open=True).result().read().result()
    assert_same_array(read_back, values)

    ours, theirs = chunk_files(tmp_path / "zk"), chunk_files(tmp_path / "ts")
    assert ours.keys() == theirs.keys()
    top = codecs[0]["configuration"]
    n = int(np.prod(np.array(shards) // np.array(top["chunk_shape"])))
    location = top.get("index_location", "end")
    index_size = 16 * n + 4
    grid = np.array(shards) // np.array(top["chunk_shape"])
    one_inner_axis = int(np.sum(grid > 1)) <= 1
    nested = top["codecs"][0]["name"] == "sharding_indexed"
    for key in theirs:
        if one_inner_axis and not nested:
            assert ours[key] == theirs[key], f"shard {key} differs from tensorstore's"
        else:
            # Same inner chunks under the same entries; tensorstore orders them differently.
            mine = inner_chunks_by_entry(ours[key], n, location, index_size)
            other = inner_chunks_by_entry(theirs[key], n, location, index_size)
            assert mine.keys() == other.keys(), f"shard {key}: different inner chunks stored"
            if not nested:
                assert mine == other, f"shard {key}: inner chunk bytes differ from tensorstore's"


def test_tensorstore_nested_shards_byte_identical_in_one_dimension(tmp_path, zarrkit):
    # A 1-d inner grid on both levels: Morton order and C order agree, so the bytes must too.
    shape, shards = (64,), (32,)
    codecs = [sharding((8,), [sharding((2,), [LITTLE])])]
    values = np.arange(64, dtype="int32") + 1
    ts_create(tmp_path / "ts", shape, shards, codecs)[...].write(values).result()
    zarrkit.run("cp", tmp_path / "ts", tmp_path / "zk")
    assert chunk_files(tmp_path / "zk") == chunk_files(tmp_path / "ts")
