"""Reads served whole from the decoded-chunk cache (the copy-only windows of
bench/chunk_cache.py), against NumPy copying the same windows out of an in-memory array.

    .venv/bin/python bench/cache_hits.py [--edge 256] [--chunk 128] [--reads 2000] [--threads N]

A zstd uint16 array of edge^3 in chunks of chunk^3 is written to a temporary directory, read
once whole through a cache that holds all of it, then the 64^3 windows of a sliding window
(steps of 32, x fastest) are read over and over: every chunk they touch is a hit. Prints
wall and CPU time per window for zarrkit (a[w]; and read_into an array made once) and for
NumPy (np.array(x[w]), the copy alone); the cache's counters show that no chunk was decoded.
Run it under `perf record -g` to see where a hit's time goes.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time

import numpy as np


def windows(n: int, size: int = 64, step: int = 32):
    starts = range(0, n - size + 1, step)
    return [(slice(z, z + size), slice(y, y + size), slice(x, x + size)) for z in starts for y in starts for x in starts]


def timed(label: str, reads: int, wins, read) -> None:
    t0, c0 = time.perf_counter(), time.process_time()
    for i in range(reads):
        read(wins[i % len(wins)])
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    print(f"{label:<40} {1e3 * wall / reads:7.3f} ms wall  {1e3 * cpu / reads:7.3f} ms CPU per window", flush=True)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--edge", type=int, default=256)
    p.add_argument("--chunk", type=int, default=128)
    p.add_argument("--reads", type=int, default=2000)
    p.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    p.add_argument("--only", choices=["zarrkit", "numpy", "all"], default="all")
    args = p.parse_args()

    import zarrkit

    n = args.edge
    rng = np.random.default_rng(0)
    data = (np.arange(n**3, dtype=np.uint32).reshape(n, n, n) % 1000).astype(np.uint16)
    data += rng.integers(0, 16, size=data.shape, dtype=np.uint16)
    work = tempfile.mkdtemp(prefix="zarrkit-cache-hits-")
    try:
        path = os.path.join(work, "a.zarr")
        zarrkit.config.set(num_threads=args.threads)
        zarrkit.create_array(path, data=data, chunks=(args.chunk,) * 3, compressors="auto")
        zarrkit.config.set({"cache.host_bytes": 2 * data.nbytes + (64 << 20)})
        zarrkit.config.clear_cache()
        a = zarrkit.open_array(path, mode="r")
        assert np.array_equal(a[...], data)
        wins = windows(n)
        before = zarrkit.config.cache_stats()
        print(f"{len(wins)} windows, every chunk in the cache: timing", flush=True)
        if args.only in ("zarrkit", "all"):
            timed("zarrkit a[w]", args.reads, wins, lambda w: a[w])
            out = np.empty((64, 64, 64), dtype=np.uint16)
            timed("zarrkit a.read_into-like (out reused)", args.reads, wins, lambda w: a._impl.read_into(w, out))
        after = zarrkit.config.cache_stats()
        if args.only in ("numpy", "all"):
            timed("numpy np.array(x[w])", args.reads, wins, lambda w: np.array(data[w]))
        print(f"cache: {after['hits'] - before['hits']} hits, {after['misses'] - before['misses']} misses")
        for w in wins[:: max(1, len(wins) // 7)]:
            assert np.array_equal(a[w], data[w])
    finally:
        zarrkit.config.set({"cache.host_bytes": 0})
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
