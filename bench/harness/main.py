"""The benchmark suite's driver; bench/run calls it after building and installing what it needs.
See bench/README.md for the options and what each number means."""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import report  # noqa: E402
import scenarios  # noqa: E402
from data import DataStore  # noqa: E402
from runner import Runner, can_drop_page_cache  # noqa: E402

BENCH = Path(__file__).resolve().parent.parent
ALL_PEERS = ["zarrkit", "codecs", "tensorstore", "zarr", "zarrs", "memmap", "h5py"]


def machine_description(data_dir: Path) -> dict:
    def read(cmd):
        try:
            return subprocess.run(cmd, capture_output=True, text=True, shell=True).stdout.strip()
        except OSError:
            return ""

    cpu = read("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2").strip()
    mem = read("grep -m1 MemTotal /proc/meminfo | awk '{print $2}'")
    return {
        "cpu": cpu or platform.processor(),
        "cores": os.cpu_count(),
        "memory_gib": round(int(mem) / 2**20, 1) if mem.isdigit() else None,
        "kernel": platform.release(),
        "os": read(". /etc/os-release && echo $PRETTY_NAME"),
        "python": platform.python_version(),
        "data_fs": read(f"df -hT {data_dir} | tail -1 | awk '{{print $2\", \"$3}}'"),
        "gpu": read("nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1"),
    }


def zarrkit_commit(driver: Path) -> str:
    """The commit the zarrkit driver was built from: the `commit` file that bench/device.sh puts
    beside it, else HEAD, marked when src/ or include/ differ from it (a working-tree build)."""
    stamp = driver.resolve().parent / "commit"
    if stamp.exists():
        return stamp.read_text().strip()

    def git(*cmd):
        return subprocess.run(["git", "-C", str(BENCH), *cmd], capture_output=True, text=True).stdout.strip()

    head = git("rev-parse", "--short", "HEAD") or "unknown"
    if git("status", "--porcelain", "--", "src", "include", "CMakeLists.txt"):
        head += " + uncommitted changes in src/include"
    return head


