"""Faults on the way down, end to end: the real CLI under an LD_PRELOAD shim
(tests/cli/fault_shim.c, built beside the binary) that makes its system calls fail.

Every failure must give one clear error line and a non-zero exit, and leave the store as
crash safety requires: the old array intact and readable, no temporary file or directory left.
Interruptions (EINTR) and short writes must be retried or continued, never reported.
"""

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

ZARRKIT = os.environ.get("ZARRKIT_BIN")
if not ZARRKIT:
    pytest.skip("ZARRKIT_BIN is not set (path of the zarrkit binary)", allow_module_level=True)
SHIM = Path(os.environ.get("ZARRKIT_FAULT_SHIM", Path(ZARRKIT).parent / "libzarrkit_fault_shim.so"))
if not SHIM.exists():
    pytest.skip(f"no fault shim at {SHIM} (built with the tests)", allow_module_level=True)

OLD = np.arange(64 * 48, dtype="int32").reshape(64, 48)
NEW = -OLD - 7


def zarrkit(*args, faults=None, env=None):
    env = {**os.environ, **(env or {})}
    if faults:
        env["LD_PRELOAD"] = str(SHIM)
        env.update({f"ZARRKIT_FAULT_{name.upper()}": str(value) for name, value in faults.items()})
    return subprocess.run([ZARRKIT, *map(str, args)], capture_output=True, text=True, timeout=60, env=env)


def leftovers(directory):
    """Temporary files and directories below `directory` (the store's and libzip's)."""
    return sorted(str(p) for p in Path(directory).rglob("*") if ".zarrkit-tmp." in p.name or ".zip." in p.name)


def read_back(tmp_path, location):
    out = tmp_path / "read.npy"
    proc = zarrkit("export", location, out)
    assert proc.returncode == 0, proc.stderr
    return np.load(out)


@pytest.fixture
def stores(tmp_path):
    """An existing array (OLD) in a directory store and in a zip archive, and NEW as .npy."""
    np.save(tmp_path / "old.npy", OLD)
    np.save(tmp_path / "new.npy", NEW)
    for location in (tmp_path / "a.zarr", tmp_path / "a.zip"):
        assert zarrkit("import", tmp_path / "old.npy", location, "--chunks", "16,16").returncode == 0
    return tmp_path


FAILURES = [
    ("open", "ENOSPC", "No space left on device"),
    ("open", "EIO", "Input/output error"),
    ("write", "ENOSPC", "No space left on device"),
    ("write", "EDQUOT", "Disk quota exceeded"),
    ("write", "EIO", "Input/output error"),
    ("rename", "EIO", "Input/output error"),
    ("rename", "EXDEV", "Invalid cross-device link"),
    ("renameat2", "EIO", "Input/output error"),  # the swap of the finished array into place
]


# Every fault through import; cp shares the write path, so a few of them through cp.
CASES = [("import", *f) for f in FAILURES] + [("cp", *f) for f in FAILURES if f[0] in ("write", "renameat2")]


@pytest.mark.parametrize("command,call,error,text", CASES, ids=[f"{cmd}-{c}-{e}" for cmd, c, e, _ in CASES])
def test_a_failed_write_reports_one_line_and_keeps_the_old_array(stores, command, call, error, text):
    source = stores / "new.npy" if command == "import" else stores / "new.zarr"
    if command == "cp":
        assert zarrkit("import", stores / "new.npy", source).returncode == 0
    proc = zarrkit(command, source, stores / "a.zarr", "--overwrite", faults={"call": call, "errno": error})
    assert proc.returncode != 0
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("zarrkit: error: ") and text in lines[0], proc.stderr
    np.testing.assert_array_equal(read_back(stores, stores / "a.zarr"), OLD)
    assert leftovers(stores) == []


RETRIED = [("write", "EINTR"), ("open", "EINTR"), ("rename", "EINTR"), ("write", "SHORT"), ("renameat2", "EINVAL")]


@pytest.mark.parametrize("call,error", RETRIED, ids=[f"{c}-{e}" for c, e in RETRIED])
def test_interruptions_and_short_writes_are_retried_not_reported(stores, call, error):
    # EINVAL from renameat2: a file system that cannot exchange; the swap falls back to two renames.
    proc = zarrkit("import", stores / "new.npy", stores / "a.zarr", "--overwrite", faults={"call": call, "errno": error})
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    np.testing.assert_array_equal(read_back(stores, stores / "a.zarr"), NEW)
    assert leftovers(stores) == []


@pytest.mark.parametrize("error", ["EIO", "EXDEV"])
def test_a_failed_zip_rewrite_keeps_the_old_archive(stores, error):
    # libzip writes the new archive through stdio (not seen here) and renames it over the old one.
    proc = zarrkit("import", stores / "new.npy", stores / "a.zip", "--overwrite",
                   faults={"call": "rename", "errno": error, "path": "a.zip."})
    assert proc.returncode != 0
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("zarrkit: error: "), proc.stderr
    np.testing.assert_array_equal(read_back(stores, stores / "a.zip"), OLD)
    assert leftovers(stores) == []


# ---- --durable: every file synced before it counts as written ------------------------------

