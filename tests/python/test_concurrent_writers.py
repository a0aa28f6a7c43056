"""Several processes writing different inner chunks of one shard (and different parts of one
chunk) at once lose nothing: each read-modify-write holds the store's update lock
(Store::lock_for_update; on local stores an flock shared by the host's processes)."""

from __future__ import annotations

import multiprocessing

import numpy as np
import pytest

import zarrkit

PROCESSES = 4
INNER = 4  # elements per inner chunk (or per part of a chunk)
PER_PROCESS = 25


def writer(path: str, index: int) -> None:
    a = zarrkit.open_array(path, mode="r+")
    for k in range(PER_PROCESS):
        part = (k * PROCESSES + index) * INNER
        a[part : part + INNER] = index * 1000 + k + 1


@pytest.mark.parametrize("layout", ["shards", "chunks"])
def test_processes_writing_parts_of_one_value_lose_nothing(tmp_path, layout):
    n = PROCESSES * PER_PROCESS * INNER
    path = str(tmp_path / "a.zarr")
    if layout == "shards":  # one shard of 100 inner chunks
        zarrkit.create_array(path, shape=(n,), chunks=(INNER,), shards=(n,), dtype="i4", fill_value=0)
    else:  # one chunk, written in parts
        zarrkit.create_array(path, shape=(n,), chunks=(n,), dtype="i4", fill_value=0)
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=writer, args=(path, i)) for i in range(PROCESSES)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(120)
        assert w.exitcode == 0
    got = zarrkit.open_array(path, mode="r")[...]
    expected = np.zeros(n, dtype="i4")
    for index in range(PROCESSES):
        for k in range(PER_PROCESS):
            part = (k * PROCESSES + index) * INNER
            expected[part : part + INNER] = index * 1000 + k + 1
    lost = int(np.count_nonzero(got != expected))
    assert lost == 0, f"{lost} of {n} values lost"
