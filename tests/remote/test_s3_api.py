"""The C++ S3Store API against moto: conditional writes, multipart uploads, paginated
listings and batched deletes (tests/remote/s3_live_test.cpp, built as remote_live_tests next
to the zarrkit binary)."""

import os
import subprocess

import pytest

from remote_helpers import zarrkit_env


def test_s3_store_api(zarrkit_bin, moto, bucket, tmp_path):
    binary = os.path.join(os.path.dirname(zarrkit_bin), "remote_live_tests")
    if not os.access(binary, os.X_OK):
        pytest.fail(f"{binary} was not built (it is built with the tests, next to zarrkit)")
    env = zarrkit_env(moto.url, tmp_path, ZARRKIT_TEST_S3_URL=f"s3://{bucket}/api")
    proc = subprocess.run([binary], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:]
    assert "[  PASSED  ] 5 tests." in proc.stdout, proc.stdout[-3000:]
