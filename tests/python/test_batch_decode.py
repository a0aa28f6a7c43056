"""zarrkit.decode_chunks: stored chunks decoded in one batch, into new or given NumPy arrays
(the device variant is in test_gpu.py), for v3, v2 and sharded arrays, compared with the
array's own reads; typed errors that name the chunk."""

from __future__ import annotations

import json

import numpy as np
import pytest

import zarrkit
from zarrkit import errors

SHAPE = (40, 30)
CHUNKS = (16, 12)


def values(dtype="i4"):
    return (np.arange(np.prod(SHAPE)).reshape(SHAPE) * 7 % 1009).astype(dtype)


def chunk_keys(a):
    grid = [range(-(-s // c)) for s, c in zip(a.shape, CHUNKS if a.shards is None else a.shards)]
    if a.zarr_format == 2:
        return [f"{i}.{j}" for i in grid[0] for j in grid[1]], [(i, j) for i in grid[0] for j in grid[1]]
    return [f"c/{i}/{j}" for i in grid[0] for j in grid[1]], [(i, j) for i in grid[0] for j in grid[1]]


def make(store, kind, dtype="i4"):
    data = values(dtype)
    if kind == "v3-zstd":
        a = zarrkit.create_array(store, data=data, chunks=CHUNKS, compressors=[{"name": "zstd", "configuration": {"level": 1}}], fill_value=-3)
    elif kind == "v2-blosc":
        a = zarrkit.create_array(store, data=data, chunks=CHUNKS, zarr_format=2, compressors=[{"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1}], fill_value=-3)
    else:  # sharded
        a = zarrkit.create_array(store, data=data, chunks=(8, 6), shards=CHUNKS, fill_value=-3)
    return a, data


def chunk_of(data, index, fill):
    """The chunk at `index` of `data`, padded with `fill` to a whole chunk."""
    full = np.full(CHUNKS, fill, dtype=data.dtype)
    part = data[index[0] * CHUNKS[0] : (index[0] + 1) * CHUNKS[0], index[1] * CHUNKS[1] : (index[1] + 1) * CHUNKS[1]]
    full[: part.shape[0], : part.shape[1]] = part
    return full


@pytest.mark.parametrize("kind", ["v3-zstd", "v2-blosc", "sharded"])
def test_whole_chunks_decode_as_the_array_reads(store, kind):
    a, data = make(store, kind)
    keys, indices = chunk_keys(a)
    stored = store.get_many(keys)
    got = zarrkit.decode_chunks(a, stored)
    assert len(got) == len(keys)
    for out, index in zip(got, indices):
        assert isinstance(out, np.ndarray) and out.dtype == np.dtype("i4")
        np.testing.assert_array_equal(out, chunk_of(data, index, -3))


@pytest.mark.parametrize("kind", ["v3-zstd", "v2-blosc", "sharded"])
def test_parts_into_given_strided_outputs_and_absent_chunks(store, kind):
    a, data = make(store, kind)
    keys, indices = chunk_keys(a)
    stored = store.get_many(keys[:2]) + [None]
    selections = [(slice(1, 15, 3), slice(None, None, -2)), (4, [0, 11, 3]), ...]
    wide = np.zeros((5, 12), dtype="i4")
    outs = [wide[:, ::2], np.zeros(3, dtype="i4"), np.zeros(CHUNKS, dtype="i4")]
    # The metadata document (as JSON text) works as the array does.
    result = zarrkit.decode_chunks(json.dumps(a.metadata), stored, selections=selections, out=outs)
    assert all(r is o for r, o in zip(result, outs))
    np.testing.assert_array_equal(wide[:, ::2], chunk_of(data, indices[0], -3)[selections[0]])
    assert not wide[:, 1::2].any()  # the gaps of the strided output are untouched
    np.testing.assert_array_equal(outs[1], chunk_of(data, indices[1], -3)[selections[1]])
    np.testing.assert_array_equal(outs[2], np.full(CHUNKS, -3, dtype="i4"))


def test_a_corrupt_chunk_is_named_and_the_others_decode(store):
    a, data = make(store, "v3-zstd")
    keys, indices = chunk_keys(a)
    stored = [bytes(v) for v in store.get_many(keys[:3])]
    stored[1] = stored[1][: len(stored[1]) // 2]
    outs = [np.zeros(CHUNKS, dtype="i4") for _ in range(3)]
    with pytest.raises(errors.DataLossError, match="chunk 1 of the batch"):
        zarrkit.decode_chunks(a, stored, out=outs)
    np.testing.assert_array_equal(outs[0], chunk_of(data, indices[0], -3))
    np.testing.assert_array_equal(outs[2], chunk_of(data, indices[2], -3))


def test_wrong_outputs_and_arguments_are_refused(store):
    a, _ = make(store, "v3-zstd")
    stored = store.get_many(chunk_keys(a)[0][:1])
    with pytest.raises(ValueError, match="output 0"):
        zarrkit.decode_chunks(a, stored, out=[np.zeros((2, 2), dtype="i4")])
    with pytest.raises(ValueError, match="output 0"):
        zarrkit.decode_chunks(a, stored, out=[np.zeros(CHUNKS, dtype="f4")])
    with pytest.raises(ValueError, match="selections"):
        zarrkit.decode_chunks(a, stored, selections=[(), ()])
    with pytest.raises(ValueError, match="read-only"):
        out = np.zeros(CHUNKS, dtype="i4")
        out.flags.writeable = False
        zarrkit.decode_chunks(a, stored, out=[out])
    with pytest.raises(TypeError, match="metadata"):
        zarrkit.decode_chunks(42, stored)
    with pytest.raises(IndexError):
        zarrkit.decode_chunks(a, stored, selections=[(CHUNKS[0], 0)])
    assert zarrkit.decode_chunks(a, []) == []


def test_chunks_written_by_zarr_python_decode(tmp_path):
    zarr = pytest.importorskip("zarr")
    data = values("f8")
    z = zarr.create_array(tmp_path / "z.zarr", shape=SHAPE, chunks=CHUNKS, dtype="f8", fill_value=np.nan)
    z[:] = data
    store = zarrkit.storage.LocalStore(tmp_path / "z.zarr")
    metadata = json.loads(store.get("zarr.json"))
    got = zarrkit.decode_chunks(metadata, store.get_many(["c/0/0", "c/2/2", "c/9/9"]))
    np.testing.assert_array_equal(got[0], data[:16, :12])
    np.testing.assert_array_equal(got[1][:8, :6], data[32:, 24:])
    assert np.isnan(got[1][8:, :]).all() and np.isnan(got[2]).all()


@pytest.mark.parametrize("kind", ["v3-zstd", "v2-blosc", "sharded"])
def test_read_chunks_reads_the_keys_itself(store, kind):
    a, data = make(store, kind)
    keys, indices = chunk_keys(a)
    got = zarrkit.read_chunks(a, store, keys + ["c/9/9" if a.zarr_format == 3 else "9.9"])
    for out, index in zip(got, indices):
        np.testing.assert_array_equal(out, chunk_of(data, index, -3))
    np.testing.assert_array_equal(got[-1], np.full(CHUNKS, -3, dtype="i4"))
    part = zarrkit.read_chunks(a, store, keys[:1], selections=[(slice(2, 9), 5)], out=[np.zeros(7, dtype="i4")])
    np.testing.assert_array_equal(part[0], data[2:9, 5])
    with pytest.raises(TypeError, match="zarrkit.storage"):
        zarrkit.read_chunks(a, {"c/0/0": b""}, keys[:1])
