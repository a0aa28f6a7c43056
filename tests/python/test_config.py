"""zarrkit.config: settings, global and scoped."""

from __future__ import annotations

import numpy as np
import pytest

import zarrkit
from zarrkit.errors import UnsupportedError


def test_defaults_and_set():
    assert zarrkit.config.as_dict() == {"num_threads": 0, "write_empty_chunks": False, "memory": "host"}
    zarrkit.config.set(num_threads=3)
    assert zarrkit.config.get("num_threads") == 3
    assert zarrkit.config.num_threads == 3
    with zarrkit.config.set(num_threads=1, write_empty_chunks=True):
        assert zarrkit.config.as_dict() == {"num_threads": 1, "write_empty_chunks": True, "memory": "host"}
    assert zarrkit.config.num_threads == 3
    assert zarrkit.config.write_empty_chunks is False
    zarrkit.config.reset()
    assert zarrkit.config.num_threads == 0


def test_bad_settings_change_nothing():
    with pytest.raises(KeyError, match="unknown zarrkit setting"):
        zarrkit.config.set(num_threads=2, threads=4)
    with pytest.raises(ValueError, match="num_threads"):
        zarrkit.config.set(num_threads=-1)
    with pytest.raises(ValueError, match="write_empty_chunks"):
        zarrkit.config.set(write_empty_chunks="yes")
    assert zarrkit.config.num_threads == 0
    with pytest.raises(AttributeError):
        zarrkit.config.no_such_setting  # noqa: B018


def test_write_empty_chunks_setting(store):
    a = zarrkit.create_array(store, shape=(12,), chunks=(4,), dtype="i4")
    a[:] = 0
    assert a.nchunks_initialized == 0
    with zarrkit.config.set(write_empty_chunks=True):
        a[:] = 0
    assert a.nchunks_initialized == 3


@pytest.mark.parametrize("threads", [1, 2, 5])
def test_results_do_not_depend_on_threads(store, threads):
    data = np.random.default_rng(3).random((50, 60))
    with zarrkit.config.set(num_threads=threads):
        a = zarrkit.create_array(store, data=data, chunks=(7, 11))
        np.testing.assert_array_equal(a[3:44, ::5], data[3:44, ::5])


def test_enable_gpu_without_gpu():
    if zarrkit.config.gpu_available():
        pytest.skip("this machine and build have a GPU")
    with pytest.raises(UnsupportedError, match="no GPU support|no usable GPU|no GPU can be used"):
        zarrkit.config.enable_gpu()
    assert zarrkit.config.memory == "host"


def test_gpu_memory_store_without_gpu():
    if zarrkit.config.gpu_available():
        pytest.skip("this machine and build have a GPU")
    with pytest.raises(UnsupportedError, match="no GPU support|no usable GPU|no GPU can be used|no CUDA device"):
        zarrkit.storage.GpuMemoryStore()
