"""zarrkit and zarr-python (over s3fs) sharing a bucket on moto's S3 server: each reads
what the other writes; the zarrkit CLI copies to, from and between buckets."""

import base64
import hashlib
import os
import pty
import subprocess

import numpy as np
import pytest
import zarr

from remote_helpers import Zarrkit, s3fs_store, zarrkit_env


def sample(shape, dtype="int32", seed=0):
    rng = np.random.default_rng(seed)
    # Smooth values plus noise: compressible, but not trivially.
    grid = np.indices(shape).sum(axis=0)
    return (grid * 3 + rng.integers(0, 50, shape)).astype(dtype)


def write_local(path, data, **kwargs):
    a = zarr.create_array(str(path), shape=data.shape, dtype=data.dtype, **kwargs)
    a[...] = data
    return a


def export(zk, location, tmp_path, name="out.npy"):
    out = tmp_path / name
    zk.run("export", location, out)
    return np.load(out)


LAYOUTS = {
    "v3": dict(chunks=(16, 20), compressors=zarr.codecs.ZstdCodec(level=3)),
    "v3-sharded": dict(chunks=(8, 10), shards=(32, 40), compressors=zarr.codecs.ZstdCodec(level=1)),
    "v2": dict(chunks=(16, 20), zarr_format=2),
}


@pytest.mark.parametrize("layout", LAYOUTS)
def test_zarr_python_reads_what_zarrkit_writes(zarrkit_s3, moto, bucket, tmp_path, layout):
    data = sample((50, 70))
    write_local(tmp_path / "src.zarr", data, **LAYOUTS[layout])
    zarrkit_s3.run("cp", tmp_path / "src.zarr", f"s3://{bucket}/out/a.zarr")
    array = zarr.open_array(s3fs_store(moto.url, f"s3://{bucket}/out/a.zarr"), mode="r")
    np.testing.assert_array_equal(array[...], data)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_zarrkit_reads_what_zarr_python_writes(zarrkit_s3, moto, bucket, tmp_path, layout):
    data = sample((45, 61), "float64", seed=1)
    store = s3fs_store(moto.url, f"s3://{bucket}/data/b.zarr", read_only=False)
    a = zarr.create_array(store, shape=data.shape, dtype=data.dtype, **LAYOUTS[layout])
    a[...] = data
    np.testing.assert_array_equal(export(zarrkit_s3, f"s3://{bucket}/data/b.zarr", tmp_path), data)
    # A selection through byte ranges of the shards (or whole chunks).
    out = tmp_path / "part.npy"
    zarrkit_s3.run("export", f"s3://{bucket}/data/b.zarr", out, "--select", "10:20,5:50:3")
    np.testing.assert_array_equal(np.load(out), data[10:20, 5:50:3])


def test_groups_list_and_copy_between_prefixes(zarrkit_s3, moto, bucket, tmp_path):
    store = s3fs_store(moto.url, f"s3://{bucket}/tree.zarr", read_only=False)
    root = zarr.open_group(store, mode="w", attributes={"title": "tree"})
    x = root.create_array("x", shape=(30,), chunks=(7,), dtype="u2")
    x[:] = np.arange(30)
    sub = root.create_group("sub")
    y = sub.create_array("y", shape=(6, 6), chunks=(4, 4), dtype="f4")
    y[:] = np.eye(6)
    info = zarrkit_s3.run("info", f"s3://{bucket}/tree.zarr").stdout
    assert "2 arrays, 1 groups" in info, info
    assert "title" in info

    zarrkit_s3.run("cp", f"s3://{bucket}/tree.zarr", f"s3://{bucket}/copy.zarr")
    copied = zarr.open_group(s3fs_store(moto.url, f"s3://{bucket}/copy.zarr"), mode="r")
    assert copied.attrs["title"] == "tree"
    np.testing.assert_array_equal(copied["x"][:], np.arange(30))
    np.testing.assert_array_equal(copied["sub/y"][:], np.eye(6))

    # And down to a local directory.
    zarrkit_s3.run("cp", f"s3://{bucket}/copy.zarr", tmp_path / "local.zarr")
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "local.zarr" / "sub" / "y"))[:], np.eye(6))


