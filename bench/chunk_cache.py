"""The decoded-chunk cache (BENCHMARKS.md S14): repeated overlapping crops, as a sliding
window inference or a viewer makes them. A 64^3 window slides over a zstd array in steps of
half a window (raster order: x fastest), read by zarrkit without and with its cache and by
tensorstore with its cache pool of the same size (and without one), on local files and over
S3 (moto's server on loopback, tests/remote/servers.py).

    .venv/bin/python bench/chunk_cache.py [--size quick|full] [--stores file,s3] [--rounds 3]
        [--windows 1000] [--s3-windows 300] [--budget-mib N] [--out bench/results/CHUNK-CACHE.md]

quick: 512^3 uint16 (256 MiB) in chunks of 128^3 (4 MiB); full: 1024^3 (2 GiB) in chunks
of 256^3 (32 MiB), as S1. Values: the N family of bench/harness/data.py (a smooth field plus
noise); the table gives the ratio zstd reaches on them.
The budget defaults to the chunks a row of windows touches, twice over: 2x2 chunks across
the row times the chunks along it, x2.

Each round runs every reader once over the same windows, in turns (the order reversed
every round); a reader's time is the whole scan (every window read into a new NumPy array
through its Python API), from a cold cache: the zarrkit cache is emptied and tensorstore's
array opened anew (a new context, an empty cache pool) before each scan. tensorstore runs
with recheck_cached_data off, so that neither checks the store again for chunks it holds
(zarrkit's cache never does; docs/chunk-cache.md). Threads: every reader gets the machine's
cores. Every 17th window of every reader's last scan is compared with the values written,
outside the timing. The zarrkit cache's counters (chunks decoded: misses; chunks copied:
hits) of its last scan go with the table: the scan's time is those decodes plus the copies.

Prints the table and writes it, with the machine, the versions and the command, to --out.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "remote"))
sys.path.insert(0, str(ROOT / "bench" / "harness"))

REGION = "us-east-1"
KEY = "testing"  # moto accepts any credentials
BUCKET = "bench"
WINDOW = 64
SIZES = {"quick": (512, 128), "full": (1024, 256)}  # array edge, chunk edge


def values(n: int) -> np.ndarray:
    """The N family (bench/harness/data.py), uint16, n^3, made a slab at a time."""
    from data import values_slab
    from scenarios import Dataset

    ds = Dataset(f"N{n}", (n, n, n), "uint16", "N", 14)
    out = np.empty(ds.shape, dtype=np.uint16)
    for z0 in range(0, n, 32):
        out[z0:z0 + 32] = values_slab(ds, z0, min(z0 + 32, n))
    return out


def windows(n: int, count: int) -> list[tuple[slice, slice, slice]]:
    """The first `count` positions of a 64^3 window in steps of 32, x fastest."""
    starts = range(0, n - WINDOW + 1, WINDOW // 2)
    out = []
    for z in starts:
        for y in starts:
            for x in starts:
                out.append((slice(z, z + WINDOW), slice(y, y + WINDOW), slice(x, x + WINDOW)))
                if len(out) == count:
                    return out
    return out


def upload(endpoint: str, local_root: Path, prefix: str) -> None:
    import boto3
    from boto3.s3.transfer import TransferConfig

    s3 = boto3.client("s3", endpoint_url=endpoint, region_name=REGION, aws_access_key_id=KEY,
                      aws_secret_access_key=KEY)
    s3.create_bucket(Bucket=BUCKET)
    single = TransferConfig(multipart_threshold=1 << 30)
    for path in local_root.rglob("*"):
        if path.is_file():
            s3.upload_file(str(path), BUCKET, f"{prefix}/{path.relative_to(local_root).as_posix()}", Config=single)


def readers(kind: str, location: str, endpoint: str | None, budget: int, threads: int):
    """name -> (open(), read(handle, window)): open() runs before each scan, untimed."""
    import tensorstore as ts
    import zarrkit

    url = location if kind == "file" else f"s3://{BUCKET}/{location}"

    def zarrkit_reader(cache_bytes: int):
        def open_():
            zarrkit.config.set({"cache.host_bytes": cache_bytes})
            zarrkit.config.clear_cache()
            return zarrkit.open_array(url, mode="r")
        return open_, lambda a, w: a[w]

    def ts_reader(pool: int):
        if kind == "file":
            kvstore = {"driver": "file", "path": location + "/"}
        else:
            kvstore = {"driver": "s3", "bucket": BUCKET, "path": location + "/", "endpoint": endpoint,
                       "aws_region": REGION}
        context = {"cache_pool": {"total_bytes_limit": pool}, "data_copy_concurrency": {"limit": threads},
                   "file_io_concurrency": {"limit": max(threads, 8)}}
        spec = {"driver": "zarr3", "kvstore": kvstore, "context": context, "recheck_cached_data": False}

        def open_():
            return ts.open(spec, read=True).result()
        return open_, lambda a, w: a[w].read().result()

    mib = budget >> 20
    return {
        "zarrkit, no cache": zarrkit_reader(0),
        f"zarrkit, cache {mib} MiB": zarrkit_reader(budget),
        f"tensorstore, cache pool {mib} MiB": ts_reader(budget),
        "tensorstore, no cache pool": ts_reader(0),
    }


def scan(open_, read, wins):
    """The scan's wall and CPU time (this process's threads: the readers' own, not moto's),
    the handle, and the zarrkit cache's hits and misses during it."""
    import zarrkit

    handle = open_()
    before = zarrkit.config.cache_stats()
    t0, c0 = time.perf_counter(), time.process_time()
    for w in wins:
        read(handle, w)
    elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
    after = zarrkit.config.cache_stats()
    return (elapsed, cpu), handle, (after["hits"] - before["hits"], after["misses"] - before["misses"])


