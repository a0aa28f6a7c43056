"""`zarrkit migrate v3`: Zarr v2 data written by zarr-python gets Zarr v3 metadata beside its
own, its chunks untouched; zarrkit and zarr-python then read it as v3, value for value."""

from __future__ import annotations

import json

import numcodecs
import numpy as np
import pytest
import zarr

import zarrkit

CASES = {
    "zstd": dict(compressor=numcodecs.Zstd(level=3)),
    "blosc, F order, '/' keys": dict(compressor=numcodecs.Blosc(cname="lz4", shuffle=1), order="F",
                                    chunk_key_encoding={"name": "v2", "separator": "/"}),
    "big-endian, no compressor": dict(compressor=None, dtype=">i4"),
    "delta filter, gzip": dict(compressor=numcodecs.GZip(level=1), filters=[numcodecs.Delta(dtype="<i4")]),
}


def values(dtype: str) -> np.ndarray:
    return (np.arange(30 * 20) % 97).astype(dtype).reshape(30, 20)


@pytest.mark.parametrize("case", list(CASES))
def test_migrated_arrays_read_as_v3_with_their_chunks_unchanged(zarrkit, tmp_path, case):
    options = dict(CASES[case])
    dtype = options.pop("dtype", "<i4")
    path = tmp_path / "a.zarr"
    data = values(dtype)
    a = zarr.create_array(str(path), shape=data.shape, chunks=(7, 6), dtype=dtype, zarr_format=2, fill_value=5,
                          compressors=options.pop("compressor"), filters=options.pop("filters", None), **options)
    a[...] = data
    a.attrs["units"] = "m"
    chunks_before = {p.relative_to(path): p.read_bytes() for p in path.rglob("*")
                     if p.is_file() and not p.name.startswith(".")}
    assert len(chunks_before) == 20  # 5 x 4 chunks, all stored
    zarrkit.run("migrate", "v3", path)
    chunks_after = {p.relative_to(path): p.read_bytes() for p in path.rglob("*")
                    if p.is_file() and not p.name.startswith(".") and p.name != "zarr.json"}
    assert chunks_after == chunks_before
    document = json.loads((path / "zarr.json").read_text())
    assert document["zarr_format"] == 3 and document["chunk_key_encoding"]["name"] == "v2"
    assert document["attributes"] == {"units": "m"}
    ours = zarrkit_api_open(path)
    assert ours.zarr_format == 3
    np.testing.assert_array_equal(ours[...], data)
    theirs = zarr.open_array(str(path), mode="r", zarr_format=3)
    np.testing.assert_array_equal(theirs[...], data)
    assert theirs.fill_value == 5


def zarrkit_api_open(path):
    import zarrkit as zk

    return zk.open_array(str(path), mode="r")


def test_a_hierarchy_migrates_whole_and_a_dry_run_writes_nothing(zarrkit, tmp_path):
    path = tmp_path / "h.zarr"
    root = zarr.open_group(str(path), mode="w", zarr_format=2, attributes={"title": "t"})
    sub = root.create_group("sub", attributes={"level": 1})
    x = sub.create_array("x", shape=(10,), chunks=(4,), dtype="f8", compressors=numcodecs.Zstd())
    x[...] = np.linspace(0, 1, 10)
    zarr.consolidate_metadata(str(path))
    dry = zarrkit.run("migrate", "v3", path, "--dry-run")
    assert "dry run: 3 nodes, nothing written" in dry.stdout
    assert not list(path.rglob("zarr.json"))
    zarrkit.run("migrate", "v3", path)
    assert sorted(str(p.relative_to(path)) for p in path.rglob("zarr.json")) == ["sub/x/zarr.json", "sub/zarr.json",
                                                                                 "zarr.json"]
    theirs = zarr.open_group(str(path), mode="r", zarr_format=3, use_consolidated=False)
    assert theirs.attrs["title"] == "t" and theirs["sub"].attrs["level"] == 1
    np.testing.assert_array_equal(theirs["sub/x"][...], np.linspace(0, 1, 10))
    result = zarrkit.run("migrate", "v3", path, ok=False)
    assert result.returncode != 0 and "already Zarr v3" in result.stderr


def test_string_arrays_migrate(zarrkit, tmp_path):
    path = tmp_path / "s.zarr"
    a = zarr.create_array(str(path), shape=(4,), chunks=(2,), dtype=str, zarr_format=2)
    a[...] = np.array(["a", "bb", "ccc", "dddd"])
    zarrkit.run("migrate", "v3", path)
    np.testing.assert_array_equal(zarr.open_array(str(path), mode="r", zarr_format=3)[...],
                                  np.array(["a", "bb", "ccc", "dddd"]))


def test_a_node_v3_cannot_express_stops_the_migration_before_anything_is_written(zarrkit, tmp_path):
    path = tmp_path / "h.zarr"
    root = zarr.open_group(str(path), mode="w", zarr_format=2)
    root.create_array("fine", shape=(4,), chunks=(2,), dtype="i2")
    structured = np.dtype([("a", "<i4"), ("b", "<f8")])
    root.create_array("records", shape=(4,), chunks=(2,), dtype=structured, fill_value=None)
    # A sub-array field (valid v2, which zarr-python 3.1 cannot write): v3 struct has none.
    zarray = path / "records" / ".zarray"
    document = json.loads(zarray.read_text())
    document["dtype"] = [["a", "<i4"], ["b", "<f8", [2]]]
    zarray.write_text(json.dumps(document))
    result = zarrkit.run("migrate", "v3", path, ok=False)
    assert result.returncode != 0
    assert "array 'records'" in result.stderr and "zarrkit cp" in result.stderr, result.stderr
    assert not list(path.rglob("zarr.json"))
