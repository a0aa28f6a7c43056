"""Many GPUs on one host: one array read into every GPU at once, against one GPU alone.

Same run, same files, 1 GiB float32 (family N: a smooth field plus noise) per case:
  blosc          blosc-lz4 shuffle, chunks 256x256x64 (decoded on the device)
  shards         zarr-python 3 defaults shards="auto": shards 128x128x32 of 64x64x32 zstd
  shards-nvcomp  the same read with nvCOMP's zstd (gpu.nvcomp_decode)
  none           uncompressed, chunks 256x256x64

Ways of reading, each in fresh processes, the values checked against the host read:
  one-gpu        one process reads the whole array into GPU 0 (the rate the goals scale)
  multi-device   one process, zarrkit.read_devices over all N GPUs (split along axis 0)
  peer-copy      one process reads the whole array into GPU 0, then moves every other
                 GPU's part (the same split) there by a peer copy (NVLink where present)
  per-process    N processes at once, each reads the whole array into its own GPU
                 (CUDA_VISIBLE_DEVICES), with gpu.devices_sharing_host = 1 and = N
  dask-cuda      a Dask-CUDA cluster (one worker per GPU) computes zarrkit.to_dask(a,
                 device=True).sum() (LocalCUDACluster; a plain distributed cluster with one
                 worker per GPU where dask_cuda cannot load), after a warm-up on every
                 worker; "dask-cuda-steady": MULTI_DASK_REPEAT (default 8) reads of the
                 array in one computation
  plain-reader   the host's ceiling: N processes at once read every stored chunk file (the
                 page cache's bytes, no decoding), as the per-process readers must

Rates are logical (decoded) bytes per second, aggregated over all GPUs: N x 1 GiB per
round for per-process, 1 GiB per round for multi-device and Dask.

  python bench/gpu/multi_gpu.py --dir /tmp/mg --json out.jsonl [--gpus N] [--reps 10] [--cases blosc,shards]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

# The same data as the first-read benchmark (run as a script, bench/gpu is on the path).
from first_read import SHAPE, make_data

BLOSC = [{"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle"}}]
CASES = {
    "blosc": ("blosc", {}),
    "shards": ("shards", {}),
    "shards-nvcomp": ("shards", {"gpu.nvcomp_decode": True}),
    "none": ("none", {}),
}
LAYOUTS = {
    "blosc": {"chunks": (256, 256, 64), "shards": None, "compressors": BLOSC},
    "shards": {"chunks": (64, 64, 32), "shards": (128, 128, 32), "compressors": "auto"},
    "none": {"chunks": (256, 256, 64), "shards": None, "compressors": None},
}

# A reader process: waits for the start time, reads `reps` times into its GPU(s), prints times.
CHILD = r"""
import json, sys, time
import numpy as np
import cupy
import zarrkit
path, reps, mode, settings, start = sys.argv[1], int(sys.argv[2]), sys.argv[3], json.loads(sys.argv[4]), float(sys.argv[5])
zarrkit.config.set(settings)
a = zarrkit.open_array(path, mode="r")
host = a[...]
n = cupy.cuda.runtime.getDeviceCount()
bounds = [tuple(p) for p in zarrkit.split_selection(a, parts=n)] if mode == "peer" else []
if mode == "peer":  # let every device copy from GPU 0 over NVLink (or PCIe)
    for d in range(1, n):
        with cupy.cuda.Device(d):
            if cupy.cuda.runtime.deviceCanAccessPeer(d, 0):
                cupy.cuda.runtime.deviceEnablePeerAccess(0)
def read():
    if mode == "multi":
        parts = zarrkit.read_devices(a, devices=list(range(n)))
        for d in range(n):
            cupy.cuda.Device(d).synchronize()
        return parts
    if mode == "peer":  # decode everything on GPU 0, then each other part moves by peer copy
        whole = cupy.empty(a.shape, a.dtype)
        a.get_basic_selection(Ellipsis, out=whole)
        cupy.cuda.Device(0).synchronize()
        parts = []
        for d, sel in enumerate(bounds):
            if d == 0:
                parts.append(whole[sel])
                continue
            src = cupy.ascontiguousarray(whole[sel])
            with cupy.cuda.Device(d):
                dst = cupy.empty(src.shape, src.dtype)
                dst.data.copy_from_device_async(src.data, src.nbytes)
                parts.append(dst)
        for d in range(n):
            cupy.cuda.Device(d).synchronize()
        return parts
    out = cupy.empty(a.shape, a.dtype)
    a.get_basic_selection(Ellipsis, out=out)
    cupy.cuda.Device().synchronize()
    return [out]
def check(parts):
    got = np.concatenate([cupy.asnumpy(p) for p in parts]) if len(parts) > 1 else cupy.asnumpy(parts[0])
    return bool(np.array_equal(got, host))
