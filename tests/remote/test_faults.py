"""Faults between zarrkit and real servers (fault_proxy.py): 500s, 503 SlowDown, resets,
stalls, short and truncated bodies, lost answers. Reads and writes either succeed after
retries, with exactly the right data, or fail with one clear error line; nothing corrupt is
ever returned or stored."""

import hashlib

import numpy as np
import pytest
import zarr

from remote_helpers import Zarrkit, s3fs_store, zarrkit_env


def sample(shape, seed=0):
    rng = np.random.default_rng(seed)
    return (np.indices(shape).sum(axis=0) * 5 + rng.integers(0, 100, shape)).astype("int32")


DATA = sample((48, 60))


def write(store_or_path, sharded=False):
    kwargs = dict(chunks=(8, 10), shards=(24, 30)) if sharded else dict(chunks=(12, 15))
    a = zarr.create_array(store_or_path, shape=DATA.shape, dtype=DATA.dtype,
                          compressors=zarr.codecs.ZstdCodec(level=1), **kwargs)
    a[...] = DATA


@pytest.fixture
def s3_source(moto, bucket):
    """Two arrays in the bucket (plain chunks and shards read by byte ranges), written by zarr-python."""
    write(s3fs_store(moto.url, f"s3://{bucket}/plain.zarr", read_only=False))
    write(s3fs_store(moto.url, f"s3://{bucket}/sharded.zarr", read_only=False), sharded=True)
    return bucket


def through(proxy, zarrkit_bin, tmp_path, **extra):
    return Zarrkit(zarrkit_bin, zarrkit_env(proxy.url, tmp_path, **extra))


def export(zk, location, tmp_path):
    out = tmp_path / "out.npy"
    zk.run("export", location, out)
    return np.load(out)


READ_FAULTS = ["status500", "slowdown", "reset", "short", "stall", "lost_response"]


@pytest.mark.parametrize("fault", READ_FAULTS)
@pytest.mark.parametrize("array", ["plain", "sharded"])
def test_s3_reads_recover(zarrkit_bin, moto, s3_source, proxy_for, tmp_path, fault, array):
    proxy = proxy_for(moto.port, stall_seconds=3)
    zk = through(proxy, zarrkit_bin, tmp_path)
    proxy.inject(fault, method="GET", path=r"/c/", times=3)
    np.testing.assert_array_equal(export(zk, f"s3://{s3_source}/{array}.zarr", tmp_path), DATA)
    assert proxy.applied[fault] == 3


def test_s3_reads_catch_self_consistent_short_answers(zarrkit_bin, moto, s3_source, proxy_for, tmp_path):
    # Half a body with a Content-Length that matches it. For byte ranges (the shard index
    # and one inner chunk) the Content-Range gives it away; for whole objects, the CRC32
    # checksum that s3fs uploaded with does. Either way the read is retried.
    proxy = proxy_for(moto.port)
    zk = through(proxy, zarrkit_bin, tmp_path)
    proxy.inject("lying_short", method="GET", path=r"/c/", times=2)
    out = tmp_path / "part.npy"
    zk.run("export", f"s3://{s3_source}/sharded.zarr", out, "--select", "0:8,0:10")
    np.testing.assert_array_equal(np.load(out), DATA[0:8, 0:10])
    assert proxy.applied["lying_short"] == 2
    proxy.inject("lying_short", method="GET", path=r"/c/", times=3)
    np.testing.assert_array_equal(export(zk, f"s3://{s3_source}/sharded.zarr", tmp_path), DATA)
    assert proxy.applied["lying_short"] == 5


def test_s3_reads_verify_the_checksums_of_zarrkit_writes(zarrkit_bin, moto, bucket, proxy_for, tmp_path):
    # Objects zarrkit wrote carry a SHA-256 the server returns: a truncated but
    # self-consistent whole-object answer is caught by it.
    write(str(tmp_path / "src.zarr"))
    Zarrkit(zarrkit_bin, zarrkit_env(moto.url, tmp_path)).run("cp", tmp_path / "src.zarr", f"s3://{bucket}/a.zarr")
    proxy = proxy_for(moto.port)
    zk = through(proxy, zarrkit_bin, tmp_path)
    proxy.inject("lying_short", method="GET", path=r"/c/", times=2)
    np.testing.assert_array_equal(export(zk, f"s3://{bucket}/a.zarr", tmp_path), DATA)
    assert proxy.applied["lying_short"] == 2
    proxy.inject("lying_short", method="GET", path=r"/c/0/0$", times=1000)
    line = zk.error("export", f"s3://{bucket}/a.zarr", tmp_path / "never.npy")
    assert "SHA-256" in line and "gave up after" in line, line


@pytest.mark.parametrize("fault,expected", [("short", "truncated body"), ("slowdown", "SlowDown"),
                                            ("reset", "connection reset"), ("status500", "HTTP 500")])
def test_s3_reads_that_keep_failing_give_one_clear_error(zarrkit_bin, moto, s3_source, proxy_for, tmp_path, fault,
                                                         expected):
    proxy = proxy_for(moto.port)
    zk = through(proxy, zarrkit_bin, tmp_path, ZARRKIT_HTTP_MAX_ATTEMPTS=4)
    proxy.inject(fault, method="GET", path=r"/c/1/2$", times=1000)
    out = tmp_path / "never.npy"
    line = zk.error("export", f"s3://{s3_source}/plain.zarr", out)
    assert expected in line and "gave up after 4 tries" in line and "/plain.zarr/c/1/2" in line, line
    assert not out.exists()


