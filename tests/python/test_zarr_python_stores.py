"""zarr-python stores (zarr.abc.store.Store) as zarrkit's store=: fsspec, obstore, Icechunk.

Each store type is written by one side and read by the other (zarrkit and zarr-python on the
same store object, Zarr v2 and v3, sharded too), and the reads are checked against NumPy. The
fetches of one read are shown to be in flight together, and the store's failures to arrive
as zarrkit's typed errors.
"""

from __future__ import annotations

import asyncio
import json
import pickle
import threading
import uuid

import fsspec
import icechunk
import numpy as np
import obstore.store
import pytest
import zarr
from zarr.storage import FsspecStore, MemoryStore, ObjectStore, WrapperStore

import zarrkit
from zarrkit.errors import InvalidArgumentError, IoError, NotFoundError, ReadOnlyError, UnsupportedError
from zarrkit.storage import ZarrPythonStore

STORE_KINDS = ["zarr-memory", "fsspec-memory", "obstore-memory", "obstore-local", "icechunk"]
# (zarr_format, shards): Icechunk holds Zarr v3 only.
LAYOUTS = {"v2": (2, None), "v3": (3, None), "v3-sharded": (3, (32, 40))}
CASES = [(kind, layout) for kind in STORE_KINDS for layout in LAYOUTS if not (kind == "icechunk" and layout == "v2")]
CHUNKS = (16, 20)


def make_store(kind: str, tmp_path) -> zarr.abc.store.Store:
    if kind == "zarr-memory":
        return MemoryStore()
    if kind == "fsspec-memory":
        return FsspecStore.from_url(f"memory://zarrkit-test-{uuid.uuid4().hex}/data.zarr")
    if kind == "obstore-memory":
        return ObjectStore(obstore.store.MemoryStore())
    if kind == "obstore-local":
        root = tmp_path / "obstore"
        root.mkdir()
        return ObjectStore(obstore.store.LocalStore(str(root)))
    if kind == "icechunk":
        repo = icechunk.Repository.create(icechunk.local_filesystem_storage(str(tmp_path / "repo")))
        return repo.writable_session("main").store
    raise AssertionError(kind)


def sample(shape=(70, 90), dtype="f4", seed=0) -> np.ndarray:
    return (np.random.default_rng(seed).random(shape) * 1000).astype(dtype)


@pytest.mark.parametrize(("kind", "layout"), CASES)
def test_zarrkit_writes_zarr_python_reads(kind, layout, tmp_path):
    store = make_store(kind, tmp_path)
    zarr_format, shards = LAYOUTS[layout]
    data = sample()
    a = zarrkit.create_array(
        store, name="grp/a", shape=data.shape, chunks=CHUNKS, shards=shards, dtype=data.dtype,
        zarr_format=zarr_format, fill_value=-1, attributes={"units": "m"},
    )
    assert isinstance(a.store, ZarrPythonStore) and a.store.store is store
    a[...] = data
    a[5:9, 3:50] = 7  # a partial update of chunks (of inner chunks in a shard) already stored
    expected = data.copy()
    expected[5:9, 3:50] = 7

    z = zarr.open_array(store, path="grp/a", mode="r")
    assert z.metadata.zarr_format == zarr_format
    assert z.attrs["units"] == "m"
    assert z.chunks == CHUNKS and (z.shards == shards if shards else True)
    np.testing.assert_array_equal(z[...], expected)
    np.testing.assert_array_equal(zarrkit.open_array(store, path="grp/a", mode="r")[...], expected)
    assert isinstance(zarr.open_group(store, path="grp", mode="r"), zarr.Group)


