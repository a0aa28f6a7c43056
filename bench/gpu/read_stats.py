"""Where a read into device memory spends its time: reads an array into a CuPy array a few
times and prints, per read, the wall time and what the engine's counters moved by (chunks
decoded on the GPU and on the host, bytes uploaded from pinned and from pageable memory,
time in the host phase and waiting for the GPU).

  python bench/gpu/read_stats.py PATH [--reps 5] [--devices N] [--set gpu.nvcomp_decode=true ...]

--devices N reads with zarrkit.read_devices over GPUs 0..N-1 (the counters are summed over
the parts).
"""

from __future__ import annotations

import argparse
import json
import sys
import time


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("path")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--devices", type=int, default=1)
    parser.add_argument("--set", action="append", default=[], help="a setting, name=json value")
    args = parser.parse_args()
    import cupy

    import zarrkit
    from zarrkit import _zarrkit

    for item in args.set:
        name, value = item.split("=", 1)
        zarrkit.config.set({name: json.loads(value)})
    a = zarrkit.open_array(args.path, mode="r")
    out = cupy.empty(a.shape, a.dtype)
    devices = list(range(args.devices))

    def read() -> None:
        if args.devices == 1:
            a.get_basic_selection(Ellipsis, out=out)
            cupy.cuda.Device().synchronize()
            return
        parts = zarrkit.read_devices(a, devices=devices)
        for d in devices:
            cupy.cuda.Device(d).synchronize()
        del parts

    for rep in range(args.reps):
        before = _zarrkit.gpu_read_stats()
        t0 = time.perf_counter()
        read()
        wall = time.perf_counter() - t0
        after = _zarrkit.gpu_read_stats()
        moved = {k: after[k] - before[k] for k in after}
        print(f"read {rep}: {wall * 1e3:7.1f} ms ({a.nbytes / wall / 1e9:5.1f} GB/s)  "
              f"gpu {moved['chunks_decoded_on_gpu']} cpu {moved['chunks_decoded_on_cpu']} batches {moved['batches']}  "
              f"up pinned {moved['bytes_uploaded_pinned'] / 2**20:.0f} MiB pageable "
              f"{moved['bytes_uploaded_pageable'] / 2**20:.0f} MiB  host phase {moved['host_phase_ns'] / 1e6:.1f} ms "
              f"gpu wait {moved['gpu_wait_ns'] / 1e6:.1f} ms  pinned arenas made {moved.get('pinned_arenas_made', 0)} "
              f"({moved.get('pinned_arena_ns', 0) / 1e6:.1f} ms)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
