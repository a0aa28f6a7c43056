"""Coordinate (vindex), mask and block selections, resize and append, against NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import zarrkit

SHAPE = (11, 14)


@pytest.fixture
def arrays(store):
    data = np.arange(np.prod(SHAPE), dtype="i4").reshape(SHAPE)
    return data, zarrkit.create_array(store, data=data, chunks=(4, 5))


COORDINATES = [
    ([0, 10, 3, 3], [13, 0, 4, 4]),
    (np.array([[1, 2], [9, 10]]), np.array([[0, 13], [5, 6]])),
    (np.array([1, 2, 3]), 7),
    ([-1, -11], [-14, 2]),
    (np.array([], dtype=int), np.array([], dtype=int)),
]


@pytest.mark.parametrize("key", COORDINATES, ids=repr)
def test_coordinate_reads_and_writes(arrays, key):
    data, a = arrays
    np.testing.assert_array_equal(a.vindex[key], data[key])
    np.testing.assert_array_equal(a.get_coordinate_selection(key), data[key])
    if not isinstance(key[1], int):
        np.testing.assert_array_equal(a[key], data[key])  # NumPy's own vectorised form
    values = -np.arange(np.size(data[key]), dtype="i4").reshape(np.shape(data[key])) - 1
    data[key] = values
    a.vindex[key] = values
    np.testing.assert_array_equal(a[...], data)


def test_mask_reads_and_writes(arrays):
    data, a = arrays
    mask = (data % 7 == 0) | (data > 140)
    np.testing.assert_array_equal(a.vindex[mask], data[mask])
    np.testing.assert_array_equal(a[mask], data[mask])
    np.testing.assert_array_equal(a.get_mask_selection(mask), data[mask])
    data[mask] = -5
    a[mask] = -5
    np.testing.assert_array_equal(a[...], data)
    values = np.arange(mask.sum(), dtype="i4")
    data[mask] = values
    a.set_mask_selection(mask, values)
    np.testing.assert_array_equal(a[...], data)


@pytest.mark.parametrize("key", [0, (1, 2), (slice(1, 3), -1), (Ellipsis, 0)], ids=repr)
def test_block_reads_and_writes(arrays, key):
    data, a = arrays
    chunks = (4, 5)
    items = key if isinstance(key, tuple) else (key,)
    if Ellipsis in items:
        items = (slice(None),) * (2 - (len(items) - 1)) + tuple(i for i in items if i is not Ellipsis)
    items = items + (slice(None),) * (2 - len(items))
    element = []
    for item, c, n in zip(items, chunks, SHAPE, strict=True):
        if isinstance(item, int):
            b = item % -(-n // c)
            element.append(slice(b * c, min((b + 1) * c, n)))
        else:
            start, stop, _ = item.indices(-(-n // c))
            element.append(slice(start * c, min(stop * c, n)))
    expected = data[tuple(element)]
    np.testing.assert_array_equal(a.blocks[key], expected)
    a.blocks[key] = -expected
    data[tuple(element)] = -expected
    np.testing.assert_array_equal(a[...], data)


def test_resize_and_append(store):
    a = zarrkit.create_array(store, data=np.arange(20, dtype="i8").reshape(4, 5), chunks=(3, 3), fill_value=-1)
    a.resize((6, 7))
    assert a.shape == (6, 7) and a.metadata["shape"] == [6, 7]
    expected = np.full((6, 7), -1, dtype="i8")
    expected[:4, :5] = np.arange(20).reshape(4, 5)
    np.testing.assert_array_equal(a[...], expected)
    a.resize(2, 2)
    a.resize(4, 4)
    expected = np.full((4, 4), -1, dtype="i8")
    expected[:2, :2] = [[0, 1], [5, 6]]
    np.testing.assert_array_equal(a[...], expected)  # never old data past the edge
    assert a.append(np.ones((3, 4), dtype="i8")) == (7, 4)
    assert a.append(np.zeros((7, 2), dtype="i8"), axis=1) == (7, 6)
    expected = np.concatenate([np.concatenate([expected, np.ones((3, 4), "i8")]), np.zeros((7, 2), "i8")], axis=1)
    np.testing.assert_array_equal(a[...], expected)
    assert zarrkit.open_array(a.store, path=a.path).shape == (7, 6)


def test_fancy_errors(arrays):
    _, a = arrays
    with pytest.raises(IndexError, match="out of bounds"):
        a.vindex[[0, 11], [0, 0]]
    with pytest.raises(IndexError, match="one integer array per axis"):
        a.vindex[[0, 1]]
    with pytest.raises(IndexError, match="boolean array of the array's shape"):
        a.get_mask_selection(np.ones((2, 2), dtype=bool))
    with pytest.raises(IndexError, match="block selections"):
        a.blocks[[0, 1]]
    with pytest.raises(IndexError, match="block index 99 is out of bounds for axis 0"):
        a.blocks[99]
    with pytest.raises(IndexError, match="out of bounds for axis 1"):
        a.blocks[..., -99] = 0
    with pytest.raises(ValueError):
        a.append(np.ones(3))


@pytest.mark.parametrize("layout", ["v2", "v3", "v3-sharded"])
def test_zarr_python_reads_what_fancy_writes_wrote(tmp_path, layout):
    """Coordinate, mask and block writes land in chunks zarr-python reads back exactly."""
    import zarr

    path = tmp_path / "a.zarr"
    kwargs = {"v2": {"zarr_format": 2}, "v3": {}, "v3-sharded": {"shards": (8, 12)}}[layout]
    a = zarrkit.create_array(path, shape=(16, 24), chunks=(4, 6), dtype="i4", fill_value=-1, **kwargs)
    model = np.full((16, 24), -1, dtype="i4")
    rows, cols = np.array([0, 5, 15, 5]), np.array([23, 1, 0, 1])
    a.vindex[rows, cols] = [10, 11, 12, 13]
    model[rows, cols] = [10, 11, 12, 13]
    mask = (np.arange(16 * 24).reshape(16, 24) % 11) == 3
    a.vindex[mask] = np.arange(mask.sum())
    model[mask] = np.arange(mask.sum())
    a.blocks[1, 2:4] = 7  # blocks of the shard grid when sharded, as in zarr-python
    r, c = (8, 12) if layout == "v3-sharded" else (4, 6)
    model[r : 2 * r, 2 * c : 4 * c] = 7
    got = zarr.open_array(str(path), mode="r")[...]
    np.testing.assert_array_equal(got, model)