@pytest.mark.parametrize(("kind", "layout"), CASES)
def test_zarr_python_writes_zarrkit_reads(kind, layout, tmp_path):
    store = make_store(kind, tmp_path)
    zarr_format, shards = LAYOUTS[layout]
    data = sample(dtype="i4")
    z = zarr.create_array(
        store, name="grp/a", shape=data.shape, chunks=CHUNKS, shards=shards, dtype=data.dtype,
        zarr_format=zarr_format, fill_value=3, attributes={"title": "zp"},
    )
    z[:60, :] = data[:60, :]  # the last rows stay unwritten: the fill value
    expected = data.copy()
    expected[60:, :] = 3

    a = zarrkit.open_array(store, path="grp/a", mode="r")
    assert a.zarr_format == zarr_format and a.shards == shards and a.attrs["title"] == "zp"
    np.testing.assert_array_equal(a[...], expected)
    np.testing.assert_array_equal(a[3:67:4, ::-3], expected[3:67:4, ::-3])
    rows, cols = [0, 33, 69, 5], [89, 1, 40]
    np.testing.assert_array_equal(a.oindex[rows, cols], expected[np.ix_(rows, cols)])
    np.testing.assert_array_equal(a.vindex[rows[:3], cols], expected[rows[:3], cols])
    g = zarrkit.open(store, path="grp", mode="r")
    assert isinstance(g, zarrkit.Group) and g.array_keys() == ["a"]


@pytest.mark.parametrize("kind", STORE_KINDS)
def test_both_write_one_array(kind, tmp_path):
    store = make_store(kind, tmp_path)
    z = zarr.create_array(store, name="a", shape=(40, 50), chunks=(10, 10), shards=(20, 20), dtype="u2")
    expected = np.zeros((40, 50), "u2")
    a = zarrkit.open_array(store, path="a")
    a[3:25, 7:44] = 11
    expected[3:25, 7:44] = 11
    z[20:40, 0:12] = 5
    expected[20:40, 0:12] = 5
    a = zarrkit.open_array(store, path="a")
    np.testing.assert_array_equal(a[...], expected)
    np.testing.assert_array_equal(zarr.open_array(store, path="a", mode="r")[...], expected)


@pytest.mark.parametrize("kind", STORE_KINDS)
def test_chunks_of_fill_values_are_deleted(kind, tmp_path):
    store = make_store(kind, tmp_path)
    a = zarrkit.create_array(store, name="a", shape=(20, 20), chunks=(10, 10), dtype="i2")
    a[...] = 1
    wrapped = a.store
    assert wrapped.list("a") == ["a/c/0/0", "a/c/0/1", "a/c/1/0", "a/c/1/1", "a/zarr.json"]
    a[:10, :10] = 0  # all fill value now: the chunk goes, as zarr-python does it
    assert wrapped.list("a") == ["a/c/0/1", "a/c/1/0", "a/c/1/1", "a/zarr.json"]
    expected = np.ones((20, 20), "i2")
    expected[:10, :10] = 0
    np.testing.assert_array_equal(zarr.open_array(store, path="a", mode="r")[...], expected)


@pytest.mark.parametrize("kind", STORE_KINDS)
def test_groups_both_ways(kind, tmp_path):
    store = make_store(kind, tmp_path)
    root = zarr.create_group(store, attributes={"title": "made by zarr-python"})
    root.create_group("sub").create_array("x", shape=(3,), dtype="f8")
    root.create_array("y", shape=(4, 4), dtype="i1")
    g = zarrkit.open_group(store, mode="r")
    assert g.attrs["title"] == "made by zarr-python"
    assert g.keys() == ["sub", "y"] and g.array_keys() == ["y"]
    assert set(dict(g.members(max_depth=None))) == {"sub", "sub/x", "y"}

    g = zarrkit.open_group(store)
    g.create_group("more", attributes={"n": 2}).create_array("z", data=np.arange(6), chunks=(4,))
    again = zarr.open_group(store, mode="r")
    assert sorted(again.group_keys()) == ["more", "sub"]
    assert again["more"].attrs["n"] == 2
    np.testing.assert_array_equal(again["more/z"][...], np.arange(6))


