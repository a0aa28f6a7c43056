"""HTTPS: zarrkit reads over TLS from nginx with a self-signed certificate, trusting it
through ZARRKIT_CA_BUNDLE or AWS_CA_BUNDLE; without that trust the read fails with a clear
TLS error (no data); ZARRKIT_HTTP_VERIFY_TLS=0 skips the check."""

import numpy as np
import pytest
import zarr

from remote_helpers import Zarrkit, zarrkit_env
from servers import Nginx, nginx_binary


@pytest.fixture(scope="module")
def https(tmp_path_factory):
    if nginx_binary() is None:
        pytest.skip("nginx is not installed (scripts/setup installs the Debian package nginx-light)")
    root = tmp_path_factory.mktemp("www-tls")
    server = Nginx(tmp_path_factory.mktemp("nginx-tls"), root, tls=True)
    server.root = root
    data = (np.arange(60 * 50).reshape(60, 50) % 97).astype("uint16")
    a = zarr.create_array(str(root / "a.zarr"), shape=data.shape, dtype=data.dtype, chunks=(16, 16),
                          shards=(32, 32), compressors=zarr.codecs.ZstdCodec(level=1))
    a[...] = data
    server.data = data
    yield server
    server.close()


def cli(zarrkit_bin, tmp_path, **env):
    return Zarrkit(zarrkit_bin, zarrkit_env("http://127.0.0.1:9", tmp_path, **env))


@pytest.mark.parametrize("variable", ["ZARRKIT_CA_BUNDLE", "AWS_CA_BUNDLE"])
def test_reads_over_https_trusting_the_servers_certificate(https, zarrkit_bin, tmp_path, variable):
    zk = cli(zarrkit_bin, tmp_path, **{variable: https.certificate})
    out = tmp_path / "out.npy"
    zk.run("export", f"{https.url}/a.zarr", out)
    np.testing.assert_array_equal(np.load(out), https.data)
    zk.run("export", f"{https.url}/a.zarr", out, "--select", "5:50:3,::-7")
    np.testing.assert_array_equal(np.load(out), https.data[5:50:3, ::-7])


def test_an_untrusted_certificate_is_a_clear_error(https, zarrkit_bin, tmp_path):
    zk = cli(zarrkit_bin, tmp_path)
    out = tmp_path / "out.npy"
    message = zk.error("export", f"{https.url}/a.zarr", out)
    assert "TLS" in message and "127.0.0.1" in message, message
    assert not out.exists()


def test_verification_can_be_switched_off(https, zarrkit_bin, tmp_path):
    zk = cli(zarrkit_bin, tmp_path, ZARRKIT_HTTP_VERIFY_TLS="0")
    out = tmp_path / "out.npy"
    zk.run("export", f"{https.url}/a.zarr", out)
    np.testing.assert_array_equal(np.load(out), https.data)
