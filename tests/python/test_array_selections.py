"""Integer and boolean lists: NumPy indexing (one list) and orthogonal indexing (oindex)."""

from __future__ import annotations

import numpy as np
import pytest

import zarrkit

SHAPE = (13, 17, 5)

NUMPY_KEYS = [
    [0, 3, 3, 12],
    ([4, 1], slice(None), 2),
    (slice(2, 9), [16, 0, 5]),
    (np.array([True, False] * 6 + [True]),),
    (Ellipsis, [4, 0]),
    (1, slice(None), [0, 4]),  # int and list apart: NumPy moves the list's axis first
    (2, [3, -1], slice(None)),
    (slice(None, None, -2), [2], slice(1, None, -1)),
    ([-1, -13],),
]

ORTHOGONAL_KEYS = [
    ([0, 12, 5], [1, 1, 16], slice(None)),
    (np.arange(13) % 3 == 0, slice(None, None, -3), [4, 0]),
    ([2], 3, np.array([True, False, True, False, True])),
    (slice(None), [], 1),
]


def ortho_reference(data, key):
    # np.ix_ semantics: turn each list into an index array, leave ints and slices.
    ix = []
    for k, n in zip(key + (slice(None),) * (data.ndim - len(key)), data.shape, strict=True):
        if isinstance(k, (int, np.integer)):
            ix.append(np.array([k]))
        elif isinstance(k, slice):
            ix.append(np.arange(n)[k])
        else:
            a = np.asarray(k)
            ix.append(np.nonzero(a)[0] if a.dtype == bool else a.astype(int))
    result = data[np.ix_(*ix)]
    drop = tuple(i for i, k in enumerate(key) if isinstance(k, (int, np.integer)))
    return result.squeeze(axis=drop) if drop else result


@pytest.fixture
def arrays(store):
    data = np.arange(np.prod(SHAPE), dtype="i4").reshape(SHAPE)
    return data, zarrkit.create_array(store, data=data, chunks=(4, 5, 2))


@pytest.mark.parametrize("key", NUMPY_KEYS, ids=repr)
def test_numpy_indexing_reads(arrays, key):
    data, a = arrays
    expected = data[key]
    got = a[key]
    assert got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("key", NUMPY_KEYS, ids=repr)
def test_numpy_indexing_writes(arrays, key):
    data, a = arrays
    values = np.random.default_rng(0).integers(-100, 0, size=data[key].shape).astype("i4")
    data[key] = values
    a[key] = values
    np.testing.assert_array_equal(a[...], data)


@pytest.mark.parametrize("key", ORTHOGONAL_KEYS, ids=repr)
def test_orthogonal_reads_and_writes(arrays, key):
    data, a = arrays
    expected = ortho_reference(data, key)
    np.testing.assert_array_equal(a.oindex[key], expected)
    np.testing.assert_array_equal(a.get_orthogonal_selection(key), expected)
    values = -np.arange(expected.size, dtype="i4").reshape(expected.shape) - 1
    a.oindex[key] = values
    after = a[...]
    np.testing.assert_array_equal(a.oindex[key], ortho_reference(after, key))
    # Everything outside the selection is unchanged.
    touched = ortho_reference(np.arange(data.size).reshape(data.shape), key).ravel()
    untouched = np.setdiff1d(np.arange(data.size), touched)
    np.testing.assert_array_equal(after.ravel()[untouched], data.ravel()[untouched])
    if len(np.unique(touched)) == len(touched):  # no repeats: every value landed
        np.testing.assert_array_equal(a.oindex[key], values)


def test_repeated_index_last_write_wins(store):
    a = zarrkit.create_array(store, shape=(6,), chunks=(4,), dtype="i4")
    a[[1, 5, 1]] = [10, 20, 30]
    expected = np.zeros(6, "i4")
    expected[[1, 5, 1]] = [10, 20, 30]
    np.testing.assert_array_equal(a[:], expected)


def test_list_errors(arrays):
    _, a = arrays
    with pytest.raises(IndexError, match="vindex"):
        a[[0, 1], [0, 1], 1:3]
    with pytest.raises(IndexError, match="out of bounds"):
        a[[0, 13]]
    with pytest.raises(IndexError, match="does not match"):
        a[np.array([True, False])]
    with pytest.raises(IndexError, match="unsupported index"):
        a[np.ones((2, 2), dtype=bool)]
    with pytest.raises(IndexError, match="basic selection"):
        a.get_basic_selection([0, 1])
    with pytest.raises(IndexError):
        a[[0.5]]
