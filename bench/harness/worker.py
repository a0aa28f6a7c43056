"""Runs one job for a Python peer, the way bench/zarrkit_bench.cpp runs it for zarrkit, and
prints one JSON line: open first (not timed), `warmup` untimed repetitions, then `reps` timed
ones; a dropped page cache before each timed one when `cold`; checksums outside the timing.

    python worker.py JOB.json
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402

from data import checksum  # noqa: E402
from peers import PEERS, to_index  # noqa: E402

METADATA = {"zarr.json", ".zarray", ".zattrs", ".zgroup"}


def current_rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def peak_rss() -> int:
    # VmHWM, not getrusage's ru_maxrss: Linux carries ru_maxrss over fork and exec, so a child
    # would report its parent's peak when that is larger.
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


def drop_page_cache() -> None:
    os.sync()
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")


def clear_chunks(directory: str) -> None:
    """Empties the target before each write, then syncs, so that no repetition pays for the
    write-back of the one before (untimed)."""
    for entry in Path(directory).iterdir():
        if entry.name in METADATA:
            continue
        if entry.is_dir():
            shutil.rmtree(entry)
        else:
            entry.unlink()
    os.sync()


def repeat(job: dict, body, before_each=lambda: None) -> tuple[list[float], list[float]]:
    """Wall and CPU times (the whole process, every thread) of the timed repetitions."""
    reps, warmup, cold = job.get("reps", 5), job.get("warmup", 1), job.get("cold", False)
    times, cpu_times = [], []
    for i in range(warmup + reps):
        before_each()
        if cold and i >= warmup:
            drop_page_cache()
        cpu_start = time.process_time()
        start = time.perf_counter()
        body(i == warmup + reps - 1)
        if i >= warmup:
            times.append(time.perf_counter() - start)
            cpu_times.append(time.process_time() - cpu_start)
    return times, cpu_times


def run(job: dict) -> dict:
    threads = job["threads"]
    peer = PEERS[job["peer"]](threads)
    op = job["op"]
    result = {"unit_times": [], "checksum": None}

    if op == "read_all":
        array = peer.open_read(job)
        result["rss_before"] = current_rss()
        sums = {}

        def body(last):
            values = peer.read_all(array)
            if last:
                sums["checksum"] = checksum(values)
            del values

        result["times"], result["cpu_times"] = repeat(job, body)
        result["checksum"] = str(sums["checksum"])
    elif op == "selections":
        array = peer.open_read(job)
        indices = [to_index(s) for s in job["selections"]]
        group, in_flight = job.get("group", 1), job.get("in_flight", 1)
        units = [indices[u * group:(u + 1) * group] for u in range(len(indices) // group)]
        unit_times = [0.0] * len(units)
        result["rss_before"] = current_rss()

        def read_unit(u):
            start = time.perf_counter()
            for index in units[u]:
                peer.read(array, index)
            unit_times[u] = time.perf_counter() - start

        # Several in flight: one thread per read in flight (every peer releases the GIL while
        # it reads), as zarrkit_bench runs one pool thread per read in flight.
        pool = concurrent.futures.ThreadPoolExecutor(in_flight) if in_flight > 1 else None

        def body(last):
            if pool is None:
                for u in range(len(units)):
                    read_unit(u)
            else:
                list(pool.map(read_unit, range(len(units))))

        result["times"], result["cpu_times"] = repeat(job, body)
        result["unit_times"] = unit_times
        total = 0
        for index in indices:  # untimed verification pass
            total = (total + checksum(np.asarray(peer.read(array, index)))) % (1 << 64)
        result["checksum"] = str(total)
    elif op in ("write_all", "roundtrip"):
        target = peer.open_write(job["target"])
        if op == "roundtrip":
            source = peer.open_read(job)
        else:
            values = np.fromfile(job["raw"], dtype=job["dtype"]).reshape(job["shape"])
        result["rss_before"] = current_rss()

        def body(last):
            if op == "roundtrip":
                data = peer.read_all(source)
                peer.write_all(target, data)
                del data
            else:
                peer.write_all(target, values)

        result["times"], result["cpu_times"] = repeat(job, body, before_each=lambda: clear_chunks(job["target"]))
    else:
        raise ValueError(f"unknown op {op}")

    result["peak_rss"] = peak_rss()
    result["version"] = peer.version()
    result["threads"] = peer.threads_used or threads
    return result


def main() -> None:
    with open(sys.argv[1]) as f:
        job = json.load(f)
    print(json.dumps(run(job)), flush=True)


if __name__ == "__main__":
    main()
