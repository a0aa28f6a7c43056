"""zarrkit.storage.ZipStore: arrays and groups in a zip archive, both ways with zarr-python."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import zarrkit


def test_write_close_and_read_back(tmp_path):
    path = tmp_path / "data.zip"
    data = np.arange(30 * 40, dtype="f4").reshape(30, 40)
    with zarrkit.storage.ZipStore(path, mode="w") as store:
        g = zarrkit.create_group(store, attributes={"title": "zipped"})
        a = g.create_array("t", shape=data.shape, chunks=(8, 16), shards=(16, 32), dtype="f4")
        a[...] = data
        np.testing.assert_array_equal(a[2:20, ::3], data[2:20, ::3])  # pending writes read back
    store = zarrkit.storage.ZipStore(path)
    assert store.read_only
    g = zarrkit.open_group(store, mode="r")
    assert g.attrs["title"] == "zipped"
    np.testing.assert_array_equal(g["t"][...], data)
    with pytest.raises(zarrkit.errors.ReadOnlyError):
        g["t"][0, 0] = 1
    copy = pickle.loads(pickle.dumps(g["t"]))
    np.testing.assert_array_equal(copy[...], data)


def test_append_mode_changes_an_archive(tmp_path):
    path = tmp_path / "data.zip"
    with zarrkit.storage.ZipStore(path, mode="w") as store:
        zarrkit.create_array(store, name="a", data=np.zeros((10, 10), "i2"), chunks=(5, 5))
    with zarrkit.storage.ZipStore(path, mode="a") as store:
        a = zarrkit.open_array(store, path="a")
        a[5:, 5:] = 7
    expected = np.zeros((10, 10), "i2")
    expected[5:, 5:] = 7
    np.testing.assert_array_equal(zarrkit.open_array(zarrkit.storage.ZipStore(path), path="a", mode="r")[...], expected)


def test_interop_with_zarr_python(tmp_path):
    zarr = pytest.importorskip("zarr")
    data = np.random.default_rng(1).random((20, 30))
    with zarrkit.storage.ZipStore(tmp_path / "zk.zip", mode="w") as store:
        zarrkit.create_array(store, data=data, chunks=(7, 9))
    with zarr.storage.ZipStore(tmp_path / "zk.zip", mode="r") as store:
        np.testing.assert_array_equal(zarr.open_array(store, mode="r")[...], data)
    with zarr.storage.ZipStore(tmp_path / "zp.zip", mode="w") as store:
        zarr.create_array(store, data=data, chunks=(7, 9), zarr_format=2)
    np.testing.assert_array_equal(zarrkit.open_array(zarrkit.storage.ZipStore(tmp_path / "zp.zip"))[...], data)


def test_missing_archive_and_bad_mode(tmp_path):
    with pytest.raises(FileNotFoundError):
        zarrkit.storage.ZipStore(tmp_path / "missing.zip")
    with pytest.raises(ValueError, match="mode"):
        zarrkit.storage.ZipStore(tmp_path / "x.zip", mode="x")
    (tmp_path / "not.zip").write_bytes(b"not a zip archive")
    with pytest.raises(zarrkit.errors.DataLossError):
        zarrkit.storage.ZipStore(tmp_path / "not.zip")


def test_zip_paths(tmp_path):
    data = np.arange(24, dtype="i8").reshape(4, 6)
    g = zarrkit.open_group(tmp_path / "p.zip", mode="w")
    assert isinstance(g.store, zarrkit.storage.ZipStore)
    g.create_array("a", data=data, chunks=(2, 3))
    g.store.close()
    a = zarrkit.open(tmp_path / "p.zip/a", mode="r")
    assert isinstance(a.store, zarrkit.storage.ZipStore) and a.path == "a"
    np.testing.assert_array_equal(a[...], data)
