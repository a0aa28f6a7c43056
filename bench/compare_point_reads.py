"""Coordinate reads (vindex points, oindex with index arrays) on host memory, two builds of
the Python package in the same run, alternating: a before/after measurement of the engine's
batched, coalesced fetch for coordinate selections.

    python3 bench/compare_point_reads.py --dir /tmp/pts --rounds 5 \\
        old=/path/to/old/package/parent new=/path/to/new/package/parent

Each NAME=PATH is a folder holding a `zarrkit` package (the Python files and the built
extension). The arrays (written once, by the first build): 512x512x128 float32 with zstd,
chunks 64x64x32, unsharded and sharded (shards 128x128x32). Prints each case's median
over the rounds, per build, and each build's speed against the first (old / new).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

CHILD = r"""
import json, statistics, sys, time
import numpy as np
import zarrkit
root, reps = sys.argv[1], int(sys.argv[2])
rng = np.random.default_rng(7)
shape = (512, 512, 128)
layouts = {"chunks": dict(chunks=(64, 64, 32)), "shards": dict(chunks=(64, 64, 32), shards=(128, 128, 32))}
out = {}
for name, lay in layouts.items():
    path = f"{root}/{name}.zarr"
    try:
        a = zarrkit.open_array(path, mode="r")
    except Exception:
        data = rng.standard_normal(shape, dtype=np.float32).cumsum(axis=2)
        a = zarrkit.create_array(path, data=data, compressors="auto", overwrite=True, **lay)
    points = tuple(rng.integers(0, n, 2000) for n in shape)
    rows = np.sort(rng.choice(shape[0], 24, replace=False))
    cases = {
        "vindex 2000 points": lambda: a.vindex[points],
        "oindex 24 rows x 64 cols": lambda: a.oindex[rows, np.arange(0, 512, 8), :],
        "vindex 16 points in one chunk": lambda: a.vindex[(np.arange(16), np.arange(16), np.arange(16))],
    }
    for case, read in cases.items():
        read()
        times = []
        for _ in range(reps):
            t0 = time.perf_counter()
            read()
            times.append(time.perf_counter() - t0)
        out[f"{name}: {case}"] = statistics.median(times)
print(json.dumps(out))
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("builds", nargs="+", help="NAME=PATH of a folder holding a zarrkit package")
    args = parser.parse_args()
    builds = [b.split("=", 1) for b in args.builds]
    args.dir.mkdir(parents=True, exist_ok=True)
    results: dict[str, dict[str, list[float]]] = {name: {} for name, _ in builds}
    for r in range(args.rounds):
        order = builds if r % 2 == 0 else builds[::-1]
        for name, path in order:
            proc = subprocess.run([sys.executable, "-c", CHILD, str(args.dir), str(args.reps)],
                                  env={"PYTHONPATH": path, "PATH": "/usr/bin:/bin"}, capture_output=True, text=True)
            if proc.returncode != 0:
                print(proc.stderr[-2000:], file=sys.stderr)
                return 1
            for case, t in json.loads(proc.stdout.strip().splitlines()[-1]).items():
                results[name].setdefault(case, []).append(t)
    first = builds[0][0]
    for case in results[first]:
        medians = {name: statistics.median(results[name][case]) for name, _ in builds}
        speeds = "  ".join(f"{name} {medians[first] / medians[name]:.2f}x" for name, _ in builds[1:])
        cells = "  ".join(f"{name} {medians[name] * 1e3:8.2f} ms" for name, _ in builds)
        print(f"{case:45} {cells}  {speeds}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
