"""The v3 struct data type (zarr-extensions "struct") and its legacy spelling "structured".

zarr-python 3.1 (the pinned release here) writes the legacy form: {"name": "structured"} with
[name, type] field pairs, a Base64 fill value and a bytes codec without "endian"; zarrkit
reads it, and writes "struct" (field objects, a fill value per field), which tensorstore
reads field by field. zarr-python 3.4's "struct" both ways: test_zarr_python_34.py.
"""

import numpy as np
import pytest
import tensorstore as ts
import zarr

from zk_interop import assert_same_array, v3_metadata

RECORD = np.dtype([("id", "<i4"), ("weight", "<f8"), ("flag", "|b1"), ("when", "<M8[s]"), ("code", "S3")])


def records(count, seed=0):
    rng = np.random.default_rng(seed)
    out = np.zeros(count, dtype=RECORD)
    out["id"] = rng.integers(-(2**31), 2**31 - 1, count)
    out["weight"] = rng.standard_normal(count)
    out["weight"][:2] = [np.nan, -0.0]
    out["flag"] = rng.integers(0, 2, count)
    out["when"] = rng.integers(0, 2**40, count).astype("M8[s]")
    out["code"] = [b"ab", b"xyz", b""] * (count // 3) + [b"q"] * (count % 3)
    return out


FILL = np.array((-1, 2.5, True, np.datetime64(5, "s"), b"zz"), dtype=RECORD)[()]


def test_zarr_python_31_legacy_structured_read(tmp_path, zarrkit):
    values = records(10)
    array = zarr.create_array(str(tmp_path / "a"), shape=(10,), chunks=(4,), dtype=RECORD, fill_value=FILL,
                              zarr_format=3)
    array[:6] = values[:6]
    metadata = v3_metadata(tmp_path / "a")
    assert metadata["data_type"]["name"] == "structured"
    assert isinstance(metadata["fill_value"], str)  # Base64 of the packed record
    assert_same_array(zarrkit.export(tmp_path / "a"), array[...])
    # zarrkit's copy is written as "struct", the fill value per field.
    zarrkit.run("cp", tmp_path / "a", tmp_path / "copy")
    copied = v3_metadata(tmp_path / "copy")
    assert copied["data_type"]["name"] == "struct"
    assert [f["name"] for f in copied["data_type"]["configuration"]["fields"]] == list(RECORD.names)
    assert copied["fill_value"] == {"id": -1, "weight": 2.5, "flag": True, "when": 5, "code": "eno="}
    assert copied["codecs"][0] == {"name": "bytes", "configuration": {"endian": "little"}}
    assert_same_array(zarrkit.export(tmp_path / "copy"), array[...])


def test_zarrkit_struct_with_every_field_kind(tmp_path, zarrkit):
    values = records(9, seed=3)
    npy = tmp_path / "in.npy"
    np.save(npy, values)
    path = tmp_path / "s.zarr"
    zarrkit.run("import", npy, path, "--chunks", "4", "--fill-value",
                '{"id": 7, "weight": "NaN", "flag": false, "when": "NaT", "code": ""}')
    metadata = v3_metadata(path)
    assert metadata["fill_value"] == {"id": 7, "weight": "NaN", "flag": False, "when": -9223372036854775808,
                                      "code": ""}
    assert metadata["data_type"]["configuration"]["fields"][3] == {
        "name": "when", "data_type": {"name": "numpy.datetime64", "configuration": {"unit": "s", "scale_factor": 1}}}
    assert_same_array(zarrkit.export(path), values)


@pytest.mark.parametrize("codec", ["none", "zstd:level=1"])
def test_zarrkit_struct_read_by_tensorstore_field_by_field(tmp_path, zarrkit, codec):
    """tensorstore 0.1.86 reads struct fields one at a time, of types named by a string."""
    simple = np.dtype([("id", "<i4"), ("weight", "<f8"), ("flag", "|b1")])
    values = records(9, seed=3)[list(simple.names)].astype(simple)
    npy = tmp_path / "in.npy"
    np.save(npy, values)
    path = tmp_path / "s.zarr"
    zarrkit.run("import", npy, path, "--chunks", "4", "--codec", codec, "--fill-value",
                '{"id": 7, "weight": "NaN", "flag": false}')
    metadata = v3_metadata(path)
    assert metadata["data_type"]["name"] == "struct"
    for name in ["id", "weight", "flag"]:
        field = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(path)}, "field": name}).result()
        np.testing.assert_array_equal(field.read().result(), values[name])
    assert_same_array(zarrkit.export(path), values)
