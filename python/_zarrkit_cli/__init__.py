"""The ``zarrkit`` console script: runs the zarrkit CLI that the package ships.

The executable is installed inside the package, at ``zarrkit/bin/zarrkit`` (with the
libraries it needs beside the package in a self-contained wheel). This launcher lives apart
from the ``zarrkit`` package so that running the CLI does not import it: importing zarrkit
loads NumPy and the extension module, which would delay every command.
"""

from __future__ import annotations

import importlib.util
import os
import sys

__all__ = ["executable", "main"]


def executable() -> str | None:
    """The path of the installed zarrkit executable, or None when it is missing.

    The folders of the ``zarrkit`` package are found without importing it; an editable
    install has two (the sources and the built files), so each is searched.
    """
    spec = importlib.util.find_spec("zarrkit")
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    for folder in folders:
        candidate = os.path.join(folder, "bin", "zarrkit")
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def main() -> None:
    """Replaces this process with the zarrkit executable, passing the arguments on."""
    path = executable()
    if path is None:
        sys.exit("zarrkit: error: the zarrkit executable is not installed (zarrkit/bin/zarrkit is "
                 "missing from the zarrkit package); reinstall zarrkit")
    # exec rather than a child process: the exit status, signals, standard streams and the
    # terminal (progress output) are the CLI's own.
    os.execv(path, ["zarrkit", *sys.argv[1:]])
