"""MkDocs hook: the command-line reference page is the `--help` of the `zarrkit` CLI and of
each of its commands, taken from the binary at build time ($ZARRKIT_BIN, else
build/dev/zarrkit), so the page never drifts from the tool."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

MARKER = "<!-- zarrkit --help of every command -->"


def _binary() -> str:
    binary = os.environ.get("ZARRKIT_BIN") or str(Path(__file__).resolve().parents[2] / "build/dev/zarrkit")
    if not os.access(binary, os.X_OK):
        raise RuntimeError(f"the CLI reference needs the zarrkit binary: {binary} is not there (set ZARRKIT_BIN)")
    return binary


def _help(binary: str, *command: str) -> str:
    return subprocess.run([binary, *command, "--help"], check=True, capture_output=True, text=True).stdout.rstrip()


def _commands(top_help: str) -> list[str]:
    # CLI11 lists "Subcommands:" then one "  name   description" line each.
    section = top_help.split("Subcommands:", 1)[1]
    return re.findall(r"^  (\S+)\s", section, flags=re.MULTILINE)


def on_page_markdown(markdown: str, page, config, files) -> str:  # noqa: ANN001 (MkDocs' signature)
    if MARKER not in markdown:
        return markdown
    binary = _binary()
    top = _help(binary)
    parts = ["```text", f"$ zarrkit --help\n{top}", "```"]
    for command in _commands(top):
        parts += [f"\n## zarrkit {command}\n", "```text", f"$ zarrkit {command} --help\n{_help(binary, command)}", "```"]
    return markdown.replace(MARKER, "\n".join(parts))
