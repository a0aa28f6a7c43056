"""Variable-length strings (Zarr v3 string / vlen-utf8, v2 object arrays with a vlen filter)."""

from __future__ import annotations

import warnings

import numcodecs
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


@pytest.mark.parametrize("kind", ["str", "bytes"])
@pytest.mark.parametrize("zarr_format", [2, 3])
def test_coordinate_and_mask_selections_of_strings(tmp_path, kind, zarr_format):
    """vindex and masks on variable-length strings and bytes, read and write, against NumPy;
    zarr-python reads what was written."""
    model = np.array([[f"r{i}c{j}" + "é" * (i % 3) for j in range(7)] for i in range(9)], dtype=object)
    path = tmp_path / "s.zarr"
    if kind == "str":
        a = zarrkit.create_array(path, shape=model.shape, chunks=(4, 3), dtype=str, zarr_format=zarr_format)
    else:
        # Variable-length bytes arrays come from zarr-python (zarrkit's create_array takes
        # NumPy dtypes, which have no variable-length bytes).
        from zarr.core.dtype import VariableLengthBytes

        model = np.array([[v.encode() for v in row] for row in model], dtype=object)
        dtype = VariableLengthBytes()
        extra = {} if zarr_format == 3 else {"filters": [numcodecs.VLenBytes()], "compressors": None}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # zarr-python's "unstable data type" warning
            zarr.create_array(str(path), shape=model.shape, chunks=(4, 3), dtype=dtype, zarr_format=zarr_format,
                              **extra)
        a = zarrkit.open_array(path)
    a[...] = model
    rows, cols = np.array([[0, 8], [3, 3]]), np.array([[6, 0], [-1, 2]])
    np.testing.assert_array_equal(a.vindex[rows, cols], model[rows, cols])
    mask = (np.arange(63).reshape(9, 7) % 4) == 1
    np.testing.assert_array_equal(a.vindex[mask], model[mask])
    np.testing.assert_array_equal(a.get_mask_selection(mask), model[mask])

    new = (lambda s: s) if kind == "str" else (lambda s: s.encode())
    a.vindex[[1, 1, 7], [2, 2, -3]] = [new("first"), new("last wins"), new("x")]
    model[[1, 7], [2, 4]] = [new("last wins"), new("x")]
    a[mask] = new("m")  # broadcast over the selected elements
    model[mask] = new("m")
    np.testing.assert_array_equal(a.blocks[1, 1:], model[4:8, 3:7])
    a.blocks[2, 0] = new("b")  # the last block row: rows 8 (the array ends there), cols 0-2
    model[8:9, 0:3] = new("b")
    np.testing.assert_array_equal(a[...], model)
    read_back = zarr.open_array(str(path), mode="r")[...]
    np.testing.assert_array_equal(read_back.astype(object), model)