def test_icechunk_commit_then_read_only_session(tmp_path):
    repo = icechunk.Repository.create(icechunk.local_filesystem_storage(str(tmp_path / "repo")))
    session = repo.writable_session("main")
    data = sample((64, 64), "f8")
    zarrkit.create_array(session.store, name="t", data=data, chunks=(16, 16), shards=(32, 32))
    session.commit("written by zarrkit")

    readonly = repo.readonly_session("main")
    a = zarrkit.open_array(readonly.store, path="t")  # the default mode opens read-only
    assert a.read_only
    np.testing.assert_array_equal(a[...], data)
    np.testing.assert_array_equal(zarr.open_array(readonly.store, path="t", mode="r")[...], data)
    with pytest.raises(ReadOnlyError):
        a[0, 0] = 1
    with pytest.raises(ReadOnlyError):
        zarrkit.open_array(readonly.store, path="t", mode="r+")

    session = repo.writable_session("main")
    zarr.open_array(session.store, path="t")[:16, :16] = -1
    session.commit("written by zarr-python")
    data[:16, :16] = -1
    np.testing.assert_array_equal(zarrkit.open_array(repo.readonly_session("main").store, path="t")[...], data)


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_reference_file_system(zarr_format, tmp_path):
    # kerchunk's layout: the metadata inline, every chunk a byte range of one larger file.
    source = MemoryStore()
    data = sample((50, 60), "f4")
    zarr.create_array(source, name="a", data=data, chunks=(16, 16), zarr_format=zarr_format)
    blob = bytearray()
    refs: dict[str, object] = {}
    for key, value in sorted(source._store_dict.items()):
        raw = value.to_bytes()
        if key.rsplit("/", 1)[-1] in (".zarray", ".zattrs", ".zgroup", "zarr.json"):
            refs[key] = raw.decode()
        else:
            blob += b"\0" * 7  # chunks at odd offsets inside the file
            refs[key] = [str(tmp_path / "chunks.bin"), len(blob), len(raw)]
            blob += raw
    (tmp_path / "chunks.bin").write_bytes(bytes(blob))
    (tmp_path / "refs.json").write_text(json.dumps({"version": 1, "refs": refs}))
    fs = fsspec.filesystem(
        "reference", fo=str(tmp_path / "refs.json"), remote_protocol="file", asynchronous=True
    )
    store = FsspecStore(fs, path="", read_only=True)

    a = zarrkit.open_array(store, path="a")
    assert a.read_only
    np.testing.assert_array_equal(a[...], data)
    np.testing.assert_array_equal(a[7:41, 3:59:5], data[7:41, 3:59:5])
    np.testing.assert_array_equal(zarr.open_array(store, path="a", mode="r")[...], data)
    with pytest.raises(ReadOnlyError):
        a[0] = 1


class CountingStore(WrapperStore):
    """Counts the gets in flight at once; each waits a little, as a request to a server does."""

    def __init__(self, store, delay=0.01):
        super().__init__(store)
        self.delay = delay
        self.lock = threading.Lock()
        self.now = 0
        self.peak = 0
        self.gets = 0
        self.ranged_gets = 0

    async def get(self, key, prototype, byte_range=None):
        with self.lock:
            self.now += 1
            self.gets += 1
            self.ranged_gets += byte_range is not None
            self.peak = max(self.peak, self.now)
        try:
            await asyncio.sleep(self.delay)
            return await self._store.get(key, prototype, byte_range)
        finally:
            with self.lock:
                self.now -= 1


def test_a_read_fetches_its_chunks_together():
    inner = MemoryStore()
    data = sample((80, 80), "i2")
    zarr.create_array(inner, name="a", data=data, chunks=(10, 10))  # 64 chunks
    counting = CountingStore(inner)
    a = zarrkit.open_array(counting, path="a")
    counting.peak = counting.gets = 0
    np.testing.assert_array_equal(a[...], data)
    assert counting.gets == 64
    # One at a time would be a peak of 1; zarr-python's own reads keep its async.concurrency (10).
    assert counting.peak >= 32, counting.peak


