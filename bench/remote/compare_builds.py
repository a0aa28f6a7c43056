"""Two (or more) builds of the zarrkit package reading the same array over HTTP, in the same
run, against tensorstore: a before/after measurement of an engine change on a shared,
noisy machine. Each build reads in a child process (python -S with PYTHONPATH set to the
build's package folder and then to this venv's site-packages), the builds taking turns
(the order reversed every round), tensorstore reading in this process between them.

    .venv/bin/python bench/remote/compare_builds.py --size-mib 128 --latency-ms 20 --layout chunks \\
        --rounds 4 old=/tmp/old-package new=/tmp/new-package

A package folder holds zarrkit/ (python/zarrkit/*.py and the _zarrkit extension built for
this interpreter). Prints the median, min and max of each reader and the ratios.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

import tensorstore as ts
import zarr

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "tests" / "remote"))
sys.path.insert(0, str(HERE))
from remote_read import LAYOUTS, digest, shape_for, values  # noqa: E402
from servers import Nginx  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--size-mib", type=int, default=32)
    parser.add_argument("--latency-ms", type=int, default=0)
    parser.add_argument("--layout", choices=sorted(LAYOUTS), default="chunks")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--reps", type=int, default=3, help="reads per child process (after one warm-up)")
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("builds", nargs="+", help="NAME=PACKAGE_FOLDER")
    args = parser.parse_args()
    builds = dict(b.split("=", 1) for b in args.builds)
    site = sysconfig.get_paths()["purelib"]

    work = Path(tempfile.mkdtemp(prefix="zarrkit-compare-"))
    try:
        www = work / "www"
        www.mkdir()
        expected = values(shape_for(args.size_mib))
        want = digest(expected)
        a = zarr.create_array(str(www / "a.zarr"), shape=expected.shape, dtype="uint16",
                              compressors=zarr.codecs.ZstdCodec(level=1), **LAYOUTS[args.layout][1])
        a[...] = expected
        del expected
        server = Nginx(work, www, delay_ms=args.latency_ms) if args.latency_ms else Nginx(work, www)
        url = server.url + "/a.zarr"
        spec = {"driver": "zarr3", "kvstore": {"driver": "http", "base_url": url + "/"},
                "context": {"cache_pool": {"total_bytes_limit": 0}}}
        times = {name: [] for name in [*builds, "tensorstore"]}
        loads = []
        for r in range(args.rounds):
            for name in (list(builds) if r % 2 == 0 else list(reversed(builds))):
                env = dict(os.environ, PYTHONPATH=f"{builds[name]}:{site}",
                           ZARRKIT_HTTP_CONCURRENCY=str(args.concurrency))
                proc = subprocess.run([sys.executable, "-S", str(HERE / "remote_read.py"), "--child-read", url,
                                       "--reps", str(args.reps)], env=env, capture_output=True, text=True)
                if proc.returncode:
                    raise SystemExit(f"{name}: {proc.stderr}")
                answer = json.loads(proc.stdout.strip().splitlines()[-1])
                if answer["digest"] != want:
                    raise SystemExit(f"{name} read wrong values")
                times[name] += answer["times"]
            read = lambda: ts.open(spec, read=True).result().read().result()  # noqa: E731
            read()
            for _ in range(args.reps):
                t0 = time.perf_counter()
                read()
                times["tensorstore"].append(time.perf_counter() - t0)
            loads.append(os.getloadavg()[0])
        server.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)

    print(f"{args.size_mib} MiB, {args.layout}, {args.latency_ms} ms before each answer, "
          f"{args.concurrency} requests in flight; load average {min(loads):.1f}-{max(loads):.1f}")
    for name, t in times.items():
        print(f"  {name}: median {statistics.median(t) * 1000:.0f} ms (min {min(t) * 1000:.0f}, "
              f"max {max(t) * 1000:.0f}, n={len(t)})")
    ts_median = statistics.median(times["tensorstore"])
    for name in builds:
        print(f"  tensorstore / {name}: {ts_median / statistics.median(times[name]):.2f}x")
    names = list(builds)
    for other in names[1:]:
        print(f"  {names[0]} / {other}: {statistics.median(times[names[0]]) / statistics.median(times[other]):.2f}x")


if __name__ == "__main__":
    main()
