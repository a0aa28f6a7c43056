"""Fixtures of the zarrkit Python package tests."""

from __future__ import annotations

import pytest

import zarrkit


@pytest.fixture(autouse=True)
def _default_settings():
    """Every test starts and ends with zarrkit's default settings."""
    zarrkit.config.reset()
    yield
    zarrkit.config.reset()


@pytest.fixture(params=["local", "memory"])
def store(request, tmp_path):
    """A fresh store of each kind."""
    if request.param == "local":
        return zarrkit.storage.LocalStore(tmp_path / "data.zarr")
    return zarrkit.storage.MemoryStore()
