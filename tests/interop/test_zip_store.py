"""Zip stores between zarrkit and zarr-python 3's ZipStore, both ways.

zarr-python writes archives (stored and deflated members, v2 and v3, sharded and string
arrays, a key written twice) and zarrkit reads them through `x.zip` and `x.zip/array`
paths; zarrkit writes archives (`cp` and `import` into `.zip` paths, also into an archive
zarr-python wrote) and zarr-python reads them, and Python's zipfile finds them sound.
"""

import json
import zipfile

import numpy as np
import pytest
import zarr
from zarr.storage import ZipStore

from zk_interop import assert_same_array, sample_values


def zarr_python_zip(path, compression=zipfile.ZIP_STORED):
    """A group written by zarr-python into a zip: plain, sharded and string arrays, v3 and v2."""
    values = {"plain": sample_values("float32", (20, 30), seed=1),
              "sharded": sample_values("int16", (40, 12), seed=2)}
    store = ZipStore(path, mode="w", compression=compression)
    root = zarr.open_group(store, mode="w", zarr_format=3)
    root.create_array("plain", data=values["plain"], chunks=(7, 11))
    root.create_array("sharded", data=values["sharded"], chunks=(5, 4), shards=(10, 12))
    words = np.array(["", "zip", "é水🙂", "x" * 50] * 5, dtype=np.dtypes.StringDType())
    root.create_array("words", data=words, chunks=(6,))
    store.close()
    return values, words


@pytest.mark.parametrize("compression", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED], ids=["stored", "deflated"])
def test_zarr_python_zip_read_by_zarrkit(tmp_path, zarrkit, compression):
    archive = tmp_path / "data.zip"
    values, words = zarr_python_zip(archive, compression)
    info = zarrkit.run("info", archive).stdout
    for name in ("plain", "sharded", "words"):
        assert name in info
    for name, expected in values.items():
        assert_same_array(zarrkit.export(archive / name), expected, name)
    assert_same_array(zarrkit.export(archive / "sharded", select="[1,5,39],::-3"),
                      values["sharded"][[1, 5, 39], ::-3])
    # Strings leave through a copy to a directory store, read back by zarr-python.
    zarrkit.run("cp", archive / "words", tmp_path / "words.zarr")
    assert list(zarr.open_array(tmp_path / "words.zarr", mode="r")[:]) == list(words)


def test_zarr_python_duplicate_member_last_one_wins(tmp_path, zarrkit):
    # zarr-python appends a second zarr.json when the attributes change (zipfile warns).
    archive = tmp_path / "dup.zip"
    store = ZipStore(archive, mode="w")
    array = zarr.create_array(store, shape=(4,), dtype="int32", chunks=(2,), fill_value=0)
    array[:] = np.arange(4)
    with pytest.warns(UserWarning, match="Duplicate name"):
        array.attrs["version"] = 2
    store.close()
    names = zipfile.ZipFile(archive).namelist()
    assert names.count("zarr.json") == 2
    documents = json.loads(zarrkit.run("info", archive, "--json").stdout)
    assert documents["zarr.json"]["attributes"] == {"version": 2}
    assert_same_array(zarrkit.export(archive), np.arange(4, dtype="int32"))


@pytest.mark.parametrize("options", [["--zarr-format", "3"], ["--zarr-format", "2", "--codec", "zlib:level=1"],
                                     ["--zarr-format", "3", "--shards", "20,20", "--chunks", "5,10"]],
                         ids=["v3", "v2-zlib", "v3-sharded"])
def test_zarrkit_zip_read_by_zarr_python(tmp_path, zarrkit, options):
    values = sample_values("float64", (40, 50), seed=3)
    archive = tmp_path / "out" / "array.zip"
    zarrkit.import_npy(values, archive, *options)
    with zipfile.ZipFile(archive) as zf:
        assert zf.testzip() is None  # every CRC-32 right
        names = zf.namelist()
        assert len(names) == len(set(names))
        assert all(info.compress_type == zipfile.ZIP_STORED for info in zf.infolist())
    store = ZipStore(archive, mode="r")
    assert_same_array(zarr.open_array(store, mode="r")[:], values)
    store.close()


def test_zarrkit_cp_hierarchy_into_and_out_of_zip(tmp_path, zarrkit):
    source = tmp_path / "src.zarr"
    values, words = zarr_python_zip(tmp_path / "first.zip")
    zarrkit.run("cp", tmp_path / "first.zip", source)  # zip -> directory
    zarrkit.run("cp", source, tmp_path / "copy.zip", "--consolidate")  # directory -> zip
    store = ZipStore(tmp_path / "copy.zip", mode="r")
    root = zarr.open_group(store, mode="r")
    for name, expected in values.items():
        assert_same_array(root[name][:], expected, name)
    assert list(root["words"][:]) == list(words)
    store.close()
    zarrkit.run("cp", tmp_path / "copy.zip", tmp_path / "again.zip")  # zip -> zip
    assert_same_array(zarrkit.export(tmp_path / "again.zip" / "plain"), values["plain"])


def test_zarrkit_adds_to_a_zarr_python_zip(tmp_path, zarrkit):
    archive = tmp_path / "data.zip"
    values, _ = zarr_python_zip(archive)
    extra = sample_values("uint8", (9, 9), seed=4)
    zarrkit.import_npy(extra, archive / "extra", "--zarr-format", "3", "--chunks", "4,4")
    zarrkit.import_npy(extra[::-1], archive / "plain", "--zarr-format", "3", "--overwrite")
    names = zipfile.ZipFile(archive).namelist()
    assert len(names) == len(set(names))  # the overwritten array left no stale members
    store = ZipStore(archive, mode="r")
    root = zarr.open_group(store, mode="r")
    assert_same_array(root["extra"][:], extra)
    assert_same_array(root["plain"][:], extra[::-1])
    assert_same_array(root["sharded"][:], values["sharded"])
    store.close()


def test_bad_zips_are_refused(tmp_path, zarrkit):
    evil = tmp_path / "evil.zip"
    with zipfile.ZipFile(evil, "w") as zf:
        zf.writestr("zarr.json", json.dumps({"zarr_format": 3, "node_type": "group"}))
        zf.writestr("../outside", b"x")
    assert "not a safe key" in zarrkit.expect_error("info", evil, exit_code=1)
    truncated = tmp_path / "truncated.zip"
    zarr_python_zip(tmp_path / "good.zip")
    truncated.write_bytes((tmp_path / "good.zip").read_bytes()[:-100])
    zarrkit.expect_error("info", truncated, exit_code=1)
    (tmp_path / "text.zip").write_text("not a zip")
    zarrkit.expect_error("export", tmp_path / "text.zip", tmp_path / "x.npy", exit_code=1)


def test_a_zip_that_cannot_be_written_fails_the_command(tmp_path, zarrkit):
    """The archive is written when the command finishes its writes; an error there (here: its
    directory cannot be created, a file is in the way) is the command's error and exit code,
    not a message after a successful exit."""
    zarr_python_zip(tmp_path / "good.zip")
    (tmp_path / "blocker").write_text("a file, not a directory")
    target = tmp_path / "blocker" / "copy.zip"
    message = zarrkit.expect_error("cp", tmp_path / "good.zip", target, exit_code=1)
    assert "copy.zip" in message
    assert not target.exists()