def breakdown(peers, names, wins):
    """One more scan of each of `names`, from a cold cache, timing every window: the windows
    in which zarrkit's cache missed (decoded chunks) against the others (copies only)."""
    import zarrkit

    per_window = {}
    missed = []
    for name in names:
        open_, read = peers[name]
        handle = open_()
        times = []
        for w in wins:
            before = zarrkit.config.cache_stats()["misses"]
            t0 = time.perf_counter()
            read(handle, w)
            times.append(time.perf_counter() - t0)
            if name.startswith("zarrkit"):
                missed.append(zarrkit.config.cache_stats()["misses"] > before)
        per_window[name] = np.array(times)
    missed = np.array(missed)
    return {name: (int(missed.sum()), float(t[missed].sum()), float(t[~missed].mean()) if (~missed).any() else 0.0)
            for name, t in per_window.items()}


def check(name, handle, read, wins, expected):
    for w in wins[::17]:
        got = np.asarray(read(handle, w))
        if not np.array_equal(got, expected[w]):
            raise SystemExit(f"{name}: window {w} differs from the values written")


def machine() -> str:
    model = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return (f"{platform.node()}: {model}, {len(os.sched_getaffinity(0))} cores usable, {memory:.0f} GiB RAM, "
            f"{platform.system()} {platform.release()}; load average {os.getloadavg()[0]:.1f} at the end")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--size", choices=sorted(SIZES), default="quick")
    p.add_argument("--stores", default="file,s3")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--windows", type=int, default=1000, help="windows per scan on local files")
    p.add_argument("--s3-windows", type=int, default=300, help="windows per scan over S3")
    p.add_argument("--budget-mib", type=int, default=0, help="cache budget (default: see above)")
    p.add_argument("--data", type=Path, default=ROOT / "bench" / "data" / "chunk_cache")
    p.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "CHUNK-CACHE.md")
    args = p.parse_args()

    import zarrkit

    n, chunk = SIZES[args.size]
    threads = len(os.sched_getaffinity(0))
    budget = (args.budget_mib << 20) or 2 * (2 * 2 * (n // chunk)) * chunk**3 * 2
    zarrkit.config.set(num_threads=threads)
    expected = values(n)
    array_path = args.data / f"{args.size}.zarr"
    if not (array_path / "zarr.json").exists():
        array_path.parent.mkdir(parents=True, exist_ok=True)
        zarrkit.create_array(str(array_path), data=expected, chunks=(chunk,) * 3, compressors="auto",
                             overwrite=True)
    stored = sum(f.stat().st_size for f in array_path.rglob("c/**/*") if f.is_file())
    logical = expected.nbytes

    for k in [k for k in os.environ if k.startswith("AWS_")]:
        del os.environ[k]
    os.environ.update(AWS_ACCESS_KEY_ID=KEY, AWS_SECRET_ACCESS_KEY=KEY, AWS_REGION=REGION,
                      AWS_CONFIG_FILE="/nonexistent", AWS_SHARED_CREDENTIALS_FILE="/nonexistent")
    rows = []
    moto = None
    work = Path(tempfile.mkdtemp(prefix="zarrkit-bench-cache-"))
    try:
        for kind in args.stores.split(","):
            endpoint = None
            location = str(array_path)
            count = args.windows
            if kind == "s3":
                from servers import MotoServer
                (work / "moto").mkdir()
                moto = MotoServer(work / "moto")
                endpoint = moto.url
                os.environ["AWS_ENDPOINT_URL_S3"] = endpoint
                location = args.size
                upload(endpoint, array_path, location)
                count = args.s3_windows
            wins = windows(n, count)
            peers = readers(kind, location, endpoint, budget, threads)
            times: dict[str, list[float]] = {name: [] for name in peers}
            cpu_times: dict[str, list[float]] = {name: [] for name in peers}
            last = {}
            counts = {}
            for r in range(args.rounds):
                order = list(peers.items()) if r % 2 == 0 else list(reversed(peers.items()))
                for name, (open_, read) in order:
                    (elapsed, cpu), last[name], counts[name] = scan(open_, read, wins)
                    times[name].append(elapsed)
                    cpu_times[name].append(cpu)
                    print(f"{kind} round {r + 1}: {name}: {elapsed:.2f} s, CPU {cpu:.2f} s", flush=True)
            for name, (open_, read) in peers.items():
                check(name, last[name], read, wins, expected)
            cached_names = [f"zarrkit, cache {budget >> 20} MiB", f"tensorstore, cache pool {budget >> 20} MiB"]
            split = breakdown(peers, cached_names, wins)
            rows.append((kind, len(wins), times, cpu_times, counts[cached_names[0]], split))
    finally:
        zarrkit.config.set({"cache.host_bytes": 0})
        if moto is not None:
            moto.close()
        shutil.rmtree(work, ignore_errors=True)

    mib = budget >> 20
    lines = [
        "# The decoded-chunk cache: a sliding window over a zstd array (S14)",
        "",
        f"Run {datetime.date.today().isoformat()}. Command: `{Path(sys.executable).name} bench/chunk_cache.py "
        f"{' '.join(sys.argv[1:])}`",
        "",
        f"Machine: {machine()}.",
        f"Versions: zarrkit {importlib.metadata.version('zarrkit')}, tensorstore "
        f"{importlib.metadata.version('tensorstore')}, moto {importlib.metadata.version('moto')}, "
        f"numpy {np.__version__}.",
        "",
        f"Array: {n}^3 uint16 ({logical / 2**20:.0f} MiB), chunks {chunk}^3 ({chunk**3 * 2 / 2**20:.0f} MiB), "
        f"zstd level 0 (written by zarrkit), {stored / 2**20:.0f} MiB stored (ratio {logical / stored:.2f}). "
        f"Window 64^3 (512 KiB) in steps of 32, x fastest; cache budget {mib} MiB for both; {threads} threads; "
        f"{args.rounds} rounds, each reader's whole scan timed from a cold cache (median, min-max). "
        "Wall time, and CPU time (of this process's threads; on a shared machine the steadier of the two, "
        "and for S3 it leaves out the server's work).",
        "",
        "| store | windows | reader | wall (s) | ms per window | CPU (s) | zarrkit with cache is faster by (wall / CPU) |",
        "|---|---|---|---|---|---|---|",
    ]
    cached_name = f"zarrkit, cache {mib} MiB"
    for kind, count, times, cpu, *_ in rows:
        cached, cached_cpu = statistics.median(times[cached_name]), statistics.median(cpu[cached_name])
        for name, t in times.items():
            m, c = statistics.median(t), statistics.median(cpu[name])
            ratio = "" if name == cached_name else f"{m / cached:.2f}x / {c / cached_cpu:.2f}x"
            lines.append(f"| {kind} | {count} | {name} | {m:.3f} ({min(t):.3f}-{max(t):.3f}) | "
                         f"{1e3 * m / count:.3f} | {c:.3f} | {ratio} |")
    lines += ["", "Against the goals of issue 18 (medians, wall; CPU):", ""]
    for kind, count, times, cpu, *_ in rows:
        for peer, goal in (("zarrkit, no cache", 5.0), (f"tensorstore, cache pool {mib} MiB", 1.5)):
            verdicts = []
            for what, t in (("wall", times), ("CPU", cpu)):
                ratio = statistics.median(t[peer]) / statistics.median(t[cached_name])
                verdict = "met" if ratio >= goal else f"missed by {goal / ratio:.2f}x"
                verdicts.append(f"{what} {ratio:.2f}x ({verdict})")
            lines.append(f"- {kind}: against {peer}, goal >= {goal:g}x: " + "; ".join(verdicts))
    lines += ["", "zarrkit's cache in its last scan (chunks decoded = misses, chunks copied from it = hits):", ""]
    for kind, count, _, _, (hits, misses), _ in rows:
        lines.append(f"- {kind}: {misses} chunks decoded, {hits} copied, over {count} windows")
    lines += ["", "Where the time goes: one more scan of each cached reader, every window timed; the windows "
              "in which zarrkit's cache decoded chunks (the same chunks are first touched there by both) "
              "against the others, which only copy:", ""]
    for kind, count, *_, split in rows:
        for name, (n_missed, missed_s, hit_ms) in split.items():
            lines.append(f"- {kind}, {name}: {n_missed} windows that decode: {missed_s:.3f} s in all; "
                         f"the other {count - n_missed}: {1e3 * hit_ms:.3f} ms each")
    text = "\n".join(lines) + "\n"
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
