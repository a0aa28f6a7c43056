"""Two builds of the benchmark driver (zarrkit_bench) on the same host reads, in the same run:
a before/after measurement of an engine change on a shared, noisy machine. The S1 and S2
arrays that `bench/run` generated (any size) are read whole and chunk by chunk (S1: one
chunk-sized box after another, one in flight), the two drivers taking turns on every case
(the order reversed every round); each run times `--reps` reads after a warm-up.

    python3 bench/compare_builds.py --data bench/data/quick --rounds 8 \\
        old=/path/to/old/zarrkit_bench new=build/bench/zarrkit_bench

Prints, per case, the min and median of every build (all rounds together) and each build's
speed relative to the first (old median / new median: above 1 is faster).
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import statistics
import subprocess
import tempfile
from pathlib import Path


def cases(data: Path, threads: int, reps: int) -> dict[tuple[str, str, str], dict]:
    jobs = {}
    for dataset in sorted(p for p in data.iterdir() if p.is_dir() and p.name.startswith(("s1_", "s2_"))):
        raw = dataset / "values.raw"
        for array in sorted(dataset.glob("*.zarr")):
            if array.name.startswith("written_"):
                continue
            meta = json.loads((array / "zarr.json").read_text()) if (array / "zarr.json").exists() else \
                json.loads((array / ".zarray").read_text())
            shape = meta["shape"]
            dtype = meta["data_type"] if "data_type" in meta else {"<u2": "uint16"}.get(meta["dtype"], meta["dtype"])
            common = {"peer": "zarrkit", "threads": threads, "reps": reps, "warmup": 2, "cold": False,
                      "array": str(array), "raw": str(raw), "source_raw": str(raw), "dtype": dtype, "shape": shape}
            jobs[(dataset.name, array.stem, "read_all")] = dict(common, op="read_all")
            if dataset.name.startswith("s1_"):
                grid = meta["chunk_grid"]["configuration"]["chunk_shape"]
                boxes = [[[i * c, min((i + 1) * c, n)] for i, c, n in zip(index, grid, shape)]
                         for index in itertools.product(*(range(-(-n // c)) for n, c in zip(shape, grid)))]
                jobs[(dataset.name, array.stem, "chunks")] = dict(common, op="selections", selections=boxes,
                                                                  group=len(boxes), in_flight=1)
    return jobs


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("builds", nargs=2, help="NAME=PATH of a zarrkit_bench, the baseline first")
    p.add_argument("--data", type=Path, required=True, help="a size folder of bench/run's data cache")
    p.add_argument("--rounds", type=int, default=8)
    p.add_argument("--reps", type=int, default=30)
    p.add_argument("--threads", type=int, default=0, help="default: the driver's (the machine's cores)")
    args = p.parse_args()
    builds = [tuple(b.split("=", 1)) for b in args.builds]
    threads = args.threads or len(__import__("os").sched_getaffinity(0))
    jobs = cases(args.data, threads, args.reps)
    times = {k: {name: [] for name, _ in builds} for k in jobs}
    with tempfile.TemporaryDirectory() as tmp:
        job_path = Path(tmp) / "job.json"
        for r in range(args.rounds):
            for key, job in jobs.items():
                job_path.write_text(json.dumps(job))
                for name, driver in builds if r % 2 == 0 else builds[::-1]:
                    out = json.loads(subprocess.run([driver, str(job_path)], capture_output=True, text=True,
                                                    check=True).stdout)
                    if out.get("ok") is False:
                        raise SystemExit(f"{name} read wrong values: {key}")
                    times[key][name] += out["times"]
    (base, _), (new, _) = builds
    ratios = []
    for (dataset, variant, op), t in times.items():
        b, n = statistics.median(t[base]), statistics.median(t[new])
        ratios.append(b / n)
        print(f"{dataset:6} {variant:13} {op:9} {base} min {min(t[base]) * 1e3:8.2f} med {b * 1e3:8.2f} ms | "
              f"{new} min {min(t[new]) * 1e3:8.2f} med {n * 1e3:8.2f} ms | {new} speed x{b / n:.3f}")
    print(f"geometric mean of {new}'s speed: x{math.exp(sum(map(math.log, ratios)) / len(ratios)):.3f}")


if __name__ == "__main__":
    main()
