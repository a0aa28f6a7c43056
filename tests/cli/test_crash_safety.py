"""Crash safety, end to end: writers killed with SIGKILL at random moments, then everything read.

Each round starts a writer (`zarrkit import` or `cp`, with and without --overwrite, over a
directory store, a sharded array and a zip archive), kills it at a random moment within the
time a whole write takes, and reads every array back: each must be whole and old or new (a
new location: absent or new), never torn, partial or unreadable. Then the next writer runs to
completion, and no temporary file or directory may be left. The test prints N and the counts.

A second test kills Python processes writing a sharded array inner chunk by inner chunk
(read-modify-writes of its shards): every inner chunk must read old or new.

ZARRKIT_CRASH_ROUNDS sets N (default 12, for CI; the partial-write test runs N / 2);
ZARRKIT_CRASH_SEED the random seed.
"""

import os
import random
import shutil
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

ZARRKIT = os.environ.get("ZARRKIT_BIN")
if not ZARRKIT:
    pytest.skip("ZARRKIT_BIN is not set (path of the zarrkit binary)", allow_module_level=True)

ROUNDS = int(os.environ.get("ZARRKIT_CRASH_ROUNDS", "12"))
SEED = int(os.environ.get("ZARRKIT_CRASH_SEED", str(random.randrange(1 << 30))))
OLD = np.arange(256 * 256, dtype="int32").reshape(256, 256)
NEW = (OLD * 7 + 3) % 100_003


def run(*args):
    return subprocess.run([ZARRKIT, *map(str, args)], capture_output=True, text=True, timeout=60)


def must_run(*args):
    proc = run(*args)
    assert proc.returncode == 0, f"zarrkit {args}: {proc.stderr}"


def read(location, out):
    """'old', 'new', 'absent' or 'unreadable: ...' for the array at `location`."""
    proc = run("export", location, out)
    if proc.returncode != 0:
        return "absent" if "no Zarr array or group there" in proc.stderr or "does not exist" in proc.stderr \
            or "no such file" in proc.stderr else "unreadable: " + proc.stderr.strip()
    data = np.load(out)
    if np.array_equal(data, OLD):
        return "old"
    if np.array_equal(data, NEW):
        return "new"
    return "unreadable: neither the old nor the new values"


def temporaries(directory):
    """Temporary files and directories below `directory`: the store's and libzip's."""
    found = []
    for p in Path(directory).rglob("*"):
        name = p.name
        if ".zarrkit-tmp." in name or (".zip." in name and len(name.rsplit(".", 1)[-1]) == 6):
            found.append(str(p))
    return found


class Scenario:
    """A writer to kill, what its target must read as afterwards, and how to restore it."""

    def __init__(self, name, root, kill_args, arrays, new_location=False, restore_args=()):
        self.name, self.root, self.kill_args, self.arrays = name, root, kill_args, arrays
        self.new_location, self.restore_args = new_location, restore_args

    def restore(self):
        """The next writer, run to completion: puts the old content back (or clears a new location)."""
        if self.new_location:
            must_run(*self.kill_args[:2], self.kill_args[2], "--overwrite", *self.kill_args[3:])
            shutil.rmtree(self.kill_args[2])
        else:
            must_run(*self.restore_args)


def scenarios(tmp):
    np.save(tmp / "old.npy", OLD)
    np.save(tmp / "new.npy", NEW)
    plain, sharded, zip_path, group, fresh = (tmp / n for n in ("plain.zarr", "sharded.zarr", "a.zip", "g.zarr",
                                                                 "fresh.zarr"))
    chunks = ("--chunks", "16,16")
    shards = ("--chunks", "16,16", "--shards", "64,64")
    # A source group of two new arrays, and the old group they overwrite.
    for name, data in (("src_new.zarr", "new.npy"), ("src_old.zarr", "old.npy")):
        (tmp / name).mkdir()
        (tmp / name / "zarr.json").write_text('{"zarr_format": 3, "node_type": "group", "attributes": {}}')
        for member in ("x", "y"):
            must_run("import", tmp / data, tmp / name / member, *chunks)
    must_run("cp", tmp / "src_old.zarr", group)
    for location, options in ((plain, chunks), (sharded, shards), (zip_path, chunks)):
        must_run("import", tmp / "old.npy", location, *options)
    return [
        Scenario("import --overwrite", plain, ("import", tmp / "new.npy", plain, "--overwrite", *chunks), [plain],
                 restore_args=("import", tmp / "old.npy", plain, "--overwrite", *chunks)),
        Scenario("import --overwrite, sharded", sharded,
                 ("import", tmp / "new.npy", sharded, "--overwrite", *shards), [sharded],
                 restore_args=("import", tmp / "old.npy", sharded, "--overwrite", *shards)),
        Scenario("cp --overwrite, a group", group, ("cp", tmp / "src_new.zarr", group, "--overwrite"),
                 [group / "x", group / "y"], restore_args=("cp", tmp / "src_old.zarr", group, "--overwrite")),
        Scenario("import into a new location", fresh, ("import", tmp / "new.npy", fresh, *chunks), [fresh],
                 new_location=True),
        Scenario("cp into a new location, sharded", fresh, ("cp", tmp / "src_new.zarr" / "x", fresh, *shards), [fresh],
                 new_location=True),
        Scenario("import --overwrite, zip rewrite", zip_path,
                 ("import", tmp / "new.npy", zip_path, "--overwrite", *chunks), [zip_path],
                 restore_args=("import", tmp / "old.npy", zip_path, "--overwrite", *chunks)),
    ]


