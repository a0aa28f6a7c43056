"""The delaying nginx of servers.py (bench/remote reads through it to have latency on
loopback): each answer waits the delay, answers are otherwise what the server behind gives
(byte ranges, 404s, S3 queries and headers), and many requests wait at the same time."""

import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest

from remote_helpers import boto3_client
from servers import Nginx, echo_module, nginx_binary

pytestmark = pytest.mark.skipif(nginx_binary() is None or echo_module() is None,
                                reason="nginx or its echo module is not installed (scripts/setup installs "
                                       "nginx-light and libnginx-mod-http-echo)")

DELAY_MS = 150


def fetch(url, headers=None):
    """(status, body, seconds) of one GET on a fresh connection."""
    request = urllib.request.Request(url, headers=headers or {})
    started = time.perf_counter()
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, answer.read(), time.perf_counter() - started
    except urllib.error.HTTPError as e:
        return e.code, e.read(), time.perf_counter() - started


@pytest.fixture
def site(tmp_path):
    root = tmp_path / "www"
    (root / "d").mkdir(parents=True)
    (root / "d" / "value").write_bytes(bytes(range(256)) * 40)
    server = Nginx(tmp_path, root, delay_ms=DELAY_MS)
    yield server
    server.close()


def test_every_answer_waits_the_delay_and_is_the_servers_answer(site):
    status, body, seconds = fetch(f"{site.url}/d/value")
    assert status == 200 and body == bytes(range(256)) * 40
    assert seconds >= DELAY_MS / 1000
    status, body, seconds = fetch(f"{site.url}/d/value", {"Range": "bytes=250-261"})
    assert status == 206 and body == bytes([250, 251, 252, 253, 254, 255, 0, 1, 2, 3, 4, 5])
    assert seconds >= DELAY_MS / 1000
    status, _, seconds = fetch(f"{site.url}/d/missing")
    assert status == 404
    assert seconds >= DELAY_MS / 1000


def test_requests_wait_at_the_same_time_not_one_after_another(site):
    # 16 requests at once: one after another they would take 16 delays (2.4 s).
    started = time.perf_counter()
    with ThreadPoolExecutor(16) as pool:
        answers = list(pool.map(lambda _: fetch(f"{site.url}/d/value"), range(16)))
    elapsed = time.perf_counter() - started
    assert all(status == 200 for status, _, _ in answers)
    assert elapsed < 8 * DELAY_MS / 1000, f"{elapsed:.2f} s for 16 requests of {DELAY_MS} ms"


def test_in_front_of_s3_requests_pass_unchanged(moto, bucket, tmp_path):
    s3 = boto3_client(moto.url)
    for i in range(3):
        s3.put_object(Bucket=bucket, Key=f"a/k{i}", Body=b"value %d" % i)
    proxy = Nginx(tmp_path, None, delay_ms=DELAY_MS, upstream=f"127.0.0.1:{moto.port}")
    try:
        through = boto3_client(proxy.url)
        started = time.perf_counter()
        listed = through.list_objects_v2(Bucket=bucket, Prefix="a/", MaxKeys=2)  # a query string
        assert time.perf_counter() - started >= DELAY_MS / 1000
        assert [o["Key"] for o in listed["Contents"]] == ["a/k0", "a/k1"] and listed["IsTruncated"]
        got = through.get_object(Bucket=bucket, Key="a/k2", Range="bytes=6-6")
        assert got["Body"].read() == b"2" and got["ContentRange"] == "bytes 6-6/7"
        through.put_object(Bucket=bucket, Key="a/new", Body=b"written through the proxy")  # a body
        assert s3.get_object(Bucket=bucket, Key="a/new")["Body"].read() == b"written through the proxy"
        with pytest.raises(through.exceptions.NoSuchKey):
            through.get_object(Bucket=bucket, Key="a/absent")
    finally:
        proxy.close()


def test_several_worker_processes_serve_and_all_stop(tmp_path):
    root = tmp_path / "www"
    root.mkdir()
    (root / "v").write_bytes(b"x" * 1000)
    server = Nginx(tmp_path, root, delay_ms=DELAY_MS, workers=3)
    try:
        with ThreadPoolExecutor(6) as pool:
            answers = list(pool.map(lambda _: fetch(f"{server.url}/v"), range(6)))
        assert all(status == 200 and body == b"x" * 1000 for status, body, _ in answers)
    finally:
        server.close()
    with pytest.raises(OSError):  # the workers went with the master: nothing listens any more
        urllib.request.urlopen(f"{server.url}/v", timeout=2)
