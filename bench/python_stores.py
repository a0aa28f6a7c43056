"""Reading one array through zarr-python stores: zarrkit against zarr-python on the same store
object, same run, alternating, warm (fsspec's memory file system, obstore's memory store and
obstore's local store on a directory).

    python bench/python_stores.py --dir /tmp/ps --mb 100 --rounds 5 [--shards] [--threads N]

The array (float32, a smooth field with noise, zarr-python's default codecs: zstd) is written
once per store by zarr-python. Each round reads the whole array with each reader; the first
round is dropped. Both get the same threads (``--threads``, default the CPUs this process may
use): zarrkit's ``num_threads`` and zarr-python's ``threading.max_workers`` (the threads it
decodes on). For obstore's local store, zarrkit's own LocalStore on the same directory
is timed too (zarrkit without the Python store in between). Prints each reader's median and
zarrkit's speed over zarr-python (zarr-python's median / zarrkit's), and the median CPU time
of each read (all threads of the process: on a machine others load too, the work each reader
does, where wall-clock time also measures who got the cores).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np


def field(mb: float) -> np.ndarray:
    planes = max(1, int(mb * 1e6 / (4 * 512 * 512)))
    rng = np.random.default_rng(0)
    smooth = np.cumsum(rng.standard_normal((planes, 512, 512), dtype=np.float32), axis=2)
    return smooth + rng.standard_normal(smooth.shape, dtype=np.float32) * 0.1


def stores(directory: Path) -> dict[str, Any]:
    import obstore.store
    from zarr.storage import FsspecStore, ObjectStore

    local = directory / "obstore-local"
    local.mkdir(parents=True, exist_ok=True)
    return {
        "fsspec-memory": FsspecStore.from_url("memory://zarrkit-bench/data.zarr"),
        "obstore-memory": ObjectStore(obstore.store.MemoryStore()),
        "obstore-local": ObjectStore(obstore.store.LocalStore(str(local))),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", type=Path, required=True, help="where obstore's local store writes")
    parser.add_argument("--mb", type=float, default=100.0, help="decoded size of the array")
    parser.add_argument("--chunks", default="4,256,256")
    parser.add_argument("--shards", action="store_true", help="shards of (16, 512, 512) around the chunks")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    args = parser.parse_args()
    import zarr

    import zarrkit

    zarr.config.set({"threading.max_workers": args.threads})
    zarrkit.config.set(num_threads=args.threads)

    data = field(args.mb)
    chunks = tuple(int(c) for c in args.chunks.split(","))
    shards = (16, 512, 512) if args.shards else None
    print(f"array {data.shape} float32, {data.nbytes / 1e6:.0f} MB, chunks {chunks}, shards {shards}, "
          f"zarr-python {zarr.__version__} (async.concurrency {zarr.config.get('async.concurrency')}), "
          f"{args.threads} threads each, load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    for name, store in stores(args.dir).items():
        z = zarr.create_array(store, name="a", shape=data.shape, chunks=chunks, shards=shards, dtype=data.dtype,
                              overwrite=True)
        z[...] = data
        readers = {
            "zarr-python": zarr.open_array(store, path="a", mode="r"),
            "zarrkit": zarrkit.open_array(store, path="a", mode="r"),
        }
        if name == "obstore-local":
            readers["zarrkit-LocalStore"] = zarrkit.open_array(args.dir / "obstore-local" / "a", mode="r")
        times: dict[str, list[float]] = {reader: [] for reader in readers}
        cpu: dict[str, list[float]] = {reader: [] for reader in readers}
        for r in range(args.rounds + 1):  # the first round warms up and is dropped
            order = list(readers.items()) if r % 2 == 0 else list(reversed(readers.items()))
            for reader, array in order:
                t0, c0 = time.perf_counter(), time.process_time()
                out = array[...]
                elapsed, cpu_time = time.perf_counter() - t0, time.process_time() - c0
                if not np.array_equal(out, data):
                    raise SystemExit(f"{reader} read wrong values from {name}")
                if r > 0:
                    times[reader].append(elapsed)
                    cpu[reader].append(cpu_time)
        medians = {reader: statistics.median(t) for reader, t in times.items()}
        for reader, m in medians.items():
            spread = f"{min(times[reader]) * 1e3:.0f}-{max(times[reader]) * 1e3:.0f}"
            print(f"  {name:15} {reader:19} {m * 1e3:8.1f} ms ({spread})  {data.nbytes / m / 1e9:6.2f} GB/s  "
                  f"CPU {statistics.median(cpu[reader]) * 1e3:7.1f} ms")
        print(f"  {name:15} zarrkit speed: {medians['zarr-python'] / medians['zarrkit']:.2f}x zarr-python "
              f"({args.rounds} rounds)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