WRITE_FAULTS = ["status500", "slowdown", "reset", "truncate_upload", "lost_response"]


def objects_under(s3, bucket, prefix):
    out = {}
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        for o in page.get("Contents", []):
            out[o["Key"][len(prefix):]] = s3.get_object(Bucket=bucket, Key=o["Key"])["Body"].read()
    return out


@pytest.mark.parametrize("fault", WRITE_FAULTS)
def test_s3_writes_recover(zarrkit_bin, moto, bucket, s3, proxy_for, tmp_path, fault):
    write(str(tmp_path / "src.zarr"), sharded=True)
    Zarrkit(zarrkit_bin, zarrkit_env(moto.url, tmp_path)).run("cp", tmp_path / "src.zarr", f"s3://{bucket}/clean/")
    proxy = proxy_for(moto.port)
    zk = through(proxy, zarrkit_bin, tmp_path)
    proxy.inject(fault, method="PUT", path=r"/c/", times=3)
    zk.run("cp", tmp_path / "src.zarr", f"s3://{bucket}/faulty/")
    assert proxy.applied[fault] == 3
    np.testing.assert_array_equal(zarr.open_array(s3fs_store(moto.url, f"s3://{bucket}/faulty"))[...], DATA)
    # Byte for byte what a write without faults stores.
    assert objects_under(s3, bucket, "faulty/") == objects_under(s3, bucket, "clean/")


@pytest.mark.parametrize("fault", ["truncate_upload", "reset", "slowdown"])
def test_s3_writes_that_keep_failing_store_nothing_corrupt(zarrkit_bin, moto, bucket, s3, proxy_for, tmp_path,
                                                           fault):
    write(str(tmp_path / "src.zarr"))
    Zarrkit(zarrkit_bin, zarrkit_env(moto.url, tmp_path)).run("cp", tmp_path / "src.zarr", f"s3://{bucket}/clean/")
    clean = objects_under(s3, bucket, "clean/")
    proxy = proxy_for(moto.port)
    zk = through(proxy, zarrkit_bin, tmp_path, ZARRKIT_HTTP_MAX_ATTEMPTS=3)
    proxy.inject(fault, method="PUT", path=r"/c/(1|3)/", times=1000)  # chunks of two block rows fail
    line = zk.error("cp", tmp_path / "src.zarr", f"s3://{bucket}/faulty/")
    assert "gave up after 3 tries" in line, line
    stored = objects_under(s3, bucket, "faulty/")
    # The copy's metadata goes last, so the failed copy is no array (recognisably unfinished).
    assert "zarr.json" not in stored and not any(k.startswith(("c/1/", "c/3/")) for k in stored), sorted(stored)
    for key, value in stored.items():  # whatever got there is whole
        assert hashlib.sha256(value).digest() == hashlib.sha256(clean[key]).digest(), key


HTTP_FAULTS = ["status500", "reset", "short", "stall"]


@pytest.mark.parametrize("fault", HTTP_FAULTS)
def test_http_reads_recover(zarrkit_bin, nginx, proxy_for, tmp_path, fault):
    name = f"faults-{fault}"
    write(str(nginx.root / name / "sharded.zarr"), sharded=True)
    proxy = proxy_for(nginx.port, stall_seconds=3)
    zk = Zarrkit(zarrkit_bin, zarrkit_env("http://127.0.0.1:9", tmp_path))
    proxy.inject(fault, method="GET", path=r"/c/", times=3)
    np.testing.assert_array_equal(export(zk, f"{proxy.url}/{name}/sharded.zarr", tmp_path), DATA)
    assert proxy.applied[fault] == 3


def test_http_range_reads_catch_self_consistent_short_answers(zarrkit_bin, nginx, proxy_for, tmp_path):
    # Plain HTTP has no checksums: a whole body cut short with a matching Content-Length is
    # caught only by decoding (the shard index's CRC32C here). Byte ranges are checked
    # against Content-Range, so reading one inner chunk (index suffix + chunk range) recovers.
    write(str(nginx.root / "faults-lying" / "sharded.zarr"), sharded=True)
    proxy = proxy_for(nginx.port)
    zk = Zarrkit(zarrkit_bin, zarrkit_env("http://127.0.0.1:9", tmp_path))
    proxy.inject("lying_short", method="GET", path=r"/c/", times=2)
    out = tmp_path / "part.npy"
    zk.run("export", f"{proxy.url}/faults-lying/sharded.zarr", out, "--select", "8:16,10:20")
    np.testing.assert_array_equal(np.load(out), DATA[8:16, 10:20])
    assert proxy.applied["lying_short"] == 2
    proxy.inject("lying_short", method="GET", path=r"/c/0/0$", times=1)
    line = zk.error("export", f"{proxy.url}/faults-lying/sharded.zarr", tmp_path / "never.npy")
    assert "checksum mismatch" in line, line


def test_http_reads_that_keep_failing_give_one_clear_error(zarrkit_bin, nginx, proxy_for, tmp_path):
    write(str(nginx.root / "faults-persistent" / "a.zarr"))
    proxy = proxy_for(nginx.port)
    zk = Zarrkit(zarrkit_bin, zarrkit_env("http://127.0.0.1:9", tmp_path, ZARRKIT_HTTP_MAX_ATTEMPTS=3))
    proxy.inject("short", method="GET", path=r"/c/0/0$", times=1000)
    line = zk.error("export", f"{proxy.url}/faults-persistent/a.zarr", tmp_path / "never.npy")
    assert "truncated body" in line and "gave up after 3 tries" in line, line
