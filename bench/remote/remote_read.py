"""Reading a Zarr array over HTTP from nginx on loopback: zarrkit against tensorstore and
zarr-python (fsspec's HTTP filesystem), with curl fetching the same files in parallel as the
ceiling of what the server and the loopback deliver (no decoding).

    .venv/bin/python bench/remote/http_read.py [--reps 5] [--concurrency 64] [--out bench/remote/RESULTS.md]

Small on purpose (32 MiB arrays): the development machine is shared. Each peer reads the
whole array once to warm up, then `--reps` times; the table shows the median. Every read is
checked against the values written.
"""

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import tensorstore as ts
import zarr

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "remote"))
from servers import Nginx  # noqa: E402

SHAPE = (256, 256, 256)  # uint16: 32 MiB
LAYOUTS = {
    "chunks 64^3 (64 files of 512 KiB), zstd 1": dict(chunks=(64, 64, 64)),
    "shards 128^3 of 32^3 inner chunks (8 files, ranged reads), zstd 1": dict(chunks=(32, 32, 32), shards=(128, 128, 128)),
}


def values():
    rng = np.random.default_rng(7)
    z, y, x = np.indices(SHAPE, dtype=np.float32)
    smooth = 20000 + 8000 * np.sin(x / 40) * np.cos(y / 33) + 50 * z
    return (smooth + rng.normal(0, 30, SHAPE)).astype("uint16")


def timed(fn, reps):
    fn()  # warm-up (connections, metadata)
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return times


def peers(url, expected, concurrency):
    import zarrkit

    def zk():
        a = zarrkit.open_array(url, mode="r")
        assert np.array_equal(a[...], expected)

    spec = {"driver": "zarr3", "kvstore": {"driver": "http", "base_url": url + "/"},
            "context": {"cache_pool": {"total_bytes_limit": 0}}}

    def tensorstore():
        a = ts.open(spec, read=True).result()
        assert np.array_equal(a.read().result(), expected)

    def zarr_python():
        with zarr.config.set({"async.concurrency": concurrency}):
            store = zarr.storage.FsspecStore.from_url(url, read_only=True)
            assert np.array_equal(zarr.open_array(store, mode="r")[...], expected)

    return {"zarrkit": zk, "tensorstore": tensorstore, "zarr-python (fsspec http)": zarr_python}


def curl_all(urls, concurrency):
    def fetch():
        subprocess.run(["curl", "-s", "--fail", "--parallel", "--parallel-max", str(concurrency), "--parallel-immediate",
                        *[arg for u in urls for arg in ("-o", "/dev/null", u)]], check=True)
    return fetch


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "remote" / "RESULTS.md")
    args = parser.parse_args()
    os.environ["ZARRKIT_HTTP_CONCURRENCY"] = str(args.concurrency)

    expected = values()
    logical = expected.nbytes
    work = Path(tempfile.mkdtemp(prefix="zarrkit-bench-remote-"))
    lines = []
    try:
        www = work / "www"
        www.mkdir()
        for i, (name, layout) in enumerate(LAYOUTS.items()):
            a = zarr.create_array(str(www / f"a{i}.zarr"), shape=SHAPE, dtype="uint16",
                                  compressors=zarr.codecs.ZstdCodec(level=1), **layout)
            a[...] = expected
        nginx = Nginx(work, www)
        try:
            for i, name in enumerate(LAYOUTS):
                url = f"{nginx.url}/a{i}.zarr"
                files = sorted(p for p in (www / f"a{i}.zarr").rglob("*") if p.is_file() and p.name != "zarr.json")
                stored = sum(p.stat().st_size for p in files)
                results = {}
                for peer, fn in peers(url, expected, args.concurrency).items():
                    results[peer] = statistics.median(timed(fn, args.reps))
                ceiling = statistics.median(timed(curl_all([f"{url}/{p.relative_to(www / f'a{i}.zarr')}" for p in files],
                                                             args.concurrency), args.reps))
                best_peer = min(t for p, t in results.items() if p != "zarrkit")
                lines.append(f"\n### {name}\n\n{len(files)} files, {stored / 2**20:.1f} MiB stored, "
                             f"{logical / 2**20:.0f} MiB logical; median of {args.reps}.\n")
                lines.append("| reader | time (s) | logical MB/s | zarrkit speed-up |")
                lines.append("|---|---|---|---|")
                for peer, t in results.items():
                    lines.append(f"| {peer} | {t:.3f} | {logical / t / 1e6:.0f} | {t / results['zarrkit']:.2f}x |")
                lines.append(f"| curl --parallel (raw files, no decoding) | {ceiling:.3f} | "
                             f"{stored / ceiling / 1e6:.0f} (stored) | {ceiling / results['zarrkit']:.2f}x |")
                lines.append(f"\nzarrkit vs the best peer: **{best_peer / results['zarrkit']:.2f}x**; "
                             f"zarrkit's time is {results['zarrkit'] / ceiling:.2f}x the raw parallel fetch.")
        finally:
            nginx.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)

    header = (f"# Reading over HTTP (nginx on loopback)\n\nCommand: `.venv/bin/python bench/remote/http_read.py "
              f"--reps {args.reps} --concurrency {args.concurrency}`\n\nMachine: {platform.node()}, "
              f"{os.cpu_count()} cores (shared; load average {os.getloadavg()[0]:.1f} at the end). "
              f"Request concurrency {args.concurrency} for zarrkit (ZARRKIT_HTTP_CONCURRENCY), zarr-python "
              f"(async.concurrency) and curl; tensorstore's defaults. Array {SHAPE} uint16 (smooth field + noise).\n")
    text = header + "\n".join(lines) + "\n"
    args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
