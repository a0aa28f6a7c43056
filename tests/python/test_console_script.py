"""The `zarrkit` console script that `pip install` puts on PATH (python/_zarrkit_cli): it runs
the CLI executable installed inside the package (zarrkit/bin/zarrkit) without importing
zarrkit, with the executable's own exit status and output."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
from pathlib import Path

import numpy as np

import _zarrkit_cli
import zarrkit

SCRIPT = Path(sysconfig.get_path("scripts")) / "zarrkit"
PYTHON_SOURCES = Path(__file__).resolve().parents[2] / "python"


def run(*args, timeout=120):
    return subprocess.run([str(SCRIPT), *map(str, args)], capture_output=True, text=True, timeout=timeout)


def test_the_script_is_installed_and_finds_the_packaged_executable():
    assert SCRIPT.is_file(), f"pip installed no zarrkit console script at {SCRIPT}"
    executable = _zarrkit_cli.executable()
    assert executable is not None
    assert Path(executable).name == "zarrkit" and Path(executable).parent.name == "bin"
    assert Path(executable).parent.parent.name == "zarrkit"


def test_help_and_a_command(tmp_path):
    proc = run("--help")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("zarrkit: inspect, import, export and copy")
    for command in ["info", "export", "import", "cp", "migrate"]:
        assert command in proc.stdout
    a = zarrkit.create_array(str(tmp_path / "a.zarr"), shape=(5, 6), chunks=(2, 3), dtype="i4")
    a[...] = np.arange(30).reshape(5, 6)
    proc = run("export", tmp_path / "a.zarr", tmp_path / "a.npy", "--select", "1:3")
    assert proc.returncode == 0, proc.stderr
    np.testing.assert_array_equal(np.load(tmp_path / "a.npy"), np.arange(30).reshape(5, 6)[1:3])


def test_exit_status_and_errors_are_the_executables(tmp_path):
    proc = run("info", tmp_path / "absent.zarr")
    assert proc.returncode == 1
    assert proc.stderr.startswith("zarrkit: error: ") and len(proc.stderr.strip().splitlines()) == 1
    assert run("export").returncode == 2  # a usage error


def test_the_launcher_does_not_import_zarrkit():
    code = "import sys, _zarrkit_cli; assert _zarrkit_cli.executable(); print(sorted(m for m in sys.modules if m.startswith(('zarrkit', 'numpy'))))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_a_package_without_the_executable_is_one_clear_error(tmp_path):
    # A zarrkit package with no bin/zarrkit, found first; -S keeps the installed one away.
    (tmp_path / "zarrkit").mkdir()
    (tmp_path / "zarrkit" / "__init__.py").write_text("")
    proc = subprocess.run([sys.executable, "-S", "-c", "import _zarrkit_cli; _zarrkit_cli.main()"],
                          capture_output=True, text=True, timeout=60,
                          env={"PYTHONPATH": f"{tmp_path}:{PYTHON_SOURCES}", "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 1
    assert proc.stderr.strip() == ("zarrkit: error: the zarrkit executable is not installed (zarrkit/bin/zarrkit "
                                   "is missing from the zarrkit package); reinstall zarrkit")
