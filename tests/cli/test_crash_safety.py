"""Crash safety, end to end: writers killed with SIGKILL at random moments, then everything read.

Each round starts a writer (`zarrkit import` or `cp`, with and without --overwrite, over a
directory store, a sharded array and a zip archive), kills it at a random moment within the
time a whole write takes, and reads every array back: each must be whole and old or new (a
new location: absent or new), never torn, partial or unreadable. Then the next writer runs to
completion, and no temporary file or directory may be left. The test prints N and the counts.

ZARRKIT_CRASH_ROUNDS sets N (default 12, for CI); ZARRKIT_CRASH_SEED the random seed.
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
