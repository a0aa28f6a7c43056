"""xr.open_dataset(path, engine=...).load() with zarrkit's backend against engine="zarr"
(zarr-python), same files, same run, warm page cache: a multi-variable dataset written by
xarray with zarr-python's default codecs (zstd) and consolidated metadata.

    python bench/xarray_load.py --dir /tmp/xl --gb 1 --rounds 5 [--zarr-format 3]

Prints each engine's median over the rounds and zarrkit's speed (zarr's time / zarrkit's).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np


def make(path: Path, gb: float, zarr_format: int) -> None:
    import pandas as pd
    import xarray as xr

    # Four float32 variables of (time, y, x) and a coordinate per axis; xarray's default
    # chunks are zarr-python's ("auto"), its default compressor zstd.
    nt = max(1, int(gb * 2**30 / (4 * 4 * 512 * 512)))
    rng = np.random.default_rng(0)
    field = np.cumsum(rng.standard_normal((nt, 512, 512), dtype=np.float32), axis=2)
    data = {name: (("time", "y", "x"), field + i) for i, name in enumerate(["t", "u", "v", "q"])}
    ds = xr.Dataset(data, coords={"time": pd.date_range("2000-01-01", periods=nt, freq="h"),
                                  "y": np.arange(512.0), "x": np.arange(512.0)})
    ds.to_zarr(path, zarr_format=zarr_format, consolidated=True, mode="w")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", type=Path, required=True)
    parser.add_argument("--gb", type=float, default=1.0)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--zarr-format", type=int, default=3)
    args = parser.parse_args()
    import xarray as xr

    from zarrkit.xarray_backend import ZarrkitBackendEntrypoint

    path = args.dir / f"ds-v{args.zarr_format}-{args.gb:g}gb.zarr"
    if not path.exists():
        args.dir.mkdir(parents=True, exist_ok=True)
        make(path, args.gb, args.zarr_format)
    engines = {"zarr": "zarr", "zarrkit": ZarrkitBackendEntrypoint}
    times: dict[str, list[float]] = {name: [] for name in engines}
    nbytes = 0
    for r in range(args.rounds + 1):  # the first round warms the page cache and is dropped
        for name, engine in (engines.items() if r % 2 == 0 else reversed(engines.items())):
            t0 = time.perf_counter()
            ds = xr.open_dataset(path, engine=engine, consolidated=True) if name == "zarr" else \
                xr.open_dataset(path, engine=engine)
            ds.load()
            if r > 0:
                times[name].append(time.perf_counter() - t0)
            nbytes = ds.nbytes
            ds.close()
    medians = {name: statistics.median(t) for name, t in times.items()}
    for name, m in medians.items():
        print(f"{name:8} {m * 1e3:8.1f} ms  {nbytes / m / 1e9:6.2f} GB/s")
    print(f"zarrkit speed: {medians['zarr'] / medians['zarrkit']:.2f}x engine='zarr' ({nbytes / 1e9:.2f} GB, "
          f"Zarr v{args.zarr_format}, {args.rounds} rounds)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