def parse_args(argv):
    p = argparse.ArgumentParser(prog="bench/run", description=__doc__)
    p.add_argument("--size", choices=scenarios.SIZES, default="quick")
    p.add_argument("--scenarios", default=",".join(scenarios.SCENARIOS),
                   help="comma-separated subset of " + ",".join(scenarios.SCENARIOS))
    p.add_argument("--peers", default=",".join(ALL_PEERS), help="comma-separated subset of " + ",".join(ALL_PEERS))
    p.add_argument("--threads", type=int, default=os.cpu_count(), help="thread count of every peer (default: cores)")
    p.add_argument("--sweep", default="", help="extra thread counts, e.g. 1,2,4,8,16 (warm, in-process)")
    p.add_argument("--sweep-cases", default="S1/,S2/",
                   help="the cases the sweep covers: comma-separated substrings of the case key "
                        "SCENARIO/DATASET/VARIANT/ACCESS (default: S1 and S2)")
    p.add_argument("--only", default="", help="run only the cases whose key contains one of these "
                                             "comma-separated substrings, e.g. s1_N/,S3/")
    p.add_argument("--reps", type=int, default=5, help="timed repetitions per measurement (>= 5 for results)")
    p.add_argument("--cache", default="warm,cold", help="warm, cold or both (cold needs root to drop the page cache)")
    p.add_argument("--no-process", action="store_true", help="skip the whole-process timings")
    p.add_argument("--data", type=Path, default=BENCH / "data", help="data set cache (default bench/data)")
    p.add_argument("--results", type=Path, default=BENCH / "results", help="raw results and plots")
    p.add_argument("--zarrkit-bench", type=Path, required=True)
    p.add_argument("--timeout", type=float, default=1800, help="seconds per child process")
    p.add_argument("--label", default="", help="results file name (default: the size)")
    p.add_argument("--deadline", type=float, default=0,
                   help="start no new case after this many seconds (0: none); the report says so")
    return p.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    wanted = set(args.scenarios.split(","))
    peers = [p for p in args.peers.split(",") if p]
    caches = set(args.cache.split(","))
    sweep = sorted({int(t) for t in args.sweep.split(",") if t} - {args.threads})
    cases = [c for c in scenarios.build(args.size) if c.scenario in wanted]
    if args.only:
        cases = [c for c in cases if any(p in c.key for p in args.only.split(","))]
    sweep_patterns = [p for p in args.sweep_cases.split(",") if p]

    if "cold" in caches:
        can_drop, cache_note = can_drop_page_cache()
        if not can_drop:
            caches.discard("cold")
    else:
        cache_note = "warm page cache only (cold runs not asked for)"
    print(f"bench: {cache_note}", flush=True)

    store = DataStore(args.data, args.size, log=lambda m: print(m, flush=True))
    runner = Runner(store, args.zarrkit_bench.resolve(), args.reps, args.timeout)
    label = args.label or args.size
    args.results.mkdir(parents=True, exist_ok=True)
    out = args.results / f"{label}.json"
    meta = {
        "size": args.size, "label": label,
        "command": os.environ.get("BENCH_COMMAND", "bench/run " + " ".join(argv or sys.argv[1:])),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": zarrkit_commit(args.zarrkit_bench),
        "machine": machine_description(args.data), "threads": args.threads, "sweep": sweep,
        "reps": args.reps, "sweep_cases": sweep_patterns, "cache_note": cache_note, "caches": sorted(caches),
    }
    records: list[dict] = []
    started = time.time()

    def save():
        meta["elapsed_s"] = round(time.time() - started)
        out.write_text(json.dumps({"meta": meta, "records": records}, indent=1))

    # The thread count of the run first, for every case; the sweep after, so that a deadline
    # cuts the sweep rather than the main tables.
    plan = []
    for case in cases:
        runs = [(args.threads, "warm", "in-process")]
        if case.cold and "cold" in caches:
            runs.append((args.threads, "cold", "in-process"))
        if case.whole_process and not args.no_process:
            runs += [(args.threads, cache, "process") for cache in ("warm", "cold") if cache in caches]
        plan.append((case, runs))
    for case in cases:
        if any(p in case.key for p in sweep_patterns) and sweep:
            plan.append((case, [(t, "warm", "in-process") for t in sweep]))

    stopped = False
    for case, runs in plan:
        if args.deadline and time.time() - started > args.deadline:
            stopped = True
            break
        case_peers = [p for p in case.peers if p in peers]
        print(f"{case.scenario} {case.name}: {case.variant.dataset.name}/{case.variant.name} ({case.variant.label})",
              flush=True)
        for threads, cache, mode in runs:
            for peer in case_peers:
                if peer in report.FLOORS and (cache, mode) != ("warm", "in-process"):
                    continue  # the floor fetches its chunks before the timing: warm, in-process only
                r = runner.run(case, peer, threads, cache, mode)
                records.append(r)
                if r["error"]:
                    status = f"ERROR {r['error']}"
                else:
                    status = (f"{r['median']:.4f} s ({r['min']:.4f}-{r['max']:.4f}) {r['gbps']:.2f} GB/s "
                              f"peak {r['peak_rss'] / 2**20:.0f} MiB {'ok' if r['ok'] else 'WRONG VALUES'}")
                print(f"  {peer:12s} t={threads:<2d} {cache} {mode:10s} {status}", flush=True)
                save()
    if stopped:
        meta["stopped"] = f"stopped at the --deadline of {args.deadline:.0f} s; later cases were not run"
        print(f"bench: {meta['stopped']}", flush=True)
    save()
    # bench/RESULTS.md for the default results directory, else a RESULTS.md inside the other one.
    results_md = BENCH / "RESULTS.md" if args.results.resolve() == (BENCH / "results").resolve() \
        else args.results / "RESULTS.md"
    report.write(args.results, results_md)
    print(f"bench: {len(records)} measurements in {time.time() - started:.0f} s; wrote {out} and {results_md}",
          flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