def test_overwrite_replaces_the_old_node(zarrkit_s3, moto, bucket, s3, tmp_path):
    write_local(tmp_path / "big.zarr", sample((40, 40)), chunks=(5, 5))
    write_local(tmp_path / "small.zarr", sample((4, 4), seed=3), chunks=(2, 2))
    zarrkit_s3.run("cp", tmp_path / "big.zarr", f"s3://{bucket}/a.zarr")
    line = zarrkit_s3.error("cp", tmp_path / "small.zarr", f"s3://{bucket}/a.zarr")
    assert "exist" in line, line
    zarrkit_s3.run("cp", tmp_path / "small.zarr", f"s3://{bucket}/a.zarr", "--overwrite")
    keys = sorted(o["Key"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"])
    assert len(keys) == 1 + 4, keys  # zarr.json and 2x2 chunks: the 64 old chunks are gone
    np.testing.assert_array_equal(export(zarrkit_s3, f"s3://{bucket}/a.zarr", tmp_path), sample((4, 4), seed=3))


def test_uploads_carry_checksums_the_server_keeps(zarrkit_s3, bucket, s3, tmp_path):
    write_local(tmp_path / "a.zarr", sample((20, 20)), chunks=(10, 10))
    zarrkit_s3.run("cp", tmp_path / "a.zarr", f"s3://{bucket}/a.zarr")
    objects = s3.list_objects_v2(Bucket=bucket)["Contents"]
    assert len(objects) == 5
    for o in objects:
        got = s3.get_object(Bucket=bucket, Key=o["Key"], ChecksumMode="ENABLED")
        body = got["Body"].read()
        assert got["ChecksumSHA256"] == base64.b64encode(hashlib.sha256(body).digest()).decode()
        assert got["ETag"] == '"' + hashlib.md5(body).hexdigest() + '"'


def test_large_values_go_up_in_parts(zarrkit_bin, moto, bucket, s3, tmp_path):
    # One 12.5 MB chunk, uploaded in 5 MiB parts (S3's minimum part size, enforced by moto).
    data = np.arange(1250 * 1250, dtype="float64").reshape(1250, 1250)
    write_local(tmp_path / "a.zarr", data, chunks=(1250, 1250), compressors=None)
    zk = Zarrkit(zarrkit_bin, zarrkit_env(moto.url, tmp_path, ZARRKIT_S3_MULTIPART_THRESHOLD=6 << 20,
                                          ZARRKIT_S3_PART_SIZE=5 << 20))
    zk.run("cp", tmp_path / "a.zarr", f"s3://{bucket}/a.zarr")
    head = s3.head_object(Bucket=bucket, Key="a.zarr/c/0/0")
    assert head["ETag"].endswith('-3"'), head["ETag"]
    assert head["ContentLength"] == data.nbytes
    np.testing.assert_array_equal(zarr.open_array(s3fs_store(moto.url, f"s3://{bucket}/a.zarr"))[...], data)
    assert s3.list_multipart_uploads(Bucket=bucket).get("Uploads", []) == []


def test_cp_shows_progress_on_a_terminal(zarrkit_s3, bucket, tmp_path):
    write_local(tmp_path / "a.zarr", sample((40, 40)), chunks=(10, 10))
    controller, terminal = pty.openpty()
    try:
        proc = subprocess.run([zarrkit_s3.binary, "cp", str(tmp_path / "a.zarr"), f"s3://{bucket}/p.zarr"],
                              env=zarrkit_s3.env, stdout=subprocess.DEVNULL, stderr=terminal, timeout=120)
        os.close(terminal)
        terminal = None
        shown = b""
        while True:
            try:
                piece = os.read(controller, 4096)
            except OSError:
                break
            if not piece:
                break
            shown += piece
    finally:
        if terminal is not None:
            os.close(terminal)
        os.close(controller)
    assert proc.returncode == 0, shown
    assert b"16/16" in shown or b"16 / 16" in shown or b"100%" in shown, shown


def test_errors_name_the_bucket_and_the_problem(zarrkit_s3, bucket, tmp_path):
    line = zarrkit_s3.error("info", "s3://zarrkit-no-such-bucket/x.zarr")
    assert 'the bucket "zarrkit-no-such-bucket" does not exist' in line, line
    line = zarrkit_s3.error("info", f"s3://{bucket}/nothing.zarr")
    assert "no Zarr array or group there" in line, line
