"""First, second and steady reads into device memory, each process fresh (the warm device path).

A process that has just made its CUDA context reads a 1 GiB float32 array into device
memory several times: the first read pays for whatever is made on first use (pinned staging,
device memory pools, streams, kernels loaded), the second for what grows after the first,
and later reads are the steady state. With --warm-up the process calls
zarrkit.config.warm_up_gpu(array) first (outside the timed reads). Every read is checked
against the host read.

Layouts: zarr-python 3's defaults for this shape (S11 of BENCHMARKS.md): chunks 128x128x32
zstd ("chunks"), and shards 128x128x32 of 64x64x32 inner chunks ("shards"); blosc-lz4
chunks 256x256x64 for a codec the device decodes ("blosc").

  python bench/gpu/first_read.py --dir /tmp/fr --json out.jsonl [--reps 8] [--layouts chunks,shards]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

SHAPE = (1024, 1024, 256)

LAYOUTS = {
    "chunks": {"chunks": (128, 128, 32), "shards": None, "compressors": "auto"},
    "shards": {"chunks": (64, 64, 32), "shards": (128, 128, 32), "compressors": "auto"},
    "blosc": {
        "chunks": (256, 256, 64),
        "shards": None,
        "compressors": [{"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle"}}],
    },
}

# One fresh process: CUDA context first, then (optionally) the warm-up, then the reads.
CHILD = r"""
import json, sys, time
import numpy as np
import cupy
import zarrkit
path, reps, warm = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
cupy.cuda.runtime.free(0)  # the CUDA context
cupy.cuda.Device().synchronize()
a = zarrkit.open_array(path, mode="r")
host = a[...]
warm_s = None
if warm:
    t0 = time.perf_counter()
    zarrkit.config.warm_up_gpu(a)
    warm_s = time.perf_counter() - t0
times, ok = [], True
with zarrkit.config.enable_gpu():
    for _ in range(reps):
        t0 = time.perf_counter()
        x = a[...]
        cupy.cuda.Device().synchronize()
        times.append(time.perf_counter() - t0)
        ok = ok and bool(np.array_equal(cupy.asnumpy(x), host))
        del x
t0 = time.perf_counter()
for _ in range(3):
    a[...]
host_s = (time.perf_counter() - t0) / 3
print(json.dumps({"times": times, "ok": ok, "warm_up_s": warm_s, "host_s": host_s}))
"""


def make_data() -> np.ndarray:
    # Family N: a smooth field plus noise (ratio 2-4 with zstd), as S6/S11.
    rng = np.random.default_rng(11)
    z, y, x = np.meshgrid(np.arange(SHAPE[0], dtype=np.float32) / 97, np.arange(SHAPE[1], dtype=np.float32) / 89,
                          np.arange(SHAPE[2], dtype=np.float32) / 13, indexing="ij", sparse=True)
    data = np.sin(z) * np.cos(y) + np.sin(x)
    data = (data + rng.normal(0, 0.01, SHAPE).astype(np.float32)).astype(np.float32)
    return np.round(data, 3)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", type=Path, required=True)
    parser.add_argument("--json", type=Path, required=True)
    parser.add_argument("--reps", type=int, default=8)
    parser.add_argument("--layouts", default="chunks,shards,blosc")
    parser.add_argument("--label", default="", help="a name for this build in the output (old, new)")
    parser.add_argument("--no-write", action="store_true", help="reuse the arrays in --dir")
    args = parser.parse_args()
    import zarrkit

    has_warm_up = hasattr(zarrkit.config, "warm_up_gpu")
    data = None if args.no_write else make_data()
    args.dir.mkdir(parents=True, exist_ok=True)
    with args.json.open("a") as out:
        for name in args.layouts.split(","):
            layout = LAYOUTS[name]
            path = args.dir / f"{name}.zarr"
            if data is not None:
                zarrkit.create_array(str(path), data=data, chunks=layout["chunks"], shards=layout["shards"],
                                     compressors=layout["compressors"], overwrite=True)
            for warm in ([False, True] if has_warm_up else [False]):
                t0 = time.perf_counter()
                child = subprocess.run([sys.executable, "-c", CHILD, str(path), str(args.reps), "1" if warm else "0"],
                                       capture_output=True, text=True, check=False)
                if child.returncode != 0:
                    print(f"{name} warm={warm}: failed\n{child.stderr[-2000:]}", flush=True)
                    continue
                r = json.loads(child.stdout.strip().splitlines()[-1])
                t = r["times"]
                steady = float(np.median(t[2:])) if len(t) > 2 else float("nan")
                row = {"label": args.label, "layout": name, "warm_up": warm, "first_s": t[0], "second_s": t[1],
                       "steady_s": steady, "first_over_steady": t[0] / steady, "warm_up_s": r["warm_up_s"],
                       "host_s": r["host_s"], "ok": r["ok"], "process_s": time.perf_counter() - t0,
                       "logical_gb": data.nbytes / 1e9 if data is not None else None}
                out.write(json.dumps(row) + "\n")
                print(f"{args.label:4} {name:7} warm-up={'yes' if warm else 'no '} first {t[0]:.3f} s, second "
                      f"{t[1]:.3f} s, steady {steady:.3f} s (first/steady {t[0] / steady:.2f}x), host {r['host_s']:.3f} s"
                      f"{'' if r['ok'] else '  VALUES DIFFER'}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
