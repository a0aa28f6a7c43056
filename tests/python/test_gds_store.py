"""zarrkit.storage.GDSStore: a directory store whose device reads go through GPUDirect
Storage (cuFile) or zarrkit's pinned-staging path. Host behaviour is LocalStore's and is
tested on every machine, as is the typed error for device reads without a GPU; the device
reads run where a GPU and CuPy are (the GPU machine)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import zarrkit
from zarrkit.errors import ReadOnlyError, UnsupportedError

HAVE_GPU = zarrkit.config.gpu_available()
BLOSC = {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 4}}
ZSTD = {"name": "zstd", "configuration": {"level": 1}}


def values(shape=(45, 67), dtype="f4", seed=0):
    rng = np.random.default_rng(seed)
    return (np.round(rng.normal(size=shape) * 64) / 64).astype(dtype)


def test_host_reads_writes_and_listings_are_the_local_stores(tmp_path):
    gds = zarrkit.storage.GDSStore(tmp_path / "data.zarr", mode="compat", threads=4, piece_bytes=1 << 16)
    local = zarrkit.storage.LocalStore(tmp_path / "data.zarr")
    gds.set("a/b", b"bytes")
    local.set("c", b"local")
    assert gds.get("c") == b"local" and local.get("a/b") == b"bytes"
    assert gds.list() == local.list() == ["a/b", "c"]
    assert gds.list_dir("") == local.list_dir("")
    assert "a/b" in gds and gds.exists("c") and gds.get("missing") is None
    gds.delete("c")
    assert not local.exists("c")
    assert gds.root == local.root
    assert gds.describe() == "gds://" + str(local.root)
    assert gds.options == {"mode": "compat", "threads": 4, "piece_bytes": 1 << 16}
    assert repr(gds) == f"GDSStore({str(gds.root)!r})"
    ro = zarrkit.storage.GDSStore(tmp_path / "data.zarr", read_only=True)
    assert ro.read_only and ro.get("a/b") == b"bytes"
    with pytest.raises(ReadOnlyError):
        ro.set("x", b"y")
    with pytest.raises(ValueError, match="mode"):
        zarrkit.storage.GDSStore(tmp_path / "x", mode="posix")


def test_arrays_and_groups_on_a_gds_store_and_pickling(tmp_path):
    store = zarrkit.storage.GDSStore(tmp_path / "data.zarr", mode="compat")
    data = values()
    g = zarrkit.open_group(store, mode="w")
    a = g.create_array("x", data=data, chunks=(8, 16), compressors=[BLOSC])
    zarrkit.create_array(store, name="raw", data=data, chunks=(8, 16), compressors=None)
    np.testing.assert_array_equal(a[...], data)
    np.testing.assert_array_equal(zarrkit.open_array(store, path="raw", mode="r")[3:9, ::2], data[3:9, ::2])
    assert sorted(zarrkit.open_group(store, mode="r").keys()) == ["raw", "x"]
    # zarr-python reads what was written through it (the same files).
    copy = pickle.loads(pickle.dumps(store))
    assert isinstance(copy, zarrkit.storage.GDSStore) and copy == store
    assert copy.options["mode"] == "compat"
    b = pickle.loads(pickle.dumps(a))
    assert isinstance(b.store, zarrkit.storage.GDSStore)
    np.testing.assert_array_equal(b[...], data)
    # A gds:// location opens one too, with the node path below the hierarchy's root.
    c = zarrkit.open_array(f"gds://{tmp_path / 'data.zarr' / 'x'}", mode="r")
    assert isinstance(c.store, zarrkit.storage.GDSStore)
    np.testing.assert_array_equal(c[...], data)


@pytest.mark.skipif(HAVE_GPU, reason="this machine has a usable GPU")
def test_device_reads_without_a_gpu_are_typed_errors(tmp_path):
    store = zarrkit.storage.GDSStore(tmp_path / "s")
    store.set("k", b"value")
    with pytest.raises(UnsupportedError, match="^no CUDA device"):
        store.device_path
    with pytest.raises(UnsupportedError, match="^no CUDA device"):
        store.read_into_device(["k"], [0], [5])
    assert store.get("k") == b"value"  # everything else works
    assert store.stats["values_compat"] == 0


# ---- On a GPU -------------------------------------------------------------------------------

gpu = pytest.mark.skipif(not HAVE_GPU, reason="no usable GPU for zarrkit here; these run on the GPU machine")


def cupy_or_skip():
    return pytest.importorskip("cupy", reason="CuPy is not installed; the GPU tests need it")


@gpu
@pytest.mark.parametrize("mode", ["compat", "auto"])
@pytest.mark.parametrize("compressors", [None, [BLOSC], [ZSTD]], ids=["raw", "blosc", "zstd"])
@pytest.mark.parametrize("shards", [None, (16, 32)], ids=["chunks", "shards"])
def test_enable_gpu_reads_through_a_gds_store_return_cupy(tmp_path, mode, compressors, shards):
    cupy = cupy_or_skip()
    store = zarrkit.storage.GDSStore(tmp_path / "s.zarr", mode=mode, threads=4, piece_bytes=1 << 12)
    data = values((70, 90), seed=2)
    a = zarrkit.create_array(store, data=data, chunks=(8, 16), shards=shards, compressors=compressors)
    for selection in [..., (slice(3, 40), slice(None, None, 3)), (5, slice(None))]:
        with zarrkit.config.enable_gpu():
            got = a[selection]
        assert isinstance(got, cupy.ndarray)
        np.testing.assert_array_equal(cupy.asnumpy(got), data[selection])
    assert store.device_path in (("compat",) if mode == "compat" else ("compat", "cufile", "cufile-compat"))
    if compressors is None and shards is None:  # chunks straight into device memory
        stats = store.stats
        assert stats["values_compat"] + stats["values_cufile"] > 0, stats


@gpu
@pytest.mark.parametrize("mode", ["compat", "auto"])
def test_read_into_device_gives_the_stored_bytes(tmp_path, mode):
    cupy = cupy_or_skip()
    store = zarrkit.storage.GDSStore(tmp_path / "s", mode=mode, threads=3, piece_bytes=1 << 16)
    rng = np.random.default_rng(4)
    sizes = [0, 1, 4097, (1 << 16) * 5 + 3, (3 << 20) + 11]
    blobs = {f"v/{n}": rng.integers(0, 256, n, dtype=np.uint8).tobytes() for n in sizes}
    for key, blob in blobs.items():
        store.set(key, blob)
    keys = [*blobs, "absent"]
    capacity = [max(1, len(blobs.get(k, b""))) for k in keys]
    offsets = np.concatenate([[0], np.cumsum([(c + 255) // 256 * 256 for c in capacity])])
    target = cupy.zeros(int(offsets[-1]), dtype=cupy.uint8)
    got = store.read_into_device(keys, [target.data.ptr + int(o) for o in offsets[:-1]], capacity)
    assert got == [len(blobs[k]) for k in blobs] + [None]
    host = cupy.asnumpy(target)
    for key, offset in zip(blobs, offsets[:-1]):
        assert host[int(offset): int(offset) + len(blobs[key])].tobytes() == blobs[key], key
    print(store.device_path, store.device_path_detail, store.stats)


@gpu
def test_kvikio_gds_store_objects_open_as_zarrkit_gds_stores(tmp_path):
    kvikio_zarr = pytest.importorskip("kvikio.zarr", reason="kvikio is not installed")
    cupy = cupy_or_skip()
    data = values(seed=5)
    zarrkit.create_array(tmp_path / "k.zarr", data=data, chunks=(8, 16), compressors=None)
    a = zarrkit.open_array(kvikio_zarr.GDSStore(str(tmp_path / "k.zarr"), read_only=True), mode="r")
    assert isinstance(a.store, zarrkit.storage.GDSStore)
    with zarrkit.config.enable_gpu():
        got = a[...]
    np.testing.assert_array_equal(cupy.asnumpy(got), data)