def test_requests_in_flight_follow_remote_concurrency():
    inner = MemoryStore()
    data = sample((80, 80), "i2")
    zarr.create_array(inner, name="a", data=data, chunks=(10, 10))
    counting = CountingStore(inner)
    with zarrkit.config.set({"remote.concurrency": 4}):
        a = zarrkit.open_array(counting, path="a")  # the setting in force when it is wrapped
    counting.peak = 0
    np.testing.assert_array_equal(a[...], data)
    # The engine keeps at most about twice the store's concurrency on the way (engine/fetched_reads.h).
    assert 2 <= counting.peak <= 8, counting.peak


def test_inner_chunks_of_a_shard_are_fetched_together():
    inner = MemoryStore()
    data = sample((64, 64), "u4")
    zarr.create_array(inner, name="a", data=data, chunks=(8, 8), shards=(64, 64), compressors=None)
    counting = CountingStore(inner)
    a = zarrkit.open_array(counting, path="a")
    counting.peak = counting.ranged_gets = 0
    # Every second inner chunk along both axes, none merged with another into one range.
    selection = np.s_[::16, ::16]
    with zarrkit.config.set(shard_coalesce_gap_bytes=0):
        np.testing.assert_array_equal(a[selection], data[selection])
    assert counting.ranged_gets == 1 + 16  # the shard's index, then its 16 inner chunks
    assert counting.peak == 16, counting.peak


class SlowKeyStore(WrapperStore):
    """Answers the get of `slow` only once `release` is set; records gets that were cancelled."""

    def __init__(self, store, slow):
        super().__init__(store)
        self.slow = slow
        self.release = threading.Event()
        self.cancelled = threading.Event()

    async def get(self, key, prototype, byte_range=None):
        if key == self.slow:
            try:
                while not self.release.is_set():
                    await asyncio.sleep(0.005)
            except asyncio.CancelledError:
                self.cancelled.set()
                raise
        return await self._store.get(key, prototype, byte_range)


def test_values_are_handed_over_as_they_arrive():
    inner = MemoryStore()
    zarr.create_array(inner, name="a", data=np.arange(40, dtype="i4"), chunks=(10,))
    store = SlowKeyStore(inner, slow="a/c/1")
    bridge = ZarrPythonStore(store)._bridge
    arrivals = bridge.fetch_each(["a/c/0", "a/c/1", "a/c/2", "a/c/9"])
    first: list = []
    while len(first) < 3:  # the three others, while the slow one is still on the way
        first += arrivals.next()
    assert sorted(i for i, _ in first) == [0, 2, 3]
    values = dict(first)
    assert values[3] is None  # absent
    assert bytes(values[0]) == inner._store_dict["a/c/0"].to_bytes()
    store.release.set()
    (index, value), = arrivals.next()
    assert index == 1 and value is not None
    assert arrivals.next() == []


def test_cancel_stops_the_gets_still_on_the_way():
    inner = MemoryStore()
    zarr.create_array(inner, name="a", data=np.arange(40, dtype="i4"), chunks=(10,))
    store = SlowKeyStore(inner, slow="a/c/1")
    arrivals = ZarrPythonStore(store)._bridge.fetch_each(["a/c/0", "a/c/1"])
    assert [i for i, _ in arrivals.next()] == [0]
    arrivals.cancel()  # what the engine does when a read fails while values are on the way
    assert store.cancelled.wait(timeout=10)


def test_a_corrupt_chunk_is_a_data_loss_error_naming_it():
    inner = MemoryStore()
    zarr.create_array(inner, name="a", data=np.arange(40, dtype="i4"), chunks=(10,))
    inner._store_dict["a/c/2"] = inner._store_dict["a/c/2"][:3]  # a truncated chunk
    with pytest.raises(zarrkit.errors.DataLossError, match="array 'a' in zarr-python store .*, chunk 'c/2'"):
        zarrkit.open_array(CountingStore(inner), path="a")[...]


def test_python_threads_read_one_store_at_once(tmp_path):
    store = make_store("fsspec-memory", tmp_path)
    data = sample((128, 128), "f4")
    zarrkit.create_array(store, name="a", data=data, chunks=(16, 16))
    a = zarrkit.open_array(store, path="a", mode="r")
    results: dict[int, np.ndarray] = {}
    errors: list[BaseException] = []

    def read(i: int) -> None:
        try:
            results[i] = a[i * 16 : i * 16 + 40, ::-1]
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=read, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for i in range(6):
        np.testing.assert_array_equal(results[i], data[i * 16 : i * 16 + 40, ::-1])


