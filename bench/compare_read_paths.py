"""Host reads of two builds of the Python package in the same run, alternating: a
before/after measurement of a change to the read path that should cost nothing where it is
not used (the decoded-chunk cache, off by default).

    python3 bench/compare_read_paths.py --dir /tmp/rp --rounds 5 \\
        old=/path/to/old/package/parent new=/path/to/new/package/parent

Each NAME=PATH is a folder holding a `zarrkit` package (the Python files and the built
extension). The arrays (written once, by the first build): 256^3 uint16, a smooth field
plus noise, in chunks of 64^3 with zstd, in shards of 128^3 with 32^3 zstd inner chunks, and
in chunks of 64^3 uncompressed. Cases: each array read whole, and 300 windows of 32^3
sliding in steps of 16 (x fastest). Every case runs in a child process per build and round,
the builds taking turns (the order reversed every round). Prints each case's median over the
rounds per build and each build's speed against the first (its median over the first's:
above 1 is faster).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

CHILD = r"""
import json, sys, time
import numpy as np
import zarrkit
root, reps = sys.argv[1], int(sys.argv[2])
n = 256
layouts = {"zstd 64^3": dict(chunks=(64,) * 3),
           "sharded 128^3 / 32^3 zstd": dict(chunks=(32,) * 3, shards=(128,) * 3),
           "raw 64^3": dict(chunks=(64,) * 3, compressors=None)}
rng = np.random.default_rng(3)
data = None
starts = range(0, n - 32 + 1, 16)
windows = [(slice(z, z + 32), slice(y, y + 32), slice(x, x + 32)) for z in starts for y in starts for x in starts][:300]
out = {}
for name, layout in layouts.items():
    path = f"{root}/{name.split()[0]}.zarr"
    try:
        a = zarrkit.open_array(path, mode="r")
    except Exception:
        if data is None:
            y, x = np.indices((n, n), dtype=np.float32)
            data = (20000 + 8000 * np.sin(x / 40) * np.cos(y / 33))[None] + rng.normal(0, 30, (n, n, n))
            data = data.astype(np.uint16)
        kw = dict(layout)
        compressors = kw.pop("compressors", "auto")
        a = zarrkit.create_array(path, data=data, compressors=compressors, overwrite=True, **kw)
    cases = {f"{name}: read all": lambda: a[...],
             f"{name}: 300 windows of 32^3": lambda: [a[w] for w in windows]}
    for case, fn in cases.items():
        fn()
        times = []
        for _ in range(reps):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
        out[case] = min(times)
print(json.dumps(out))
"""


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("builds", nargs="+", help="NAME=PATH of a folder holding a zarrkit package, the baseline first")
    p.add_argument("--dir", type=Path, required=True)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--reps", type=int, default=3, help="timed runs per case in each child (its best counts)")
    args = p.parse_args()
    builds = [tuple(b.split("=", 1)) for b in args.builds]
    args.dir.mkdir(parents=True, exist_ok=True)
    times: dict[str, dict[str, list[float]]] = {}
    for r in range(args.rounds):
        for name, path in builds if r % 2 == 0 else list(reversed(builds)):
            env = dict(os.environ, PYTHONPATH=str(Path(path).resolve()))
            proc = subprocess.run([sys.executable, "-c", CHILD, str(args.dir), str(args.reps)], env=env,
                                  capture_output=True, text=True, check=True)
            for case, t in json.loads(proc.stdout.strip().splitlines()[-1]).items():
                times.setdefault(case, {b: [] for b, _ in builds})[name].append(t)
        print(f"round {r + 1} done", file=sys.stderr)
    base = builds[0][0]
    width = max(len(c) for c in times)
    print(f"{'case':{width}}  " + "  ".join(f"{b:>10}" for b, _ in builds) + "  " +
          "  ".join(f"{b} speed" for b, _ in builds[1:]))
    for case, per in times.items():
        medians = {b: statistics.median(t) for b, t in per.items()}
        row = f"{case:{width}}  " + "  ".join(f"{1e3 * medians[b]:8.1f}ms" for b, _ in builds)
        row += "  " + "  ".join(f"{medians[base] / medians[b]:8.3f}x" for b, _ in builds[1:])
        print(row)


if __name__ == "__main__":
    main()
