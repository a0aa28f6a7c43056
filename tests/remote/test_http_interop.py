"""zarrkit reading over HTTP what zarr-python wrote, served by nginx (byte ranges, keep-alive)."""

import uuid

import numpy as np
import pytest
import zarr

from remote_helpers import Zarrkit, zarrkit_env


@pytest.fixture
def zarrkit_http(zarrkit_bin, tmp_path):
    return Zarrkit(zarrkit_bin, zarrkit_env("http://127.0.0.1:9", tmp_path))


@pytest.fixture
def site(nginx):
    """A fresh directory under nginx's root, and its URL."""
    name = uuid.uuid4().hex[:12]
    (nginx.root / name).mkdir()
    return nginx.root / name, f"{nginx.url}/{name}"


LAYOUTS = {
    "v3": dict(chunks=(16, 20), compressors=zarr.codecs.ZstdCodec(level=3)),
    "v3-sharded": dict(chunks=(8, 10), shards=(32, 40), compressors=zarr.codecs.ZstdCodec(level=1)),
    "v3-sharded-crc": dict(chunks=(8, 10), shards=(16, 40), serializer=zarr.codecs.ShardingCodec(
        chunk_shape=(8, 10), codecs=[zarr.codecs.BytesCodec(), zarr.codecs.Crc32cCodec()],
        index_codecs=[zarr.codecs.BytesCodec(), zarr.codecs.Crc32cCodec()])),
    "v2": dict(chunks=(16, 20), zarr_format=2),
}


@pytest.mark.parametrize("layout", LAYOUTS)
def test_zarrkit_reads_over_http_what_zarr_python_wrote(zarrkit_http, site, tmp_path, layout):
    directory, url = site
    rng = np.random.default_rng(5)
    data = (np.indices((50, 70)).sum(axis=0) + rng.integers(0, 9, (50, 70))).astype("int32")
    kwargs = dict(LAYOUTS[layout])
    if "serializer" in kwargs:
        kwargs.pop("shards")
        kwargs["chunks"] = (16, 40)
    a = zarr.create_array(str(directory / "a.zarr"), shape=data.shape, dtype=data.dtype, **kwargs)
    a[...] = data
    out = tmp_path / "out.npy"
    zarrkit_http.run("export", f"{url}/a.zarr", out)
    np.testing.assert_array_equal(np.load(out), data)
    zarrkit_http.run("export", f"{url}/a.zarr", out, "--select", "3:41:2,7:9")
    np.testing.assert_array_equal(np.load(out), data[3:41:2, 7:9])
    info = zarrkit_http.run("info", f"{url}/a.zarr").stdout
    assert "(50, 70)" in info and "int32" in info, info


def test_missing_chunks_read_as_fill_value_and_groups_open(zarrkit_http, site, tmp_path):
    directory, url = site
    root = zarr.open_group(str(directory / "g.zarr"), mode="w", attributes={"k": 1})
    a = root.create_array("sparse", shape=(40,), chunks=(10,), dtype="f8", fill_value=-1.0)
    a[12:15] = 7.0  # one chunk stored; the other three are 404s
    out = tmp_path / "o.npy"
    zarrkit_http.run("export", f"{url}/g.zarr/sparse", out)
    expected = np.full(40, -1.0)
    expected[12:15] = 7.0
    np.testing.assert_array_equal(np.load(out), expected)
    info = zarrkit_http.run("info", f"{url}/g.zarr").stdout
    assert "group (zarr v3)" in info and "cannot list" in info, info


def test_http_errors(zarrkit_http, site, tmp_path):
    directory, url = site
    line = zarrkit_http.error("info", f"{url}/nothing.zarr")
    assert "no Zarr array or group there" in line, line
    zarr.create_array(str(directory / "a.zarr"), shape=(4,), chunks=(2,), dtype="u1")
    line = zarrkit_http.error("cp", f"{url}/a.zarr", f"{url}/b.zarr")
    assert "read-only" in line, line
    # Nothing listens on port 9: connection refused, retried, then a clear error.
    line = zarrkit_http.error("info", "http://127.0.0.1:9/x.zarr")
    assert "connection failed" in line and "gave up after" in line, line


def test_redirects_are_followed(zarrkit_http, site, tmp_path):
    directory, url = site
    data = np.arange(100, dtype="u2").reshape(10, 10)
    a = zarr.create_array(str(directory / "a.zarr"), shape=data.shape, dtype=data.dtype, chunks=(5, 5))
    a[...] = data
    moved = url.rsplit("/", 1)
    out = tmp_path / "o.npy"
    # /found/X -> 302 -> /moved/X -> 301 -> /X, for every request.
    zarrkit_http.run("export", f"{moved[0]}/found/{moved[1]}/a.zarr", out)
    np.testing.assert_array_equal(np.load(out), data)


def test_connections_are_reused(zarrkit_http, site, proxy_for, nginx, tmp_path):
    directory, url = site
    data = np.arange(64 * 64, dtype="i4").reshape(64, 64)
    a = zarr.create_array(str(directory / "a.zarr"), shape=data.shape, dtype=data.dtype, chunks=(8, 8))
    a[...] = data  # 64 chunks
    proxy = proxy_for(nginx.port)
    out = tmp_path / "o.npy"
    # The chunks are fetched together (up to ZARRKIT_HTTP_CONCURRENCY requests in flight).
    zarrkit_http.env = {**zarrkit_http.env, "ZARRKIT_HTTP_CONCURRENCY": "8"}
    zarrkit_http.run("export", f"{proxy.url}/{directory.name}/a.zarr", out)
    np.testing.assert_array_equal(np.load(out), data)
    assert proxy.requests >= 65
    # Keep-alive: about one connection per request in flight, not one per request.
    assert proxy.connections <= 10, (proxy.connections, proxy.requests)
