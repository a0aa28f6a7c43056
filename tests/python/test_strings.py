"""Variable-length strings (Zarr v3 string / vlen-utf8, v2 object arrays with a vlen filter)."""

from __future__ import annotations

import numpy as np
import pytest
import zarr

import zarrkit

WORDS = np.array([["a", "bb", ""], ["dddd", "é", "漢字"], ["x" * 100, "y", "z"], ["", "", "end"]])


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_strings_round_trip_and_interop(tmp_path, zarr_format):
    path = tmp_path / "s.zarr"
    a = zarrkit.create_array(path, shape=WORDS.shape, chunks=(3, 2), dtype=str, zarr_format=zarr_format)
    assert a.dtype == np.dtypes.StringDType()
    assert a.fill_value == ""
    np.testing.assert_array_equal(a[:], np.full(WORDS.shape, ""))
    a[...] = WORDS
    np.testing.assert_array_equal(a[...], WORDS)
    assert a[1, 2] == "漢字"
    np.testing.assert_array_equal(a[::-1, [2, 0]], WORDS[::-1, [2, 0]])
    np.testing.assert_array_equal(a.oindex[[3, 0], [True, False, True]], WORDS[np.ix_([3, 0], [0, 2])])
    a[1:3, 1] = "new"
    expected = WORDS.astype(object)
    expected[1:3, 1] = "new"
    np.testing.assert_array_equal(a[...], expected.astype(str))
    # zarr-python reads what zarrkit wrote, and the reverse.
    np.testing.assert_array_equal(zarr.open_array(path, mode="r")[...], expected.astype(str))
    z = zarr.open_array(path, mode="r+")
    z[0, 0] = "from zarr"
    assert zarrkit.open_array(path, mode="r")[0, 0] == "from zarr"


def test_string_elements_must_be_text(store):
    a = zarrkit.create_array(store, shape=(2,), dtype=str)
    a[:] = ["ok", 5]  # NumPy turns numbers into their text, as for any string array
    assert a[1] == "5"