ok = check(read())  # warm: pools, staging, kernels
read()
while time.time() < start:
    time.sleep(0.001)
times, begin = [], time.time()
for _ in range(reps):
    t0 = time.perf_counter()
    parts = read()
    times.append(time.perf_counter() - t0)
    del parts
end = time.time()
print(json.dumps({"times": times, "ok": ok, "begin": begin, "end": end}))
"""

# N plain readers at once: each reads every stored file of the array (no decoding).
PLAIN = r"""
import os, sys, time, json
from concurrent.futures import ThreadPoolExecutor
root, threads, start, reps = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
files = [os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs if f != "zarr.json"]
def read(f):
    with open(f, "rb", buffering=0) as fh:
        return len(fh.read())
with ThreadPoolExecutor(threads) as pool:
    list(pool.map(read, files))
    while time.time() < start:
        time.sleep(0.001)
    begin = time.time()
    total = 0
    for _ in range(reps):
        total += sum(pool.map(read, files))
    end = time.time()
print(json.dumps({"bytes": total, "begin": begin, "end": end}))
"""

DASK = r"""
import json, sys, time, os
import numpy as np
path, n, reps, settings = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), json.loads(sys.argv[4])
import zarrkit
from distributed import Client
kind = "dask_cuda.LocalCUDACluster"
env = {"ZARRKIT_NVCOMP_DECODE": "1"} if settings.get("gpu.nvcomp_decode") else {}
env["ZARRKIT_GPU_DEVICES_SHARING_HOST"] = str(n)
os.environ.update(env)
try:
    from dask_cuda import LocalCUDACluster
    cluster = LocalCUDACluster(n_workers=n, threads_per_worker=2, dashboard_address=None)
except Exception as e:
    from distributed import Nanny, Scheduler, SpecCluster
    kind = f"distributed SpecCluster, one Nanny per GPU (dask_cuda failed: {type(e).__name__}: {e})"
    workers = {i: {"cls": Nanny, "options": {"nthreads": 2, "env": {"CUDA_VISIBLE_DEVICES": str(i), **env}}}
               for i in range(n)}
    cluster = SpecCluster(workers=workers, scheduler={"cls": Scheduler, "options": {"dashboard_address": None}})
