"""Runs the cases: one child process per (case, peer, threads, cache, mode), so that each
peer's peak RSS is its own and no peer warms another's allocator or imports.

In-process timings come from the child (open excluded; see worker.py and zarrkit_bench.cpp).
Whole-process timings are the parent's wall clock around a child that starts, imports, opens,
runs the operation once and exits. Every read is checked against the raw values (checksums),
every write by reading the written array back with tensorstore.

Same cores for every peer: each child runs pinned to `threads` CPUs (the first ones this
process may use), so that no peer can use more cores than the thread count it is given,
whatever its own pools do, and with RAYON_NUM_THREADS set to the thread count (zarrs' Rust
pool sizes itself from it). Each child also reports the CPU time of its timed repetitions,
so the tables show how many cores each peer kept busy.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from data import DataStore, _dir_bytes, checksum
from scenarios import Case

HARNESS = Path(__file__).resolve().parent


def can_drop_page_cache() -> tuple[bool, str]:
    try:
        os.sync()
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
        return True, "page cache dropped with `echo 3 > /proc/sys/vm/drop_caches` before each cold run"
    except OSError as e:
        return False, f"cold runs skipped: cannot drop the page cache ({e.strerror}); all runs are warm"


def drop_page_cache() -> None:
    os.sync()
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")


def pinned_cpus(threads: int) -> list[int]:
    """The CPUs a child with `threads` threads runs on: the first `threads` of those this
    process may use (all of them when it may use fewer)."""
    allowed = sorted(os.sched_getaffinity(0))
    return allowed[:max(1, threads)]


def children_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


class Runner:
    def __init__(self, store: DataStore, zarrkit_bench: Path, reps: int, timeout: float, log=print):
        self.store = store
        self.zarrkit_bench = zarrkit_bench
        self.reps = reps
        self.timeout = timeout
        self.log = log
        self.jobs_dir = store.root / "jobs"
        self.jobs_dir.mkdir(parents=True, exist_ok=True)
        self._expected: dict[str, int] = {}

    # ---- jobs ----------------------------------------------------------------------------

    def logical_bytes(self, case: Case) -> int:
        ds = case.variant.dataset
        if case.op != "selections":
            return ds.nbytes
        itemsize = np.dtype(ds.dtype).itemsize
        total = 0
        for selection in case.selections:
            total += int(np.prod([1 if isinstance(a, int) else a[1] - a[0] for a in selection])) * itemsize
        return total

    def expected_checksum(self, case: Case) -> int:
        ds = case.variant.dataset
        if case.op != "selections":
            return int(self.store.manifest(ds)["checksum"])
        key = case.key
        if key not in self._expected:
            raw = self.store.raw(ds)
            total = 0
            for selection in case.selections:
                index = tuple(a if isinstance(a, int) else slice(a[0], a[1]) for a in selection)
                total = (total + checksum(np.asarray(raw[index]))) % (1 << 64)
            self._expected[key] = total
        return self._expected[key]

    def _job(self, case: Case, peer: str, threads: int, cold: bool, reps: int, warmup: int) -> dict:
        v = case.variant
        ds = v.dataset
        job = {"peer": peer, "op": case.op, "threads": threads, "reps": reps, "warmup": warmup, "cold": cold,
               "array": str(self.store.zarr_path(v)), "raw": str(self.store.raw_path(ds)),
               "source_raw": str(self.store.raw_path(ds)), "dtype": ds.dtype, "shape": list(ds.shape)}
        if v.h5:
            job["h5"] = str(self.store.h5_path(v))
        if peer == "codecs":
            job["codecs_only"] = True  # zarrkit_bench: the codec chain alone, a floor for the job
        if case.op == "selections":
            job["selections"] = case.selections
            job["group"] = case.group
            job["in_flight"] = threads if case.in_flight == "threads" else case.in_flight
        if case.op in ("write_all", "roundtrip"):
            target = self.store.dataset_dir(ds) / f"written_{v.name}_{peer}.zarr"
            shutil.rmtree(target, ignore_errors=True)
            target.mkdir()
            for name in ("zarr.json", ".zarray"):
                if (self.store.zarr_path(v) / name).exists():
                    shutil.copy(self.store.zarr_path(v) / name, target / name)
            job["target"] = str(target)
        return job

    def _command(self, peer: str, job_path: Path) -> list[str]:
        if peer in ("zarrkit", "codecs"):
            return [str(self.zarrkit_bench), str(job_path)]
        return [sys.executable, str(HARNESS / "worker.py"), str(job_path)]

    def _spawn(self, peer: str, job: dict) -> tuple[dict, float, float]:
        """Runs the job in a child pinned to the job's thread count of CPUs; returns its result,
        the wall time and the CPU time (all threads, user + system) of the whole child."""
        job_path = self.jobs_dir / f"job_{os.getpid()}.json"
        job_path.write_text(json.dumps(job))
        cpus = pinned_cpus(job["threads"])
        env = dict(os.environ, PYTHONUNBUFFERED="1", RAYON_NUM_THREADS=str(len(cpus)))
        # The child inherits the CPU mask of the thread that starts it: narrow this thread's
        # for the start (no code runs in the child between fork and exec) and restore it.
        allowed = os.sched_getaffinity(0)
        os.sched_setaffinity(0, cpus)
        try:
            cpu_before = children_cpu_seconds()
            start = time.perf_counter()
            proc = subprocess.run(self._command(peer, job_path), capture_output=True, text=True,
                                  timeout=self.timeout, env=env)
            wall = time.perf_counter() - start
            cpu = children_cpu_seconds() - cpu_before
        finally:
            os.sched_setaffinity(0, allowed)
        if proc.returncode != 0:
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["(no output)"]
            raise RuntimeError(f"exit {proc.returncode}: {tail[0][:300]}")
        return json.loads(proc.stdout.strip().splitlines()[-1]), wall, cpu

    def _verify_write(self, job: dict) -> bool:
        import tensorstore as ts

        target = job["target"]
        driver = "zarr3" if (Path(target) / "zarr.json").exists() else "zarr"
        values = ts.open({"driver": driver, "kvstore": {"driver": "file", "path": target}}, open=True,
                         read=True).result().read().result()
        return checksum(values) == int(self.store.manifest(self.current_dataset)["checksum"])

    # ---- one record ----------------------------------------------------------------------

    def run(self, case: Case, peer: str, threads: int, cache: str, mode: str) -> dict:
        v = case.variant
        entry = self.store.ensure(v)
        record = {
            "scenario": case.scenario, "case": case.name, "dataset": v.dataset.name, "variant": v.name,
            "label": v.label, "op": case.op, "peer": peer, "threads": threads, "cache": cache, "mode": mode,
            "in_flight": (threads if case.in_flight == "threads" else case.in_flight) if case.op == "selections" else None,
            "logical_bytes": self.logical_bytes(case), "dataset_bytes": v.dataset.nbytes,
            "bytes_on_disk": entry.get("bytes_h5" if peer == "h5py" else "bytes_zarr"),
            "note": case.note, "error": None, "ok": None,
        }
        if peer == "memmap":
            record["bytes_on_disk"] = v.dataset.nbytes
        self.current_dataset = v.dataset
        cold = cache == "cold"
        try:
            if mode == "in-process":
                job = self._job(case, peer, threads, cold, self.reps, 1)
                result, _, _ = self._spawn(peer, job)
                times = result["times"]
                cpu_times = result.get("cpu_times") or []
            else:
                job = self._job(case, peer, threads, False, 1, 0)
                times, cpu_times = [], []
                for _ in range(self.reps):
                    if cold:
                        drop_page_cache()
                    result, wall, cpu = self._spawn(peer, job)
                    times.append(wall)
                    cpu_times.append(cpu)
            record.update({
                "times": times, "median": statistics.median(times), "min": min(times), "max": max(times),
                "version": result["version"], "threads_used": result["threads"],
                "peak_rss": result["peak_rss"], "rss_before": result["rss_before"],
                "cpus": len(pinned_cpus(threads)),
            })
            if cpu_times:
                # Cores kept busy on average over the timed repetitions (CPU time over wall time).
                record["cpu_times"] = cpu_times
                record["cores_busy"] = sum(cpu_times) / sum(times)
            units = result.get("unit_times") or []
            if units:
                record["unit_p50"] = float(np.percentile(units, 50))
                record["unit_p99"] = float(np.percentile(units, 99))
            record["gbps"] = record["logical_bytes"] / record["median"] / 1e9
            if case.op in ("write_all", "roundtrip") and peer == "codecs":
                record["ok"] = bool(result.get("verified"))  # it decoded what it encoded; nothing is stored
                record["bytes_on_disk"] = result.get("encoded_bytes")
                shutil.rmtree(job["target"], ignore_errors=True)
            elif case.op in ("write_all", "roundtrip"):
                record["ok"] = self._verify_write(job)
                # What this peer wrote (codec libraries of other versions compress differently).
                record["bytes_on_disk"] = _dir_bytes(Path(job["target"]))
                shutil.rmtree(job["target"], ignore_errors=True)
            else:
                record["ok"] = int(result["checksum"]) == self.expected_checksum(case)
        except Exception as e:  # a peer that cannot do the job is a result too
            record["error"] = str(e) if not isinstance(e, subprocess.TimeoutExpired) else f"timed out after {self.timeout:.0f} s"
        return record