def call_log(tmp_path, *args, env=None, faults=None):
    """Runs zarrkit under the shim with every fsync and rename logged; (process, log lines)."""
    log = tmp_path / "calls.log"
    log.unlink(missing_ok=True)
    proc = zarrkit(*args, faults={"log": log, **(faults or {})}, env=env)
    lines = log.read_text().splitlines() if log.exists() else []
    return proc, [line.split(" ") for line in lines]


def check_synced_before_and_after(calls, nodes=()):
    """Each file renamed into place was synced before its rename, and the directory it landed
    in after it; a node's directory (`nodes`) renamed into place, its parent after. Returns how
    many renames there were."""
    renames = 0
    for i, (call, *paths) in enumerate(calls):
        if call not in ("rename", "renameat2"):
            continue
        source, target = paths
        if target not in map(str, nodes):
            assert ["fsync", source] in calls[:i], f"{source} renamed to {target} without an fsync first"
        assert ["fsync", str(Path(target).parent)] in calls[i + 1:], f"no fsync of the directory of {target} after"
        renames += 1
    return renames


def test_durable_writes_sync_every_file_before_its_rename_and_each_directory_after(stores):
    proc, calls = call_log(stores, "import", stores / "new.npy", stores / "a.zarr", "--overwrite", "--chunks", "16,16",
                           "--durable")
    assert proc.returncode == 0, proc.stderr
    files = [p for p in (stores / "a.zarr").rglob("*") if p.is_file()]
    assert len(files) == 1 + 12  # zarr.json and 4 x 3 chunks
    # One rename per file into its directory (inside the staged node), then the swap of the node.
    assert check_synced_before_and_after(calls, nodes=[stores / "a.zarr"]) == len(files) + 1
    assert calls[-2][0] in ("rename", "renameat2") and calls[-1] == ["fsync", str(stores)]
    np.testing.assert_array_equal(read_back(stores, stores / "a.zarr"), NEW)
    # Without --durable, no fsync at all.
    proc, calls = call_log(stores, "import", stores / "old.npy", stores / "a.zarr", "--overwrite", "--chunks", "16,16")
    assert proc.returncode == 0, proc.stderr
    assert [c for c in calls if c[0] == "fsync"] == []


def test_the_durable_writes_setting_does_what_the_option_does(stores):
    env = {"ZARRKIT_DURABLE_WRITES": "1"}
    proc, calls = call_log(stores, "import", stores / "new.npy", stores / "b.zarr", "--chunks", "32,48", env=env)
    assert proc.returncode == 0, proc.stderr
    # zarr.json, 2 chunks, then the node's rename into place.
    assert check_synced_before_and_after(calls, nodes=[stores / "b.zarr"]) == 3 + 1


def test_durable_zip_archives_are_synced_before_they_replace_the_old_one(stores):
    proc, calls = call_log(stores, "import", stores / "new.npy", stores / "a.zip", "--overwrite", "--durable")
    assert proc.returncode == 0, proc.stderr
    # libzip renames its own temporary to zarrkit's, which is synced, renamed over the archive,
    # and then the directory is synced.
    into_place = [i for i, c in enumerate(calls) if c[0] == "rename" and c[2] == str(stores / "a.zip")]
    assert len(into_place) == 1, calls
    i = into_place[0]
    temporary = calls[i][1]
    assert ".a.zip.zarrkit-tmp." in temporary
    assert ["fsync", temporary] in calls[:i]
    assert calls[i + 1:] == [["fsync", str(stores)]]
    np.testing.assert_array_equal(read_back(stores, stores / "a.zip"), NEW)
    assert leftovers(stores) == []


@pytest.mark.parametrize("args", [
    ("resize", "{a}", "70,48"),
    ("append", "{a}", "{new}"),
    ("consolidate", "{g}"),
    ("cp", "{a}", "{g}/copy"),
    ("migrate", "v3", "{v2}"),
], ids=lambda args: args[0])
def test_every_writing_command_takes_durable(stores, args):
    assert zarrkit("import", stores / "old.npy", stores / "v2.zarr", "--zarr-format", "2").returncode == 0
    (stores / "g.zarr").mkdir()
    (stores / "g.zarr" / "zarr.json").write_text('{"zarr_format": 3, "node_type": "group", "attributes": {}}')
    names = {"a": stores / "a.zarr", "new": stores / "new.npy", "g": stores / "g.zarr", "v2": stores / "v2.zarr"}
    command = [a.format(**names) for a in args]
    proc, calls = call_log(stores, *command, "--durable")
    assert proc.returncode == 0, proc.stderr
    assert check_synced_before_and_after(calls, nodes=[stores / "g.zarr" / "copy"]) >= 1
    proc, calls = call_log(stores, *command[:1], "--help")
    assert "--durable" in proc.stdout


@pytest.mark.parametrize("location", ["a.zarr", "a.zip"])
def test_a_failed_fsync_of_a_durable_write_is_reported_and_keeps_the_old_array(stores, location):
    proc = zarrkit("import", stores / "new.npy", stores / location, "--overwrite", "--durable",
                   faults={"call": "fsync", "errno": "EIO", "path": ".zarrkit-tmp."})
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("zarrkit: error: ") and "Input/output error" in lines[0], proc.stderr
    assert "fsync" in lines[0] or "sync" in lines[0], lines[0]
    np.testing.assert_array_equal(read_back(stores, stores / location), OLD)
    assert leftovers(stores) == []
