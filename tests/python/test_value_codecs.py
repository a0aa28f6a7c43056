"""The zarr-extensions value codecs from Python: scale_offset and cast_value given as
filters (v3 dicts or bare names), written and read back through zarrkit."""

from __future__ import annotations

import json

import numpy as np
import pytest

import zarrkit
from zarrkit.errors import DataLossError, InvalidArgumentError


def test_scale_offset_then_cast_value_stores_rounded_integers(tmp_path):
    x = np.linspace(-10, 40, 60).reshape(6, 10)
    filters = [
        {"name": "scale_offset", "configuration": {"offset": -10, "scale": 100}},
        {"name": "cast_value", "configuration": {"data_type": "uint16", "rounding": "nearest-even"}},
    ]
    a = zarrkit.create_array(tmp_path / "a.zarr", shape=x.shape, chunks=(3, 5), dtype="f8", fill_value=0.0,
                             filters=filters, compressors=None)
    a[...] = x
    stored = np.rint((x + 10) * 100)  # what the chunks hold, as uint16
    np.testing.assert_array_equal(a[...], stored / 100 - 10)
    meta = json.loads((tmp_path / "a.zarr" / "zarr.json").read_text())
    assert [c["name"] for c in meta["codecs"]] == ["scale_offset", "cast_value", "bytes"]
    chunk = np.frombuffer((tmp_path / "a.zarr" / "c" / "0" / "0").read_bytes(), dtype="<u2").reshape(3, 5)
    np.testing.assert_array_equal(chunk, stored[:3, :5])


def test_cast_value_clamps_and_maps_nan(tmp_path):
    x = np.array([np.nan, -5.0, 0.4, 254.6, 300.0], dtype="f4")
    cast = {"name": "cast_value", "configuration": {
        "data_type": "uint8", "rounding": "towards-zero", "out_of_range": "clamp",
        "scalar_map": {"encode": [["NaN", 255]], "decode": [[255, "NaN"]]}}}
    a = zarrkit.create_array(tmp_path / "b.zarr", shape=(5,), chunks=(5,), dtype="f4", fill_value=float("nan"),
                             filters=[cast], compressors=None)
    a[...] = x
    np.testing.assert_array_equal(a[...], np.array([np.nan, 0, 0, 254, np.nan], dtype="f4"))
    assert (tmp_path / "b.zarr" / "c" / "0").read_bytes() == bytes([255, 0, 0, 254, 255])


def test_out_of_range_values_are_refused(tmp_path):
    a = zarrkit.create_array(tmp_path / "c.zarr", shape=(4,), chunks=(4,), dtype="i4", fill_value=0,
                             filters=[{"name": "cast_value", "configuration": {"data_type": "int8"}}])
    with pytest.raises(InvalidArgumentError, match="out of the range of int8"):
        a[...] = np.array([1, 2, 3, 1000], dtype="i4")
    b = zarrkit.create_array(tmp_path / "d.zarr", shape=(2,), chunks=(2,), dtype="i2", fill_value=0,
                             filters=[{"name": "scale_offset", "configuration": {"scale": 4}}], compressors=None)
    (tmp_path / "d.zarr" / "c").mkdir(exist_ok=True)
    (tmp_path / "d.zarr" / "c" / "0").write_bytes(np.array([8, 5], dtype="<i2").tobytes())
    with pytest.raises(DataLossError, match="not a multiple of the scale"):
        b[...]


def test_bad_configurations_are_refused_at_creation(tmp_path):
    with pytest.raises(InvalidArgumentError, match="rounding"):
        zarrkit.create_array(tmp_path / "e.zarr", shape=(4,), chunks=(4,), dtype="f8",
                             filters=[{"name": "cast_value", "configuration": {"data_type": "uint8",
                                                                                "rounding": "up"}}])
    with pytest.raises(InvalidArgumentError, match="scale must not be zero"):
        zarrkit.create_array(tmp_path / "f.zarr", shape=(4,), chunks=(4,), dtype="f8",
                             filters=[{"name": "scale_offset", "configuration": {"scale": 0}}])
