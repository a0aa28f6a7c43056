"""The zarrkit Python package on remote stores: arrays in moto's S3 bucket and on nginx,
opened by URL, read-only where they must be, pickled by location, and read and written
chunk-parallel by a dask.distributed cluster of worker processes."""

import os
import pickle

import numpy as np
import pytest

from remote_helpers import s3fs_store, zarrkit_env

zarrkit = pytest.importorskip("zarrkit")


@pytest.fixture
def s3_env(moto, tmp_path, monkeypatch):
    """This process (and the worker processes it starts) talks to moto, as the CLI tests do."""
    for name in list(os.environ):
        if name.startswith(("AWS_", "ZARRKIT_")):
            monkeypatch.delenv(name)
    for name, value in zarrkit_env(moto.url, tmp_path).items():
        if name.startswith(("AWS_", "ZARRKIT_")):
            monkeypatch.setenv(name, value)
    # zarrkit read its ZARRKIT_* variables once, at its first use: this process takes the
    # same fast retries from zarrkit.config (the worker processes from the environment).
    with zarrkit.config.set({"remote.retry_initial_delay_ms": 10, "remote.retry_max_delay_ms": 200,
                             "remote.stall_timeout_ms": 1000, "remote.connect_timeout_ms": 2000}):
        yield


def test_s3_create_write_read(s3_env, moto, bucket):
    data = np.arange(50 * 70, dtype="f8").reshape(50, 70)
    url = f"s3://{bucket}/group/a.zarr"
    a = zarrkit.create_array(url, shape=data.shape, chunks=(16, 20), shards=(32, 40), dtype="f8")
    assert isinstance(a.store, zarrkit.storage.RemoteStore) and a.store.url == f"s3://{bucket}/group/a.zarr"
    a[...] = data
    a.attrs["units"] = "m"
    b = zarrkit.open(url, mode="r")
    np.testing.assert_array_equal(b[3:40, ::3], data[3:40, ::3])
    assert b.read_only and b.attrs["units"] == "m"
    with pytest.raises(zarrkit.errors.ReadOnlyError):
        b[0, 0] = 1
    # zarr-python (over s3fs) reads what zarrkit wrote.
    import zarr

    np.testing.assert_array_equal(zarr.open_array(s3fs_store(moto.url, url), mode="r")[...], data)


def test_s3_read_mode_opens_the_store_read_only(s3_env, bucket):
    zarrkit.create_array(f"s3://{bucket}/x.zarr", data=np.ones((4, 4), "i2"), chunks=(2, 2))
    store = zarrkit.open(f"s3://{bucket}/x.zarr", mode="r").store
    assert store.read_only
    with pytest.raises(zarrkit.errors.ReadOnlyError):
        store.set("zarr.json", b"{}")
    with pytest.raises(FileNotFoundError):
        zarrkit.open(f"s3://{bucket}/missing.zarr", mode="r")


def test_http_is_read_only(nginx, tmp_path):
    data = np.random.default_rng(3).random((30, 20)).astype("f4")
    zarrkit.create_array(nginx.root / "h.zarr", data=data, chunks=(8, 8), zarr_format=2)
    url = f"{nginx.url}/h.zarr"
    for mode in (None, "r", "a"):
        a = zarrkit.open(url, mode=mode)
        assert a.read_only and a.store.read_only
        np.testing.assert_array_equal(a[...], data)
    with pytest.raises(zarrkit.errors.ReadOnlyError):
        a[0, 0] = 1
    for mode in ("r+", "w"):
        with pytest.raises(zarrkit.errors.UnsupportedError, match="read-only"):
            zarrkit.open(url, mode=mode)
    # Pickled by URL: the copy reads from the server again, not from a copy of the data.
    copy = pickle.loads(pickle.dumps(a))
    assert copy.store == a.store and len(pickle.dumps(a)) < 1000
    np.testing.assert_array_equal(copy[5:9], data[5:9])


def test_opening_an_array_to_read_asks_the_server_once(nginx, proxy_for):
    # One request for the metadata: over a network each one is a round trip.
    data = np.arange(12, dtype="i2").reshape(3, 4)
    zarrkit.create_array(nginx.root / "once.zarr", data=data, chunks=(2, 2))
    zarrkit.create_array(nginx.root / "once2.zarr", data=data, chunks=(2, 2), zarr_format=2)
    zarrkit.create_group(nginx.root / "g.zarr")
    proxy = proxy_for(nginx.port)
    base = f"http://127.0.0.1:{proxy.port}"
    a = zarrkit.open_array(f"{base}/once.zarr", mode="r")
    assert proxy.requests == 1
    np.testing.assert_array_equal(a[...], data)
    with pytest.raises(zarrkit.errors.NotFoundError, match="not v2"):
        zarrkit.open_array(f"{base}/once.zarr", mode="r", zarr_format=2)
    # v2, groups and missing arrays are still told apart.
    np.testing.assert_array_equal(zarrkit.open_array(f"{base}/once2.zarr", mode="r")[...], data)
    with pytest.raises(zarrkit.errors.NotFoundError, match="is a group"):
        zarrkit.open_array(f"{base}/g.zarr", mode="r")
    with pytest.raises(zarrkit.errors.NotFoundError, match="no array"):
        zarrkit.open_array(f"{base}/missing.zarr", mode="r")


