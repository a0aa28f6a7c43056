"""The decoded-chunk cache from Python: zarrkit.config's cache settings (global and scoped),
hits, eviction within the budget, writes of every kind dropping what they change, sharded
arrays caching inner chunks, concurrent readers, and a budget of 0 meaning no cache."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import zarrkit

MIB = 1 << 20


COUNTERS = ("hits", "misses", "insertions", "evictions", "invalidations", "dropped")
_start: dict[str, int] = {}


@pytest.fixture(autouse=True)
def _empty_cache():
    zarrkit.config.clear_cache()
    _start.update(zarrkit.config.cache_stats())
    yield
    zarrkit.config.set({"cache.host_bytes": 0})
    zarrkit.config.clear_cache()


def stats():
    """The process cache's counters since the test began (they run on across tests), and
    what it holds now."""
    now = zarrkit.config.cache_stats()
    return {k: v - _start[k] if k in COUNTERS else v for k, v in now.items()}


def test_the_settings_are_off_by_default_and_set_like_the_others():
    defaults = zarrkit.config.defaults()
    assert {k: defaults[k] for k in ("cache.host_bytes", "cache.array_bytes", "cache.device_bytes")} == {
        "cache.host_bytes": 0, "cache.array_bytes": 0, "cache.device_bytes": 0}
    with zarrkit.config.set({"cache": {"host_bytes": 64 * MIB}}):
        assert zarrkit.config.get("cache.host_bytes") == 64 * MIB
        assert stats()["budget"] == 64 * MIB  # the process's cache takes it at once
    assert zarrkit.config.get("cache.host_bytes") == 0
    assert stats()["budget"] == 0
    with pytest.raises(ValueError, match="cache.host_bytes"):
        zarrkit.config.set({"cache.host_bytes": -1})
    with pytest.raises(ValueError, match="cache.device_bytes"):
        zarrkit.config.set({"cache.device_bytes": "1G"})


def test_the_environment_sets_the_budgets():
    code = ("import zarrkit; d = zarrkit.config.defaults(); "
            "print(d['cache.host_bytes'], d['cache.array_bytes'], d['cache.device_bytes'])")
    env = dict(os.environ, ZARRKIT_CACHE_BYTES="512M", ZARRKIT_CACHE_ARRAY_BYTES="64k", ZARRKIT_CACHE_DEVICE_BYTES="1G")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == [str(512 * MIB), str(64 << 10), str(1 << 30)]
    env["ZARRKIT_CACHE_BYTES"] = "lots"
    bad = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert bad.returncode != 0 and "ZARRKIT_CACHE_BYTES" in bad.stderr


def test_a_second_read_of_the_same_chunks_hits(store):
    data = np.arange(64 * 64, dtype="i4").reshape(64, 64)
    a = zarrkit.create_array(store, data=data, chunks=(16, 16))
    zarrkit.config.set({"cache.host_bytes": 16 * MIB})
    np.testing.assert_array_equal(a[10:30, 5:40], data[10:30, 5:40])
    first = stats()
    assert (first["misses"], first["hits"], first["entries"]) == (6, 0, 6)
    np.testing.assert_array_equal(a[12:31, 0:47], data[12:31, 0:47])
    np.testing.assert_array_equal(a.get_orthogonal_selection(([11, 20], [6, 33])), data[np.ix_([11, 20], [6, 33])])
    after = stats()
    assert after["misses"] == first["misses"] and after["hits"] == 6 + 4
    # Point selections of unsharded arrays use it too.
    np.testing.assert_array_equal(a.vindex[[1, 20], [2, 17]], data[[1, 20], [2, 17]])
    assert stats()["misses"] == first["misses"]


def test_the_budget_holds_and_the_oldest_go_first():
    data = np.arange(64 * 64, dtype="i4").reshape(64, 64)
    a = zarrkit.create_array(zarrkit.storage.MemoryStore(), data=data, chunks=(16, 16))
    zarrkit.config.set({"cache.host_bytes": 3 * (1024 + 512)})  # three 1 KiB chunks
    for c in range(0, 64, 16):
        np.testing.assert_array_equal(a[0:16, c:c + 16], data[0:16, c:c + 16])
    s = stats()
    assert (s["entries"], s["evictions"]) == (3, 1) and s["bytes"] <= s["budget"]
    np.testing.assert_array_equal(a[0:16, 16:64], data[0:16, 16:64])
    assert stats()["hits"] == 3
    np.testing.assert_array_equal(a[0:16, 0:16], data[0:16, 0:16])  # pushed out: a miss
    assert stats()["misses"] == s["misses"] + 1


def test_a_budget_of_zero_is_no_cache(store):
    data = np.arange(32 * 32, dtype="f4").reshape(32, 32)
    a = zarrkit.create_array(store, data=data, chunks=(16, 16))
    np.testing.assert_array_equal(a[...], data)
    np.testing.assert_array_equal(a[...], data)
    assert stats()["entries"] == 0 and stats()["hits"] == 0
    zarrkit.config.set({"cache.host_bytes": MIB})
    a[...]
    assert stats()["entries"] == 4
    zarrkit.config.set({"cache.host_bytes": 0})  # off: emptied at once
    assert stats()["entries"] == 0 and stats()["bytes"] == 0


def test_every_write_drops_what_it_changes(tmp_path):
    data = np.arange(32 * 32, dtype="i4").reshape(32, 32)
    path = tmp_path / "w.zarr"
    a = zarrkit.create_array(path, data=data, chunks=(16, 16))
    zarrkit.config.set({"cache.host_bytes": 16 * MIB})
    expected = data.copy()
    np.testing.assert_array_equal(a[...], expected)
    a[3, 4] = -1
    a[16:, 16:] = 9
    expected[3, 4] = -1
    expected[16:, 16:] = 9
    np.testing.assert_array_equal(a[...], expected)
    # Another handle (another store object on the same directory) writing.
    b = zarrkit.open_array(zarrkit.storage.LocalStore(path), mode="r+")
    b.vindex[[0, 31], [0, 31]] = [-5, -6]
    expected[0, 0], expected[31, 31] = -5, -6
    np.testing.assert_array_equal(a[...], expected)
    # A raw write of a chunk's key through the store.
    a.store.set("c/0/1", b.store.get("c/1/0"))
    expected[0:16, 16:32] = expected[16:32, 0:16]
    np.testing.assert_array_equal(a[...], expected)
    a.store.delete("c/1/1")
    expected[16:, 16:] = 0
    np.testing.assert_array_equal(a[...], expected)
    # Resize, then overwrite with another dtype and chunking.
    a.resize((20, 20))
    a.resize((32, 32))
    expected[20:, :] = 0
    expected[:, 20:] = 0
    np.testing.assert_array_equal(zarrkit.open_array(path, mode="r")[...], expected)
    c = zarrkit.create_array(path, data=data.astype("f8") / 2, chunks=(8, 32), overwrite=True)
    np.testing.assert_array_equal(c[...], data / 2)
    assert stats()["invalidations"] > 0


def test_shards_keep_their_inner_chunks():
    data = np.arange(64 * 64, dtype="i4").reshape(64, 64)
    a = zarrkit.create_array(zarrkit.storage.MemoryStore(), data=data, chunks=(8, 8), shards=(32, 32))
    zarrkit.config.set({"cache.host_bytes": 16 * MIB})
    np.testing.assert_array_equal(a[0:16, 0:16], data[0:16, 0:16])
    assert (stats()["misses"], stats()["entries"]) == (4, 4)
    np.testing.assert_array_equal(a[4:20, 0:16], data[4:20, 0:16])  # two more inner chunks
    assert (stats()["misses"], stats()["hits"]) == (6, 4)
    a[8:16, 0:8] = 0
    expected = data[0:16, 0:16].copy()
    expected[8:16, 0:8] = 0
    np.testing.assert_array_equal(a[0:16, 0:16], expected)


def test_an_array_of_its_own_budget_leaves_the_process_cache_alone(tmp_path):
    data = np.arange(32 * 32, dtype="i2").reshape(32, 32)
    zarrkit.create_array(tmp_path / "o.zarr", data=data, chunks=(16, 16))
    with zarrkit.config.set({"cache.array_bytes": MIB}):
        own = zarrkit.open_array(tmp_path / "o.zarr", mode="r")
    zarrkit.config.set({"cache.host_bytes": MIB})
    np.testing.assert_array_equal(own[...], data)
    np.testing.assert_array_equal(own[...], data)
    assert stats()["entries"] == 0 and stats()["misses"] == 0


def test_concurrent_readers_and_a_writer():
    rng = np.random.default_rng(5)
    data = np.arange(128 * 128, dtype="i4").reshape(128, 128)
    a = zarrkit.create_array(zarrkit.storage.MemoryStore(), data=data, chunks=(16, 16))
    zarrkit.config.set({"cache.host_bytes": 20 * (1024 + 512), "num_threads": 4})
    errors = []
    windows = [tuple(int(x) for x in rng.integers(0, 100, 2)) + tuple(int(x) for x in rng.integers(1, 28, 2))
               for _ in range(400)]

    def reader(part):
        for r0, c0, h, w in windows[part::4]:
            got = a[r0:r0 + h, c0:c0 + w]
            if np.any((got - data[r0:r0 + h, c0:c0 + w]) % 1_000_000):
                errors.append((r0, c0, h, w))

    def writer():
        for version in range(1, 30):
            r0, c0 = 16 * (version % 8), 16 * ((version * 3) % 8)
            a[r0:r0 + 16, c0:c0 + 16] = data[r0:r0 + 16, c0:c0 + 16] + version * 1_000_000

    threads = [threading.Thread(target=reader, args=(k,)) for k in range(4)] + [threading.Thread(target=writer)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert stats()["hits"] > 0 and stats()["evictions"] > 0
    cached = a[...]
    zarrkit.config.set({"cache.host_bytes": 0})
    np.testing.assert_array_equal(cached, a[...])  # nothing stale left behind
