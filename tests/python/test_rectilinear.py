"""Arrays on a rectilinear chunk grid (chunk sizes listed per axis) against NumPy: creation as
zarr-python 3.4 spells it, the metadata it writes, every selection kind, writes, sharding,
resize and append, and the attributes zarr-python 3.4 gives such arrays."""

from __future__ import annotations

import json

import numpy as np
import pytest

import zarrkit
from zarrkit.errors import InvalidArgumentError

SHAPE = (30, 7)
CHUNKS = [[10, 10, 5, 5], 4]


def reference():
    return np.arange(np.prod(SHAPE), dtype="i4").reshape(SHAPE)


def make(store, **kwargs):
    kwargs.setdefault("chunks", CHUNKS)
    return zarrkit.create_array(store, name="a", data=reference(), **kwargs)


def test_metadata_is_what_zarr_python_34_writes(store):
    a = make(store)
    grid = a.metadata["chunk_grid"]
    assert grid == {"name": "rectilinear", "configuration": {"kind": "inline", "chunk_shapes": [[[10, 2], [5, 2]], 4]}}
    assert a.write_chunk_sizes == ((10, 10, 5, 5), (4, 3))
    assert a.read_chunk_sizes == a.write_chunk_sizes
    assert a.cdata_shape == (4, 2)
    assert a.nchunks == 8
    assert a.shards is None
    with pytest.raises(NotImplementedError, match="read_chunk_sizes"):
        a.chunks
    assert a.info.chunk_shape == "<variable>"
    assert "<variable>" in repr(a.info)


BASIC = [(), (slice(3, 27, 4), slice(None, None, -2)), (slice(None, None, -3), 5), (-1, -1), (Ellipsis, 3)]
ORTHOGONAL = [(np.array([29, 0, 10, 10, 19, 20]), slice(1, 6)), (np.arange(30) % 3 == 0, np.array([6, 0, 3]))]


@pytest.mark.parametrize("selection", BASIC, ids=repr)
def test_basic_reads_match_numpy(store, selection):
    np.testing.assert_array_equal(make(store)[selection], reference()[selection])


@pytest.mark.parametrize("selection", ORTHOGONAL, ids=repr)
def test_orthogonal_reads_match_numpy(store, selection):
    per_axis = [np.arange(n)[s] for n, s in zip(SHAPE, selection, strict=True)]
    np.testing.assert_array_equal(make(store).oindex[selection], reference()[np.ix_(*per_axis)])


def test_points_blocks_and_writes(store):
    a = make(store)
    expected = reference()
    rows, cols = np.array([29, 0, 12, 25]), np.array([6, 0, 5, 2])
    np.testing.assert_array_equal(a.vindex[rows, cols], expected[rows, cols])
    # Block (2, 1): rows 20..25, columns 4..7.
    np.testing.assert_array_equal(a.blocks[2, 1], expected[20:25, 4:7])
    a[4:23:3, 1:6] = -5
    expected[4:23:3, 1:6] = -5
    a.vindex[rows, cols] = [1, 2, 3, 4]
    expected[rows, cols] = [1, 2, 3, 4]
    a.blocks[3, 0] = 9
    expected[25:30, 0:4] = 9
    np.testing.assert_array_equal(a[...], expected)
    np.testing.assert_array_equal(zarrkit.open_array(a.store, path="a")[...], expected)


def test_sharded_rectilinear(store):
    a = make(store, chunks=(5, 4), shards=[[10, 20], 8])
    assert a.metadata["chunk_grid"]["configuration"]["chunk_shapes"] == [[10, 20], 8]
    assert a.chunks == (5, 4)
    with pytest.raises(NotImplementedError, match="write_chunk_sizes"):
        a.shards
    assert a.write_chunk_sizes == ((10, 20), (7,))
    assert a.read_chunk_sizes == ((5, 5, 5, 5, 5, 5), (4, 3))
    assert a.info.shard_shape == "<variable>"
    expected = reference()
    np.testing.assert_array_equal(a[2:29:5, ::-1], expected[2:29:5, ::-1])
    a[7:13] = 0
    expected[7:13] = 0
    np.testing.assert_array_equal(a[...], expected)


