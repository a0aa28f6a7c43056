"""Consolidated metadata between zarrkit and zarr-python 3: v3 inline `consolidated_metadata`
in the group's zarr.json, v2 `.zmetadata`. zarrkit writes the same documents zarr-python
writes for the same hierarchy, zarr-python opens what zarrkit consolidates, and zarrkit uses
zarr-python's consolidated metadata instead of the per-node documents."""

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import zarr

from zk_interop import assert_same_array, smooth_values


def make_hierarchy(path, zarr_format):
    root = zarr.open_group(path, mode="w", zarr_format=zarr_format, attributes={"title": "t"})
    a = root.create_array("a", shape=(6,), chunks=(4,), dtype="int32", attributes={"x": 1})
    a[...] = np.arange(6, dtype="int32")
    g = root.create_group("g", attributes={"y": 2})
    b = g.create_array("b", shape=(3, 5), chunks=(2, 2), dtype="float64")
    b[...] = smooth_values("float64", (3, 5))
    g.create_group("h").create_group("deeper")
    return root


def load(path):
    return json.loads(Path(path).read_text())


def without_v2_group_extras(zmetadata):
    """zarr-python 3 also puts its v3 `consolidated_metadata` key inside the .zgroup entries of
    child groups in .zmetadata; v2 .zgroup holds only zarr_format, which zarrkit writes."""
    out = json.loads(json.dumps(zmetadata))
    for key, doc in out["metadata"].items():
        if key.endswith(".zgroup"):
            doc.pop("consolidated_metadata", None)
    return out


@pytest.mark.parametrize("zarr_format", [3, 2])
def test_zarrkit_consolidates_as_zarr_python_does(tmp_path, zarrkit, zarr_format):
    make_hierarchy(tmp_path / "zp", zarr_format)
    shutil.copytree(tmp_path / "zp", tmp_path / "zk")
    zarr.consolidate_metadata(tmp_path / "zp")
    zarrkit.run("consolidate", tmp_path / "zk")
    if zarr_format == 3:
        assert load(tmp_path / "zk" / "zarr.json") == load(tmp_path / "zp" / "zarr.json")
    else:
        assert load(tmp_path / "zk" / ".zmetadata") == without_v2_group_extras(load(tmp_path / "zp" / ".zmetadata"))
    # zarr-python opens it consolidated and finds every node.
    group = zarr.open_consolidated(tmp_path / "zk", zarr_format=zarr_format)
    assert sorted(name for name, _ in group.members(max_depth=None)) == ["a", "g", "g/b", "g/h", "g/h/deeper"]
    assert_same_array(group["g/b"][...], smooth_values("float64", (3, 5)))


@pytest.mark.parametrize("zarr_format", [3, 2])
def test_zarrkit_reads_through_zarr_pythons_consolidated_metadata(tmp_path, zarrkit, zarr_format):
    make_hierarchy(tmp_path / "src", zarr_format)
    zarr.consolidate_metadata(tmp_path / "src")
    # The per-node documents of the arrays are gone: only the consolidated copy describes them.
    for name in (["a/zarr.json", "g/b/zarr.json"] if zarr_format == 3 else ["a/.zarray", "g/b/.zarray"]):
        (tmp_path / "src" / name).unlink()
    zarrkit.run("cp", tmp_path / "src", tmp_path / "copy")
    copy = zarr.open_consolidated(tmp_path / "copy", zarr_format=zarr_format)  # kept consolidated
    assert_same_array(copy["a"][...], np.arange(6, dtype="int32"))
    assert_same_array(copy["g/b"][...], smooth_values("float64", (3, 5)))
    assert dict(copy["g"].attrs) == {"y": 2}
    assert sorted(name for name, _ in copy.members(max_depth=None)) == ["a", "g", "g/b", "g/h", "g/h/deeper"]


def test_cp_consolidate_flag_and_errors(tmp_path, zarrkit):
    make_hierarchy(tmp_path / "src", 3)
    zarrkit.run("cp", tmp_path / "src", tmp_path / "plain")
    assert "consolidated_metadata" not in load(tmp_path / "plain" / "zarr.json")
    zarrkit.run("cp", tmp_path / "src", tmp_path / "cons", "--consolidate")
    assert load(tmp_path / "cons" / "zarr.json")["consolidated_metadata"]["kind"] == "inline"
    assert "array" in zarrkit.expect_error("consolidate", tmp_path / "src" / "a")
    zarrkit.expect_error("consolidate", tmp_path / "missing")
    assert not (tmp_path / "missing").exists()