def test_killed_writers_leave_old_or_new_and_no_temporaries(tmp_path, capsys):
    rng = random.Random(SEED)
    cases = scenarios(tmp_path)
    # How long a whole write takes, per scenario: kills land anywhere within it (or just after).
    durations = {}
    for case in cases:
        started = time.monotonic()
        must_run(*case.kill_args)
        durations[case.name] = time.monotonic() - started
        case.restore()
    counts = Counter()
    failures = []
    for round_index in range(ROUNDS):
        case = cases[round_index % len(cases)]
        writer = subprocess.Popen([ZARRKIT, *map(str, case.kill_args)], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0, 1.25 * durations[case.name]))  # some finish first
        counts["killed while writing" if writer.poll() is None else "finished before the kill"] += 1
        writer.send_signal(signal.SIGKILL)
        writer.wait()
        outcomes = [read(location, tmp_path / "read.npy") for location in case.arrays]
        counts["keys read"] += sum(1 for p in Path(case.root).rglob("*") if p.is_file()) if case.root.exists() else 0
        allowed = {"absent", "new"} if case.new_location else {"old", "new"}
        for outcome in outcomes:
            counts[outcome if outcome in allowed else "torn or unreadable"] += 1
            if outcome not in allowed:
                failures.append(f"round {round_index} ({case.name}): {outcome}")
        if len(set(outcomes)) > 1:  # a hierarchy is swapped whole: never some members old, some new
            counts["mixed hierarchy"] += 1
            failures.append(f"round {round_index} ({case.name}): members read {outcomes}")
        case.restore()  # the next writer
        left = temporaries(tmp_path)
        counts["stray temporaries after the next writer"] += len(left)
        failures += [f"round {round_index} ({case.name}): left {p}" for p in left]
    with capsys.disabled():
        print(f"\ncrash test: N={ROUNDS} rounds (seed {SEED}): "
              + ", ".join(f"{key} {counts[key]}" for key in (
                  "killed while writing", "finished before the kill", "keys read", "old", "new", "absent",
                  "torn or unreadable", "mixed hierarchy", "stray temporaries after the next writer")))
    assert failures == []


# Partial writes of a sharded array from Python: every inner chunk written on its own, each a
# read-modify-write of its shard. Killed at any moment, every inner chunk reads old or new.
PARTIAL_WRITER = r"""
import random, sys
import numpy as np
import zarrkit
path, seed = sys.argv[1], int(sys.argv[2])
a = zarrkit.open_array(path, mode="r+")
new = (np.arange(256 * 256, dtype="int32").reshape(256, 256) * 7 + 3) % 100_003
blocks = [(i, j) for i in range(0, 256, 16) for j in range(0, 256, 16)]
random.Random(seed).shuffle(blocks)
for i, j in blocks:
    a[i:i + 16, j:j + 16] = new[i:i + 16, j:j + 16]
"""


def test_killed_partial_shard_writes_leave_each_inner_chunk_old_or_new(tmp_path, capsys):
    import sys

    import zarrkit

    rng = random.Random(SEED + 1)
    path = tmp_path / "partial.zarr"

    def reset():
        zarrkit.create_array(str(path), data=OLD, chunks=(16, 16), shards=(64, 64), overwrite=True)

    reset()
    started = time.monotonic()
    subprocess.run([sys.executable, "-c", PARTIAL_WRITER, str(path), "0"], check=True, timeout=120)
    duration = time.monotonic() - started
    counts, failures = Counter(), []
    for round_index in range(max(1, ROUNDS // 2)):
        reset()
        writer = subprocess.Popen([sys.executable, "-c", PARTIAL_WRITER, str(path), str(round_index)],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0, duration))
        counts["killed while writing" if writer.poll() is None else "finished before the kill"] += 1
        writer.send_signal(signal.SIGKILL)
        writer.wait()
        try:
            got = zarrkit.open_array(str(path), mode="r")[...]
        except Exception as e:  # an unreadable shard
            counts["torn or unreadable"] += 1
            failures.append(f"round {round_index}: {e}")
            continue
        for i in range(0, 256, 16):
            for j in range(0, 256, 16):
                block = got[i:i + 16, j:j + 16]
                if np.array_equal(block, NEW[i:i + 16, j:j + 16]):
                    counts["inner chunks new"] += 1
                elif np.array_equal(block, OLD[i:i + 16, j:j + 16]):
                    counts["inner chunks old"] += 1
                else:
                    counts["torn or unreadable"] += 1
                    failures.append(f"round {round_index}: inner chunk at ({i}, {j}) is neither old nor new")
        counts["temporaries left by the killed writer"] += len(temporaries(tmp_path))
        # The next writer (a partial write, opening the store for writing) removes what the
        # killed one left.
        zarrkit.open_array(str(path), mode="r+")[0:16, 0:16] = NEW[0:16, 0:16]
        left = temporaries(tmp_path)
        counts["stray temporaries after the next writer"] += len(left)
        failures += [f"round {round_index}: left {p}" for p in left]
    with capsys.disabled():
        print(f"\ncrash test, partial shard writes from Python: {max(1, ROUNDS // 2)} rounds (seed {SEED + 1}): "
              + ", ".join(f"{key} {counts[key]}" for key in (
                  "killed while writing", "finished before the kill", "inner chunks old", "inner chunks new",
                  "torn or unreadable", "temporaries left by the killed writer",
                  "stray temporaries after the next writer")))
    assert failures == []
