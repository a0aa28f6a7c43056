"""Replacing a node on S3 (moto's server), which cannot rename: `zarrkit import --overwrite` and
`cp --overwrite` keep the old node whole and readable until the new one is complete, a write
cut short leaves the old node or no node at all (no metadata: recognisably unfinished), never a
partial node that reads as finished, and the next overwrite removes whatever a killed writer
left (docs/concurrency.md).

ZARRKIT_CRASH_ROUNDS / 3 writers are killed (4 by default, in CI: each round is a whole
write and a restore against moto); ZARRKIT_CRASH_SEED sets the random seed."""

import os
import random
import signal
import subprocess
import time
from collections import Counter

import numpy as np
import pytest

from remote_helpers import Zarrkit, zarrkit_env

ROUNDS = max(2, int(os.environ.get("ZARRKIT_CRASH_ROUNDS", "12")) // 3)
SEED = int(os.environ.get("ZARRKIT_CRASH_SEED", str(random.randrange(1 << 30))))
OLD = np.arange(128 * 96, dtype="int32").reshape(128, 96)
NEW = (OLD * 7 + 3) % 10_007


@pytest.fixture
def arrays(tmp_path):
    np.save(tmp_path / "old.npy", OLD)
    np.save(tmp_path / "new.npy", NEW)
    return tmp_path


def keys(s3, bucket, prefix=""):
    found = []
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        found += [o["Key"] for o in page.get("Contents", [])]
    return sorted(found)


def read(zk, location, out):
    """'old', 'new', 'absent' or 'unreadable: ...'."""
    proc = subprocess.run([zk.binary, "export", location, str(out)], capture_output=True, text=True, env=zk.env,
                          timeout=120)
    if proc.returncode != 0:
        return "absent" if "no Zarr array or group there" in proc.stderr or "no array" in proc.stderr \
            else "unreadable: " + proc.stderr.strip()
    data = np.load(out)
    if np.array_equal(data, OLD):
        return "old"
    if np.array_equal(data, NEW):
        return "new"
    return "unreadable: neither the old nor the new values"


def test_a_failed_overwrite_keeps_the_old_array_whole(zarrkit_bin, moto, bucket, s3, proxy_for, arrays):
    direct = Zarrkit(zarrkit_bin, zarrkit_env(moto.url, arrays))
    location = f"s3://{bucket}/a.zarr"
    direct.run("import", arrays / "old.npy", location, "--chunks", "32,32")
    before = keys(s3, bucket)
    # The new array's last chunk never reaches the server: the write fails before its commit.
    proxy = proxy_for(moto.port)
    proxy.inject("status500", method="PUT", path=r"zarrkit-tmp\.[^/]*/c/7/5$", times=1000)
    through = Zarrkit(zarrkit_bin, zarrkit_env(proxy.url, arrays, ZARRKIT_HTTP_MAX_ATTEMPTS=2))
    line = through.error("import", arrays / "new.npy", location, "--overwrite", "--chunks", "16,16")
    assert "500" in line, line
    assert read(direct, location, arrays / "out.npy") == "old"
    assert keys(s3, bucket) == before  # and nothing of the new array stays behind


def test_an_overwrite_cut_short_in_its_commit_leaves_no_array_then_the_next_one_cleans_up(
        zarrkit_bin, moto, bucket, s3, proxy_for, arrays):
    direct = Zarrkit(zarrkit_bin, zarrkit_env(moto.url, arrays))
    location = f"s3://{bucket}/a.zarr"
    direct.run("import", arrays / "old.npy", location, "--chunks", "32,32")
    # The copies into place (PUTs of chunk keys outside the hidden prefix) fail: the old
    # metadata is gone by then, so the destination must read as no array, not as a mix.
    proxy = proxy_for(moto.port)
    proxy.inject("status500", method="PUT", path=r"/a\.zarr/c/", times=1000)
    through = Zarrkit(zarrkit_bin, zarrkit_env(proxy.url, arrays, ZARRKIT_HTTP_MAX_ATTEMPTS=2))
    through.error("import", arrays / "new.npy", location, "--overwrite", "--chunks", "32,32")
    assert read(direct, location, arrays / "out.npy") == "absent"
    assert "a.zarr/zarr.json" not in keys(s3, bucket)
    # The next overwrite puts a whole array there and leaves exactly its own keys.
    direct.run("import", arrays / "new.npy", location, "--overwrite", "--chunks", "64,32")
    assert read(direct, location, arrays / "out.npy") == "new"
    assert keys(s3, bucket) == sorted(["a.zarr/zarr.json"] + [f"a.zarr/c/{i}/{j}" for i in range(2) for j in range(3)])


def test_a_hierarchy_is_replaced_whole(zarrkit_bin, moto, bucket, s3, arrays):
    zk = Zarrkit(zarrkit_bin, zarrkit_env(moto.url, arrays))
    for name, data in (("src_old", "old.npy"), ("src_new", "new.npy")):
        (arrays / name).mkdir()
        (arrays / name / "zarr.json").write_text('{"zarr_format": 3, "node_type": "group", "attributes": {}}')
    for member in ("x", "y"):
        zk.run("import", arrays / "old.npy", arrays / "src_old" / member, "--chunks", "64,64")
    zk.run("import", arrays / "new.npy", arrays / "src_new" / "z", "--chunks", "64,64")
    zk.run("cp", arrays / "src_old", f"s3://{bucket}/g.zarr")
    zk.run("cp", arrays / "src_new", f"s3://{bucket}/g.zarr", "--overwrite")
    assert read(zk, f"s3://{bucket}/g.zarr/z", arrays / "out.npy") == "new"
    assert read(zk, f"s3://{bucket}/g.zarr/x", arrays / "out.npy") == "absent"
    assert keys(s3, bucket) == sorted(["g.zarr/z/c/0/0", "g.zarr/z/c/0/1", "g.zarr/z/c/1/0", "g.zarr/z/c/1/1",
                                       "g.zarr/z/zarr.json", "g.zarr/zarr.json"])


def test_killed_overwrites_leave_the_old_array_or_none_never_a_mix(zarrkit_bin, moto, bucket, s3, arrays, capsys):
    zk = Zarrkit(zarrkit_bin, zarrkit_env(moto.url, arrays))
    location = f"s3://{bucket}/a.zarr"
    chunks = ("--chunks", "16,16")  # 48 chunks: the write takes a while against moto
    restore = ("import", arrays / "old.npy", location, "--overwrite", *chunks)
    kill = ("import", arrays / "new.npy", location, "--overwrite", *chunks)
    zk.run("import", arrays / "old.npy", location, *chunks)
    expected_keys = keys(s3, bucket)
    started = time.monotonic()
    zk.run(*kill)
    duration = time.monotonic() - started
    zk.run(*restore)
    rng = random.Random(SEED)
    counts, failures = Counter(), []
    for round_index in range(ROUNDS):
        writer = subprocess.Popen([zk.binary, *map(str, kill)], env=zk.env, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0, 1.2 * duration))
        counts["killed while writing" if writer.poll() is None else "finished before the kill"] += 1
        writer.send_signal(signal.SIGKILL)
        writer.wait()
        outcome = read(zk, location, arrays / "out.npy")
        # Absent only when killed in the commit, between removing the old metadata and writing the new.
        counts[outcome if outcome in ("old", "new", "absent") else "torn or unreadable"] += 1
        if outcome not in ("old", "new", "absent"):
            failures.append(f"round {round_index}: {outcome}")
        counts["temporaries left by the killed writer"] += sum(".zarrkit-tmp." in k for k in keys(s3, bucket))
        zk.run(*restore)  # the next writer
        left = keys(s3, bucket)
        if left != expected_keys:
            counts["stray keys after the next writer"] += len(set(left) ^ set(expected_keys))
            failures.append(f"round {round_index}: after the next writer the keys differ: "
                            f"{sorted(set(left) ^ set(expected_keys))[:5]}")
        assert read(zk, location, arrays / "out.npy") == "old"
    with capsys.disabled():
        print(f"\nS3 crash test: {ROUNDS} rounds (seed {SEED}): "
              + ", ".join(f"{key} {counts[key]}" for key in (
                  "killed while writing", "finished before the kill", "old", "new", "absent", "torn or unreadable",
                  "temporaries left by the killed writer", "stray keys after the next writer")))
    assert failures == []
