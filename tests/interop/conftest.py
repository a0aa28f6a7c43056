"""Fixtures for the interop tests: the zarrkit binary under test and scratch directories.

The binary comes from ZARRKIT_BIN (scripts/test sets it to build/dev/zarrkit). Without it the
tests skip with a message that says how to run them; scripts/test itself refuses to run pytest
without a binary, so CI cannot go green by skipping.
"""

import os

import pytest

from zk_interop import Zarrkit


def pytest_configure(config):
    # zarr-python warns that numcodecs.* codecs are not in the v3 spec, and that some v2
    # dtypes have no v3 spec; writing exactly those is the point of these tests.
    config.addinivalue_line("filterwarnings", "ignore::zarr.errors.ZarrUserWarning")
    config.addinivalue_line("filterwarnings", "ignore:The data type .* does not have a Zarr V3")


def pytest_report_header(config):
    return f"zarrkit under test: {os.environ.get('ZARRKIT_BIN') or '(ZARRKIT_BIN not set)'}"


@pytest.fixture(scope="session")
def zarrkit_bin():
    path = os.environ.get("ZARRKIT_BIN")
    if not path:
        pytest.skip("ZARRKIT_BIN is not set: build zarrkit (scripts/build dev) and set "
                    "ZARRKIT_BIN=build/dev/zarrkit, or run scripts/test")
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        pytest.skip(f"ZARRKIT_BIN={path} is not an executable file: build it first "
                    "(scripts/build dev)")
    return os.path.abspath(path)


@pytest.fixture
def zarrkit(zarrkit_bin, tmp_path):
    """Runs the zarrkit CLI; its .npy exports go to a scratch directory of the test."""
    return Zarrkit(zarrkit_bin, tmp_path / "zarrkit-scratch")
