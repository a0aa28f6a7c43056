"""The shipped type stubs describe the extension module as built."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import zarrkit

STUB = Path(zarrkit.__file__).with_name("_zarrkit.pyi")
HEADER = (
    "\n# Generated: python -m nanobind.stubgen -m zarrkit._zarrkit -o python/zarrkit/_zarrkit.pyi\n"
    "# (tests/python/test_stubs.py checks that it matches the module).\n"
)


def test_extension_stub_is_current(tmp_path):
    out = tmp_path / "_zarrkit.pyi"
    subprocess.run(
        [sys.executable, "-m", "nanobind.stubgen", "-q", "-m", "zarrkit._zarrkit", "-o", str(out)],
        check=True,
    )
    assert STUB.read_text().replace(HEADER, "", 1) == out.read_text()


def test_package_is_typed():
    assert Path(zarrkit.__file__).with_name("py.typed").exists()
