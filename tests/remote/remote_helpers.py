"""Helpers shared by the remote-store tests: running the zarrkit CLI against a server, and
clients (boto3, zarr-python over s3fs) that talk to the same server directly."""

import os
import subprocess

REGION = "us-east-1"
CREDENTIALS = {"key": "testing", "secret": "testing"}


def boto3_client(endpoint):
    import boto3
    from botocore.config import Config

    return boto3.client("s3", endpoint_url=endpoint, region_name=REGION, aws_access_key_id="testing",
                        aws_secret_access_key="testing", config=Config(retries={"max_attempts": 1}))


def zarrkit_env(endpoint, tmp_path, **extra):
    """The environment of a zarrkit run against `endpoint`: moto's credentials, no AWS files
    of the machine, and fast retries (the policy's shape is unchanged, only its scale)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "ZARRKIT_"))}
    env.update(
        AWS_ACCESS_KEY_ID="testing",
        AWS_SECRET_ACCESS_KEY="testing",
        AWS_REGION=REGION,
        AWS_ENDPOINT_URL_S3=endpoint,
        AWS_CONFIG_FILE=str(tmp_path / "no-aws-config"),
        AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "no-aws-credentials"),
        ZARRKIT_HTTP_RETRY_INITIAL_MS="10",
        ZARRKIT_HTTP_RETRY_MAX_MS="200",
        ZARRKIT_HTTP_STALL_TIMEOUT_MS="1000",
        ZARRKIT_HTTP_CONNECT_TIMEOUT_MS="2000",
    )
    env.update({k: str(v) for k, v in extra.items()})
    return env


class Zarrkit:
    def __init__(self, binary, env):
        self.binary, self.env = binary, env

    def run(self, *args, expect=0, timeout=120, **popen):
        proc = subprocess.run([self.binary, *map(str, args)], capture_output=True, text=True, env=self.env,
                              timeout=timeout, **popen)
        assert proc.returncode == expect, f"zarrkit {args}: exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
        return proc

    def error(self, *args, **kwargs):
        """Runs a command that must fail; returns its single error line."""
        proc = self.run(*args, expect=1, **kwargs)
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("zarrkit: error: "), proc.stderr
        return lines[0]


def s3fs_store(endpoint, url, read_only=True):
    import zarr

    options = dict(CREDENTIALS, endpoint_url=endpoint, use_listings_cache=False, skip_instance_cache=True)
    return zarr.storage.FsspecStore.from_url(url, storage_options=options, read_only=read_only)
