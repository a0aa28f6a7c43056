"""Groups, opening with modes, stores, attributes, pickling and errors."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import zarrkit
from zarrkit.errors import (
    DataLossError,
    InternalError,
    InvalidArgumentError,
    IoError,
    NotFoundError,
    ReadOnlyError,
    ResourceExhaustedError,
    UnsupportedError,
    ZarrkitError,
)


def test_group_members_and_tree(store):
    root = zarrkit.create_group(store, attributes={"title": "t"})
    sub = root.create_group("sub", attributes={"level": 1})
    sub.create_array("x", shape=(3, 4), dtype="i2")
    root.create_array("y", shape=(5,), dtype="f8")
    assert root.keys() == ["sub", "y"]
    assert list(root) == ["sub", "y"]
    assert len(root) == 2
    assert "sub" in root and "sub/x" in root and "nope" not in root
    assert root.array_keys() == ["y"] and root.group_keys() == ["sub"]
    members = dict(root.members())
    assert isinstance(members["sub"], zarrkit.Group)
    assert isinstance(members["y"], zarrkit.Array)
    deep = dict(root.members(max_depth=None))
    assert set(deep) == {"sub", "sub/x", "y"}
    assert root["sub/x"].shape == (3, 4)
    assert root["sub"].attrs["level"] == 1
    with pytest.raises(KeyError):
        root["missing"]
    assert root.get("missing") is None
    text = repr(root.tree())
    assert "sub" in text and "x (3, 4) int16" in text and "y (5,) float64" in text
    assert root.attrs.asdict() == {"title": "t"}
    assert root.metadata["node_type"] == "group"
    assert "Group" in root.info


def test_group_create_and_delete(store):
    root = zarrkit.open_group(store, mode="w")
    g = root.require_group("a")
    assert root.require_group("a") == g
    arr = root.require_array("b", shape=(2,), dtype="u1")
    assert root.require_array("b") == arr
    del root["a"]
    assert root.keys() == ["b"]
    with pytest.raises(KeyError):
        del root["a"]


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_open_modes(tmp_path, zarr_format):
    path = tmp_path / "m.zarr"
    with pytest.raises(NotFoundError):
        zarrkit.open_array(path, mode="r")
    with pytest.raises(FileNotFoundError):  # NotFoundError is a FileNotFoundError
        zarrkit.open(path, mode="r+")
    a = zarrkit.open_array(path, mode="a", shape=(4,), dtype="i4", zarr_format=zarr_format)
    a[:] = [1, 2, 3, 4]
    again = zarrkit.open(path)
    assert isinstance(again, zarrkit.Array) and again.zarr_format == zarr_format
    np.testing.assert_array_equal(again[:], [1, 2, 3, 4])
    with pytest.raises(InvalidArgumentError):
        zarrkit.create_array(path, shape=(2,), dtype="i4")  # exists; no overwrite
    w = zarrkit.open_array(path, mode="w", shape=(2,), dtype="f4", zarr_format=zarr_format)
    assert w.shape == (2,) and w.dtype == np.float32
    g = zarrkit.open(tmp_path / "g.zarr", mode="a")
    assert isinstance(g, zarrkit.Group)
    with pytest.raises(NotFoundError, match="is a group, not an array"):
        zarrkit.open_array(tmp_path / "g.zarr")
    other = 2 if zarr_format == 3 else 3
    with pytest.raises(NotFoundError, match=f"not v{other}"):
        zarrkit.open_array(path, zarr_format=other)


def test_open_inside_hierarchy_by_path(tmp_path):
    root = zarrkit.open_group(tmp_path / "h.zarr", mode="w")
    root.create_group("g").create_array("a", data=np.arange(6))
    a = zarrkit.open_array(tmp_path / "h.zarr" / "g" / "a", mode="r")
    assert a.path == "g/a"
    np.testing.assert_array_equal(a[:], np.arange(6))
    b = zarrkit.open_array(tmp_path / "h.zarr", path="g/a", mode="r")
    assert b == a


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_consolidate_metadata_and_use_consolidated(tmp_path, zarr_format):
    path = str(tmp_path / "h.zarr")
    root = zarrkit.create_group(path, zarr_format=zarr_format, attributes={"title": "t"})
    root.create_group("sub").create_array("x", shape=(3,), dtype="i2")
    with pytest.raises(NotFoundError, match="consolidated metadata was required"):
        zarrkit.open_group(path, mode="r", use_consolidated=True)
    consolidated = zarrkit.consolidate_metadata(path)
    assert consolidated.attrs["title"] == "t"
    zarrkit.open_group(path, mode="a").create_group("later")  # not in the snapshot
    assert zarrkit.open_group(path, mode="r").keys() == ["sub"]  # None: where present
    assert zarrkit.open_consolidated(path, mode="r").keys() == ["sub"]
    assert zarrkit.open(path, mode="r", use_consolidated=True).keys() == ["sub"]
    assert zarrkit.open_group(path, mode="r", use_consolidated=False).keys() == ["later", "sub"]
    zarrkit.consolidate_metadata(path)
    assert zarrkit.open_group(path, mode="r", use_consolidated=True).keys() == ["later", "sub"]
    # zarr-python reads what zarrkit consolidated
    zarr = pytest.importorskip("zarr")
    assert sorted(zarr.open_consolidated(path, mode="r").group_keys()) == ["later", "sub"]
    with pytest.raises(NotFoundError, match="array, not a group"):
        zarrkit.consolidate_metadata(path, path="sub/x")


def test_memory_url_and_default_store():
    a = zarrkit.create_array("memory://", shape=(3,), dtype="u1")
    assert isinstance(a.store, zarrkit.storage.MemoryStore)
    b = zarrkit.array(np.arange(3))
    np.testing.assert_array_equal(b[:], np.arange(3))
    g = zarrkit.group()
    assert isinstance(g.store, zarrkit.storage.MemoryStore)


def test_attributes_write_through(store):
    a = zarrkit.create_array(store, name="a", shape=(1,), dtype="i1", attributes={"x": 1})
    a.attrs["y"] = [1, 2]
    a.attrs.update({"z": {"nested": True}, "w": None})
    del a.attrs["x"]
    reopened = zarrkit.open_array(store, path="a")
    assert reopened.attrs.asdict() == {"y": [1, 2], "z": {"nested": True}, "w": None}
    reopened.attrs.put({"only": "this"})
    assert reopened.attrs == {"only": "this"}
    # Like zarr-python, an open array keeps the attributes it loaded until reopened.
    assert zarrkit.open_array(store, path="a").attrs == {"only": "this"}
    with pytest.raises(InvalidArgumentError, match="JSON"):
        a.attrs["bad"] = float("nan")
    with pytest.raises(InvalidArgumentError, match="JSON"):
        a.attrs["bad"] = object()


def test_store_key_value_api(tmp_path):
    s = zarrkit.storage.LocalStore(tmp_path / "kv")
    s.set("a/b", b"hello")
    assert s.get("a/b") == b"hello" and s.get("nope") is None
    assert "a/b" in s and s.exists("a/b")
    assert s.list() == ["a/b"] and s.list_dir("a") == (["b"], [])
    s.delete("a/b")
    assert s.list() == []
    ro = zarrkit.storage.LocalStore(tmp_path / "kv", read_only=True)
    with pytest.raises(ReadOnlyError):
        ro.set("x", b"1")
    with pytest.raises(InvalidArgumentError):
        s.get("../escape")
    m = zarrkit.storage.MemoryStore({"k": b"v"})
    assert m.to_dict() == {"k": b"v"}


def test_pickle_by_store_and_path(tmp_path):
    a = zarrkit.create_array(tmp_path / "p.zarr", name="g/a", data=np.arange(10, dtype="i8"), chunks=(3,))
    payload = pickle.dumps(a)
    assert len(payload) < 1000  # no data travels, only where the array lives
    b = pickle.loads(payload)
    assert b == a and b.path == "g/a"
    b[0] = 42
    assert a[0] == 42  # same array on disk
    g = pickle.loads(pickle.dumps(zarrkit.open_group(tmp_path / "p.zarr")))
    assert g.keys() == ["g"]
    ro = pickle.loads(pickle.dumps(zarrkit.open_array(tmp_path / "p.zarr", path="g/a", mode="r")))
    assert ro.read_only
    # A MemoryStore pickles as a copy of its contents (as zarr-python's does).
    m = zarrkit.create_array(zarrkit.storage.MemoryStore(), data=np.arange(4))
    copy = pickle.loads(pickle.dumps(m))
    np.testing.assert_array_equal(copy[:], np.arange(4))


@pytest.mark.parametrize(
    ("code", "cls", "builtin"),
    [
        ("invalid_argument", InvalidArgumentError, ValueError),
        ("data_loss", DataLossError, ValueError),
        ("not_found", NotFoundError, FileNotFoundError),
        ("unsupported", UnsupportedError, NotImplementedError),
        ("resource_exhausted", ResourceExhaustedError, MemoryError),
        ("io", IoError, OSError),
        ("internal", InternalError, RuntimeError),
    ],
)
def test_error_translation(code, cls, builtin):
    from zarrkit import _zarrkit

    with pytest.raises(cls) as info:
        _zarrkit._raise_for_test(code, "what was wrong")
    assert isinstance(info.value, builtin) and isinstance(info.value, ZarrkitError)
    assert str(info.value) == "what was wrong"


def test_engine_messages_reach_python(tmp_path):
    a = zarrkit.create_array(tmp_path / "e.zarr", data=np.arange(8, dtype="i4"), chunks=(4,))
    (tmp_path / "e.zarr" / "c" / "0").write_bytes(b"not zstd")
    with pytest.raises(DataLossError, match=r"chunk 'c/0'"):
        a[:]
    np.testing.assert_array_equal(a[4:], np.arange(4, 8))
    (tmp_path / "bad.zarr").mkdir()
    (tmp_path / "bad.zarr" / "zarr.json").write_text('{"zarr_format": 3, "node_type": "array"}')
    with pytest.raises(InvalidArgumentError):
        zarrkit.open_array(tmp_path / "bad.zarr")
    with pytest.raises(UnsupportedError):
        zarrkit.create_array(tmp_path / "u.zarr", shape=(2,), dtype="i4", compressors={"name": "no-such-codec"})