def test_resize_and_append_grow_as_zarr_python_does(store):
    a = make(store)
    a.resize((40, 7))
    assert a.metadata["chunk_grid"]["configuration"]["chunk_shapes"] == [[[10, 2], [5, 2], 10], 4]
    a.resize((12, 7))
    assert a.write_chunk_sizes == ((10, 2), (4, 3))
    assert a.append(np.ones((9, 7), dtype="i4")) == (21, 7)
    assert a.write_chunk_sizes == ((10, 10, 1), (4, 3))
    expected = np.concatenate([reference()[:12], np.ones((9, 7), dtype="i4")])
    np.testing.assert_array_equal(a[...], expected)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"chunks": [[10, 10, 5], 4]},  # short of the extent
        {"chunks": [[10, 0, 20], 4]},
        {"chunks": [[30]]},  # one axis for two
        {"chunks": [[10, 20], 4], "zarr_format": 2},
        {"chunks": [[10, 20], 4], "shards": [[10, 20], 8]},  # varying inner chunks
        {"chunks": (4, 4), "shards": [[10, 20], 8]},  # 10 is no multiple of 4
    ],
    ids=repr,
)
def test_refuses_bad_grids(store, kwargs):
    with pytest.raises(InvalidArgumentError):
        make(store, **kwargs)


def test_reads_a_grid_with_chunks_past_the_extent(tmp_path):
    """Metadata whose sizes cover more than the shape (what a shrink leaves) reads, and the
    padding of the last chunk stays out of sight."""
    a = zarrkit.create_array(str(tmp_path / "a.zarr"), shape=SHAPE, dtype="i4", chunks=CHUNKS, fill_value=3)
    a[...] = reference()
    document = json.loads((tmp_path / "a.zarr" / "zarr.json").read_text())
    document["shape"] = [27, 7]
    (tmp_path / "a.zarr" / "zarr.json").write_text(json.dumps(document))
    b = zarrkit.open_array(str(tmp_path / "a.zarr"), mode="r")
    assert b.write_chunk_sizes == ((10, 10, 5, 2), (4, 3))
    np.testing.assert_array_equal(b[...], reference()[:27])


def test_strings_on_a_rectilinear_grid(store):
    words = np.array([("ab" * (i % 4)) + "é" * (i % 3) for i in range(30)], dtype=np.dtypes.StringDType())
    a = zarrkit.create_array(store, name="s", shape=(30,), chunks=[[10, 10, 5, 5]], dtype=str)
    a[...] = words
    np.testing.assert_array_equal(a[...], words)
    np.testing.assert_array_equal(a[27:3:-4], words[27:3:-4])
    a[8:22] = "x"
    words[8:22] = "x"
    np.testing.assert_array_equal(zarrkit.open_array(store, path="s")[...], words)


def test_to_dask_takes_one_block_per_stored_chunk(store):
    pytest.importorskip("dask")
    a = make(store)
    x = zarrkit.to_dask(a)
    assert x.chunks == ((10, 10, 5, 5), (4, 3))
    np.testing.assert_array_equal(x.compute(), reference())


def test_xarray_reads_them_as_engine_zarr_does_with_zarr_python_34(tmp_path):
    """chunks and shards in the encoding: one size per axis where the sizes don't vary, the
    listed sizes where they do, as xarray's own engine gives them with zarr-python 3.4."""
    xr = pytest.importorskip("xarray")
    pytest.importorskip("dask")
    path = str(tmp_path / "d.zarr")
    group = zarrkit.open_group(path, mode="w")
    group.create_array("v", data=reference(), chunks=CHUNKS, dimension_names=["y", "x"])
    group.create_array("w", data=reference(), chunks=(5, 4), shards=[[10, 20], 8], dimension_names=["y", "x"])
    ds = xr.open_dataset(path, engine="zarrkit")
    assert ds["v"].encoding["chunks"] == ((10, 10, 5, 5), 4)
    assert ds["v"].encoding["preferred_chunks"] == {"y": (10, 10, 5, 5), "x": 4}
    assert ds["v"].encoding["shards"] is None
    assert ds["w"].encoding["chunks"] == (5, 4)
    assert ds["w"].encoding["shards"] == ((10, 20), 7)
    np.testing.assert_array_equal(ds["v"].values, reference())
    chunked = xr.open_dataset(path, engine="zarrkit", chunks={})
    assert chunked["v"].chunks == ((10, 10, 5, 5), (4, 3))
    assert chunked["w"].chunks == ((5, 5, 5, 5, 5, 5), (4, 3))
    np.testing.assert_array_equal(chunked["w"].values, reference())