def test_dask_distributed_on_s3(s3_env, bucket):
    distributed = pytest.importorskip("distributed")
    da = pytest.importorskip("dask.array")
    shape, chunks = (96, 80), (24, 20)
    data = np.random.default_rng(7).integers(-1000, 1000, shape).astype("i4")
    src = zarrkit.create_array(f"s3://{bucket}/src.zarr", data=data, chunks=chunks)
    dst = zarrkit.create_array(f"s3://{bucket}/dst.zarr", shape=shape, chunks=chunks, dtype="i4")
    assert len(pickle.dumps(src)) < 1000  # by location, not by data
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=2, processes=True, dashboard_address=None, silence_logs=50
    ) as cluster, distributed.Client(cluster) as client:
        x = da.from_array(src, chunks=src.chunks)
        # Each task reads or writes one chunk in the bucket from a worker process.
        client.compute(da.store(x * 3 - 7, dst, lock=False, compute=False)).result()
        back = client.compute(da.from_array(dst, chunks=dst.chunks)).result()
        total = client.compute(x.astype("i8").sum()).result()
        assert len(set(client.run(os.getpid).values())) == 2
    np.testing.assert_array_equal(back, data * 3 - 7)
    np.testing.assert_array_equal(zarrkit.open_array(f"s3://{bucket}/dst.zarr", mode="r")[...], data * 3 - 7)
    assert total == data.astype("i8").sum()


def _s3_writer(url, index, processes, inner, per_process, env):
    os.environ.update(env)
    a = zarrkit.open_array(url, mode="r+")
    for k in range(per_process):
        part = (k * processes + index) * inner
        a[part : part + inner] = index * 1000 + k + 1


@pytest.mark.parametrize("layout", ["shards", "chunks"])
def test_s3_processes_writing_parts_of_one_value_lose_nothing(s3_env, moto, bucket, tmp_path, layout):
    """Several processes updating different inner chunks of one shard (different parts of one
    chunk) on S3: each update is a conditional PUT (If-Match on the ETag, If-None-Match where
    the object is new), retried with the newer value on conflict, so none is lost."""
    import multiprocessing

    processes, inner, per_process = 4, 4, 12
    n = processes * per_process * inner
    url = f"s3://{bucket}/concurrent-{layout}.zarr"
    if layout == "shards":
        zarrkit.create_array(url, shape=(n,), chunks=(inner,), shards=(n,), dtype="i4", fill_value=0)
    else:
        zarrkit.create_array(url, shape=(n,), chunks=(n,), dtype="i4", fill_value=0)
    env = {k: v for k, v in zarrkit_env(moto.url, tmp_path).items() if k.startswith(("AWS_", "ZARRKIT_"))}
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_s3_writer, args=(url, i, processes, inner, per_process, env))
               for i in range(processes)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(300)
        assert w.exitcode == 0
    got = zarrkit.open_array(url, mode="r")[...]
    expected = np.zeros(n, dtype="i4")
    for index in range(processes):
        for k in range(per_process):
            part = (k * processes + index) * inner
            expected[part : part + inner] = index * 1000 + k + 1
    lost = int(np.count_nonzero(got != expected))
    assert lost == 0, f"{lost} of {n} values lost"


def test_cached_chunks_are_not_asked_for_again(nginx, proxy_for):
    # The decoded-chunk cache over HTTP: a second read of the same chunks sends no request.
    data = np.arange(64 * 48, dtype="u2").reshape(64, 48)
    zarrkit.create_array(nginx.root / "cached.zarr", data=data, chunks=(16, 16))
    zarrkit.create_array(nginx.root / "cached_shards.zarr", data=data, chunks=(8, 8), shards=(32, 48))
    proxy = proxy_for(nginx.port)
    with zarrkit.config.set({"cache.host_bytes": 16 << 20}):
        try:
            for name in ("cached.zarr", "cached_shards.zarr"):
                a = zarrkit.open_array(f"http://127.0.0.1:{proxy.port}/{name}", mode="r")
                np.testing.assert_array_equal(a[5:40, 3:30], data[5:40, 3:30])
                before = proxy.requests
                np.testing.assert_array_equal(a[10:35, 3:30], data[10:35, 3:30])
                np.testing.assert_array_equal(a[5:40, 3:30], data[5:40, 3:30])
                assert proxy.requests == before, name
        finally:
            zarrkit.config.clear_cache()


def test_s3_cached_chunks_until_this_process_writes(s3_env, s3, bucket):
    data = np.arange(32 * 32, dtype="i4").reshape(32, 32)
    url = f"s3://{bucket}/cached.zarr"
    a = zarrkit.create_array(url, data=data, chunks=(16, 16))
    start = zarrkit.config.cache_stats()  # the counters run on across tests
    with zarrkit.config.set({"cache.host_bytes": 16 << 20}):
        try:
            np.testing.assert_array_equal(a[...], data)
            assert zarrkit.config.cache_stats()["misses"] - start["misses"] == 4
            # Another program deletes the chunks: this process does not ask again (the cache
            # does not see other processes' writes, docs/chunk-cache.md)...
            for item in s3.list_objects_v2(Bucket=bucket, Prefix="cached.zarr/c/")["Contents"]:
                s3.delete_object(Bucket=bucket, Key=item["Key"])
            np.testing.assert_array_equal(a[...], data)
            # ...but its own write of a chunk drops that chunk, which is read anew.
            a[0:16, 0:16] = -1
            expected = data.copy()
            expected[0:16, 0:16] = -1
            np.testing.assert_array_equal(a[...], expected)
            assert zarrkit.config.cache_stats()["invalidations"] > start["invalidations"]
        finally:
            zarrkit.config.clear_cache()
    # Without the cache, the deleted chunks read as the fill value.
    expected[0:16, 16:] = 0
    expected[16:, :] = 0
    np.testing.assert_array_equal(zarrkit.open_array(url, mode="r")[...], expected)
