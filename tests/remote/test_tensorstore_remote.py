"""zarrkit and tensorstore sharing remote data: tensorstore's s3 driver reads what zarrkit
wrote into moto's bucket (and the reverse), and its http driver reads from nginx what zarrkit
wrote into the served directory. Both drivers work offline against servers on loopback."""

import numpy as np
import pytest

ts = pytest.importorskip("tensorstore")

from remote_helpers import REGION  # noqa: E402

LAYOUTS = {
    "plain": ["--chunks", "16,20", "--codec", "zstd"],
    "sharded": ["--chunks", "8,10", "--shards", "32,40", "--codec", "zstd"],
}


def sample(shape, seed=0):
    rng = np.random.default_rng(seed)
    return (np.indices(shape).sum(axis=0) * 7 + rng.integers(0, 100, shape)).astype("int32")


def s3_spec(moto, bucket, path):
    return {"driver": "zarr3",
            "kvstore": {"driver": "s3", "bucket": bucket, "path": path, "endpoint": moto.url,
                        "aws_region": REGION},
            "context": {"aws_credentials": {"type": "environment"}}}


@pytest.fixture
def aws_env(monkeypatch, tmp_path):
    """moto's credentials for tensorstore, which reads them from the environment."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_REGION", REGION)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))


@pytest.mark.parametrize("layout", LAYOUTS)
def test_tensorstore_reads_from_s3_what_zarrkit_wrote(zarrkit_s3, moto, bucket, aws_env, tmp_path, layout):
    data = sample((50, 70))
    np.save(tmp_path / "in.npy", data)
    zarrkit_s3.run("import", tmp_path / "in.npy", f"s3://{bucket}/zk/a.zarr", *LAYOUTS[layout])
    array = ts.open(s3_spec(moto, bucket, "zk/a.zarr/"), read=True).result()
    np.testing.assert_array_equal(array.read().result(), data)


def test_zarrkit_reads_from_s3_what_tensorstore_wrote(zarrkit_s3, moto, bucket, aws_env, tmp_path):
    data = sample((45, 61), seed=1)
    spec = s3_spec(moto, bucket, "ts/b.zarr/")
    spec.update({"metadata": {"shape": list(data.shape), "data_type": "int32",
                              "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [16, 16]}}},
                 "create": True})
    array = ts.open(spec).result()
    array.write(data).result()
    out = tmp_path / "out.npy"
    zarrkit_s3.run("export", f"s3://{bucket}/ts/b.zarr", out, "--select", "5:40,::-3")
    np.testing.assert_array_equal(np.load(out), data[5:40, ::-3])


def test_tensorstore_reads_over_http_what_zarrkit_wrote(zarrkit_bin, nginx, tmp_path):
    from remote_helpers import Zarrkit, zarrkit_env

    zk = Zarrkit(zarrkit_bin, zarrkit_env("http://127.0.0.1:9", tmp_path))
    data = sample((40, 33), seed=2)
    np.save(tmp_path / "in.npy", data)
    name = tmp_path.name
    zk.run("import", tmp_path / "in.npy", nginx.root / name / "c.zarr", *LAYOUTS["sharded"])
    spec = {"driver": "zarr3", "kvstore": {"driver": "http", "base_url": f"{nginx.url}/{name}/c.zarr/"}}
    array = ts.open(spec, read=True).result()
    np.testing.assert_array_equal(array.read().result(), data)