client = Client(cluster)
a = zarrkit.open_array(path, mode="r")
expected = float(a[...].sum(dtype="f8"))
step = a.shards or a.chunks
rows = max(step[0], (a.shape[0] // (4 * n)) // step[0] * step[0])  # >= 4 tasks per worker
block = (rows,) + tuple(a.shape[1:])

def warm_up(path, block):
    # Each worker makes its pinned staging, streams and device memory for a task's read once.
    import zarrkit
    zarrkit.config.warm_up_gpu(zarrkit.open_array(path, mode="r"), tuple(slice(0, b) for b in block))

client.run(warm_up, path, block)
x = zarrkit.to_dask(a, chunks=block, device=True)
total = x.sum(dtype="f8")
got = float(total.compute())  # warm
times = []
for _ in range(reps):
    t0 = time.perf_counter()
    got = float(total.compute())
    times.append(time.perf_counter() - t0)
ok = abs(got - expected) <= 1e-6 * abs(expected) + 1e-3
# Steady: `repeat` reads of the whole array in one computation (distinct task names, so each
# block is read every time), as a long job sees it: the scheduler's fixed cost per
# computation is spread over more bytes.
repeat = int(os.environ.get("MULTI_DASK_REPEAT", "8"))
many = [zarrkit.to_dask(a, chunks=block, device=True, name=f"zk-read-{i}") for i in range(repeat)]
grand = sum(m.sum(dtype="f8") for m in many)
float(grand.compute())  # warm
steady = []
for _ in range(max(2, reps // 2)):
    t0 = time.perf_counter()
    got_many = float(grand.compute())
    steady.append(time.perf_counter() - t0)
ok = ok and abs(got_many - repeat * expected) <= 1e-6 * abs(repeat * expected) + 1e-3
print(json.dumps({"times": times, "ok": ok, "cluster": kind, "tasks": int(np.prod(x.numblocks)),
                  "steady_times": steady, "repeat": repeat}))
client.close(); cluster.close()
"""


def run_children(script: str, args_per_child: list[list[str]], envs: list[dict]) -> list[dict]:
    procs = [subprocess.Popen([sys.executable, "-c", script, *a], env={**os.environ, **e}, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for a, e in zip(args_per_child, envs)]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=600)
        if p.returncode != 0:
            raise RuntimeError(f"child failed ({p.returncode}):\n{err[-3000:]}")
        results.append(json.loads(out.strip().splitlines()[-1]))
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", type=Path, required=True)
    parser.add_argument("--json", type=Path, required=True)
    parser.add_argument("--gpus", type=int, default=0, help="GPUs to use (default: all visible)")
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--ways", default="one-gpu,multi-device,peer-copy,per-process,per-process-shared,dask-cuda,"
                        "plain-reader")
    parser.add_argument("--label", default="")
    args = parser.parse_args()
    import cupy
    import zarrkit

    n = args.gpus or cupy.cuda.runtime.getDeviceCount()
    visible = ",".join(str(i) for i in range(n))
    ways = args.ways.split(",")
    args.dir.mkdir(parents=True, exist_ok=True)
    data = None
    gib = SHAPE[0] * SHAPE[1] * SHAPE[2] * 4
    with args.json.open("a") as out:
        for case in args.cases.split(","):
            layout_name, settings = CASES[case]
            path = args.dir / f"{layout_name}.zarr"
            if not path.exists():
                data = make_data() if data is None else data
                lay = LAYOUTS[layout_name]
                zarrkit.create_array(str(path), data=data, chunks=lay["chunks"], shards=lay["shards"],
                                     compressors=lay["compressors"], overwrite=True)
            stored = sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
            rates: dict[str, float] = {}

            def record(way: str, rate: float, ok: bool, extra: dict) -> None:
                rates[way] = rate
                row = {"label": args.label, "case": case, "way": way, "gpus": n, "gb_per_s": rate / 1e9, "ok": ok,
                       "stored_gb": stored / 1e9, **extra}
                if "one-gpu" in rates and way != "one-gpu":
                    row["over_n_x_one_gpu"] = rate / (n * rates["one-gpu"])
                out.write(json.dumps(row) + "\n")
                out.flush()
                scale = f"  {row['over_n_x_one_gpu']:.2f} of {n} x one GPU" if "over_n_x_one_gpu" in row else ""
                print(f"{case:14} {way:20} {rate / 1e9:7.1f} GB/s{scale}{'' if ok else '  VALUES DIFFER'}"
                      f"{'  ' + extra['note'] if extra.get('note') else ''}", flush=True)

            def readers(mode: str, count: int, env: dict) -> tuple[float, bool]:
                start = time.time() + 3.0
                envs = [{"CUDA_VISIBLE_DEVICES": str(i) if mode == "one" else visible, **env} for i in range(count)]
                res = run_children(CHILD, [[str(path), str(args.reps), mode, json.dumps(settings), str(start)]] * count,
                                   envs)
                span = max(r["end"] for r in res) - min(r["begin"] for r in res)
                return count * args.reps * gib / span, all(r["ok"] for r in res)

            try:
                if "one-gpu" in ways:
                    rate, ok = readers("one", 1, {})
                    record("one-gpu", rate, ok, {})
                if "multi-device" in ways:
                    rate, ok = readers("multi", 1, {})
                    record("multi-device", rate, ok, {})
                if "peer-copy" in ways:
                    rate, ok = readers("peer", 1, {})
                    record("peer-copy", rate, ok, {"note": "decoded on GPU 0, parts moved by peer copy"})
                if "per-process" in ways:
                    rate, ok = readers("one", n, {})
                    record("per-process", rate, ok, {"note": "devices_sharing_host=1"})
                if "per-process-shared" in ways:
                    rate, ok = readers("one", n, {"ZARRKIT_GPU_DEVICES_SHARING_HOST": str(n)})
                    record("per-process-shared", rate, ok, {"note": f"devices_sharing_host={n}"})
                if "dask-cuda" in ways:
                    env = {"CUDA_VISIBLE_DEVICES": visible}
                    r = run_children(DASK, [[str(path), str(n), str(max(3, args.reps // 2)), json.dumps(settings)]],
                                     [env])[0]
                    record("dask-cuda", gib / float(np.median(r["times"])), r["ok"],
                           {"note": f"{r['cluster']}, {r['tasks']} tasks", "cluster": r["cluster"]})
                    record("dask-cuda-steady", r["repeat"] * gib / float(np.median(r["steady_times"])), r["ok"],
                           {"note": f"{r['repeat']} GiB per computation, {r['repeat'] * r['tasks']} tasks",
                            "cluster": r["cluster"]})
                if "plain-reader" in ways:
                    start = time.time() + 2.0
                    res = run_children(PLAIN, [[str(path), "16", str(start), str(args.reps)]] * n, [{}] * n)
                    span = max(r["end"] for r in res) - min(r["begin"] for r in res)
                    stored_rate = sum(r["bytes"] for r in res) / span
                    # As logical bytes: what readers of these stored bytes could deliver at most.
                    record("plain-reader", stored_rate * gib / stored, True,
                           {"note": f"{stored_rate / 1e9:.1f} GB/s of stored bytes ({n} processes x 16 threads)",
                            "stored_gb_per_s": stored_rate / 1e9})
            except Exception as e:  # one case's failure does not end the others
                print(f"{case}: failed: {e}", flush=True)
                out.write(json.dumps({"label": args.label, "case": case, "error": str(e)[-2000:]}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
