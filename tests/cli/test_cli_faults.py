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


def zarrkit(*args, faults=None):
    env = dict(os.environ)
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