@pytest.mark.parametrize("kind", ["zarr-memory", "fsspec-memory", "obstore-memory"])
def test_read_only_stores(kind, tmp_path):
    writable = make_store(kind, tmp_path)
    zarr.create_array(writable, name="a", data=np.arange(10), chunks=(5,))
    store = writable.with_read_only(True)
    a = zarrkit.open_array(store, path="a")
    assert a.read_only
    np.testing.assert_array_equal(a[...], np.arange(10))
    with pytest.raises(ReadOnlyError):
        a[0] = 5
    for mode in ("r+", "w", "w-"):
        with pytest.raises(ReadOnlyError, match="read-only"):
            zarrkit.open_array(store, path="a", mode=mode, shape=(10,), dtype="i8")
    with pytest.raises(ReadOnlyError):
        zarrkit.create_array(store, name="b", shape=(3,), dtype="i1")
    wrapped = ZarrPythonStore(store)
    assert wrapped.read_only
    with pytest.raises(ReadOnlyError):
        wrapped.set("k", b"v")
    with pytest.raises(InvalidArgumentError, match="read-only"):
        wrapped._handle.set("k", b"v")  # the engine's own check, below the Python one
    np.testing.assert_array_equal(zarr.open_array(writable, path="a", mode="r")[...], np.arange(10))


@pytest.mark.parametrize("kind", STORE_KINDS)
def test_missing_nodes_and_keys(kind, tmp_path):
    store = make_store(kind, tmp_path)
    with pytest.raises(NotFoundError):
        zarrkit.open_array(store, path="nothing", mode="r")
    with pytest.raises(NotFoundError):
        zarrkit.open_group(store, path="nothing", mode="r")
    a = zarrkit.create_array(store, name="a", shape=(30,), chunks=(10,), dtype="f4", fill_value=2.5)
    np.testing.assert_array_equal(a[...], np.full(30, 2.5, "f4"))  # no chunk stored yet
    wrapped = a.store
    assert wrapped.get("nothing/zarr.json") is None
    assert not wrapped.exists("nothing/zarr.json") and not wrapped.exists("a/c/0")
    assert wrapped.get("a/c/1") is None
    assert wrapped.get_many(["a/c/0", "a/zarr.json", "a/c/2"])[::2] == [None, None]
    wrapped.delete("a/c/0")  # absent: no error


@pytest.mark.parametrize("kind", STORE_KINDS)
def test_key_value_api(kind, tmp_path):
    store = ZarrPythonStore(make_store(kind, tmp_path))
    if kind == "icechunk":
        # Icechunk holds Zarr nodes only: keys below an array's chunk prefix.
        zarrkit.create_array(store, name="d", shape=(4, 4), chunks=(2, 2), dtype="u1")
        keys = ["d/c/0/0", "d/c/0/1", "d/c/1/0"]
    else:
        keys = ["d/a", "d/b/c", "d/b/e", "f"]
    for i, key in enumerate(keys):
        store.set(key, bytes([i + 1]) * (i + 3))
    assert store.get(keys[1]) == bytes([2]) * 4
    missing = "d/c/1/1" if kind == "icechunk" else "d/missing"  # Icechunk refuses keys no Zarr node has
    values = store.get_many([keys[0], missing, keys[2]])
    assert values[0].tobytes() == bytes([1]) * 3 and values[1] is None and values[2].tobytes() == bytes([3]) * 5
    assert store.exists(keys[0]) and keys[0] in store
    below = [k for k in store.list("d") if k in keys]
    assert below == sorted(k for k in keys if k.startswith("d/"))
    store.delete(keys[0])
    assert not store.exists(keys[0])
    if kind != "icechunk":
        assert store.list_dir("d") == ([], ["b"])
        assert store.list_dir("") == (["f"], ["d"])
        store.delete_dir("d")
        assert store.list() == ["f"]


