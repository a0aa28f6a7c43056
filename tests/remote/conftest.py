"""Fixtures for the remote-store tests: moto's S3 server and nginx on 127.0.0.1 (started
here, once per session), a fresh bucket per test, the fault proxy, and the zarrkit binary
(ZARRKIT_BIN, as for the other pytest suites; scripts/test sets it)."""

import os
import sys
import uuid
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from fault_proxy import FaultProxy  # noqa: E402
from remote_helpers import Zarrkit, boto3_client, zarrkit_env  # noqa: E402
from servers import MotoServer, Nginx, nginx_binary  # noqa: E402


def pytest_configure(config):
    config.addinivalue_line("filterwarnings", "ignore::zarr.errors.ZarrUserWarning")
    config.addinivalue_line("filterwarnings", "ignore:The data type .* does not have a Zarr V3")


@pytest.fixture(scope="session")
def zarrkit_bin():
    path = os.environ.get("ZARRKIT_BIN")
    if not path:
        pytest.skip("ZARRKIT_BIN is not set: build zarrkit (scripts/build dev) and set "
                    "ZARRKIT_BIN=build/dev/zarrkit, or run scripts/test")
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        pytest.skip(f"ZARRKIT_BIN={path} is not an executable file: build it first (scripts/build dev)")
    return os.path.abspath(path)


@pytest.fixture(scope="session")
def moto(tmp_path_factory):
    server = MotoServer(tmp_path_factory.mktemp("moto"))
    yield server
    server.close()


@pytest.fixture(scope="session")
def nginx(tmp_path_factory):
    if nginx_binary() is None:
        pytest.skip("nginx is not installed (scripts/setup installs the Debian package nginx-light)")
    root = tmp_path_factory.mktemp("www")
    server = Nginx(tmp_path_factory.mktemp("nginx"), root)
    server.root = root
    yield server
    server.close()


@pytest.fixture
def s3(moto):
    return boto3_client(moto.url)


@pytest.fixture
def bucket(s3):
    name = "zk-" + uuid.uuid4().hex[:20]
    s3.create_bucket(Bucket=name)
    return name


@pytest.fixture
def proxy_for():
    """proxy_for(port) -> a FaultProxy in front of 127.0.0.1:port; all are closed at the end."""
    proxies = []

    def make(port, **kwargs):
        proxies.append(FaultProxy(port, **kwargs))
        return proxies[-1]

    yield make
    for p in proxies:
        p.close()


@pytest.fixture
def zarrkit_s3(zarrkit_bin, moto, tmp_path):
    """zarrkit talking to the moto server directly."""
    return Zarrkit(zarrkit_bin, zarrkit_env(moto.url, tmp_path))