class FailingStore(WrapperStore):
    """Raises error_type(text) from every get of a chunk and every set."""

    def __init__(self, store, error_type, text):
        super().__init__(store)
        self.error_type = error_type
        self.text = text

    async def get(self, key, prototype, byte_range=None):
        if "/c/" in key:
            raise self.error_type(self.text)
        return await self._store.get(key, prototype, byte_range)

    async def set(self, key, value):
        raise self.error_type(self.text)


@pytest.mark.parametrize(
    ("error_type", "text", "expected"),
    [
        (PermissionError, "access denied", IoError),
        (ConnectionResetError, "connection reset by peer", IoError),
        (RuntimeError, "the service said no", IoError),
        (NotImplementedError, "no such operation", UnsupportedError),
    ],
)
def test_store_failures_become_typed_errors(error_type, text, expected):
    inner = MemoryStore()
    zarr.create_array(inner, name="a", data=np.arange(100), chunks=(10,))
    a = zarrkit.open_array(FailingStore(inner, error_type, text), path="a")
    with pytest.raises(expected) as caught:
        a[...]
    message = str(caught.value)
    assert "array 'a'" in message and "a/c/" in message and f"{error_type.__name__}: {text}" in message
    with pytest.raises(expected, match="cannot write"):
        a[:10] = 1


def test_pickles_as_the_zarr_python_store(tmp_path):
    store = make_store("obstore-local", tmp_path)
    data = sample((20, 20), "f8")
    a = zarrkit.create_array(store, name="a", data=data, chunks=(8, 8))
    copy = pickle.loads(pickle.dumps(a))
    assert isinstance(copy.store, ZarrPythonStore) and copy.store is not a.store
    np.testing.assert_array_equal(copy[...], data)
    read_only = pickle.loads(pickle.dumps(zarrkit.open_array(store, path="a", mode="r")))
    assert read_only.read_only and read_only.store.read_only


def test_zarr_local_store_opens_zarrkit_local_store(tmp_path):
    store = zarr.storage.LocalStore(tmp_path / "data.zarr")
    a = zarrkit.create_array(store, name="a", data=np.arange(5), chunks=(2,))
    assert isinstance(a.store, zarrkit.storage.LocalStore)
    np.testing.assert_array_equal(zarr.open_array(store, path="a", mode="r")[...], np.arange(5))


def test_not_a_zarr_store():
    with pytest.raises(TypeError, match="zarr.abc.store.Store"):
        ZarrPythonStore({"zarr.json": b"{}"})
    with pytest.raises(TypeError, match="zarr-python store"):
        zarrkit.open_array(object())


def test_read_chunks_from_a_zarr_python_store():
    store = ObjectStore(obstore.store.MemoryStore())
    data = sample((20, 30), "f4")
    a = zarrkit.create_array(store, name="a", data=data, chunks=(10, 10), fill_value=-5)
    first, last, absent = zarrkit.read_chunks(a, store, ["a/c/0/0", "a/c/1/2", "a/c/3/3"])
    np.testing.assert_array_equal(first, data[:10, :10])
    np.testing.assert_array_equal(last, data[10:, 20:])
    np.testing.assert_array_equal(absent, np.full((10, 10), -5, "f4"))


def test_xarray_reads_a_zarr_python_store_through_zarrkit():
    import xarray as xr
    store = FsspecStore.from_url(f"memory://zarrkit-test-{uuid.uuid4().hex}/ds.zarr")
    ds = xr.Dataset(
        {"t": (("y", "x"), sample((30, 40), "f4")), "q": (("y",), np.arange(30, dtype="i2"))},
        coords={"y": np.arange(30.0), "x": np.arange(40.0)},
        attrs={"title": "through fsspec"},
    )
    ds.to_zarr(store, zarr_format=3, consolidated=False)
    ours = xr.open_dataset(store, engine="zarrkit")
    theirs = xr.open_dataset(store, engine="zarr", consolidated=False)
    xr.testing.assert_identical(ours.load(), theirs.load())
