"""Reading a Zarr array from servers: nginx over HTTP and moto's S3 server, on loopback with
no latency or behind a delay that every answer waits (latency; tests/remote/servers.py).

zarrkit against tensorstore and zarr-python (with fsspec and with obstore), and a plain
parallel client (curl --parallel, no decoding) fetching the same objects: the ceiling of what
the server and the network deliver.

    .venv/bin/python bench/remote/remote_read.py [--reps 5] [--concurrency 64] [--servers http,s3]
        [--latency-ms 0,20] [--size-mib 32] [--s3-size-mib N] [--layouts chunks,shards]
        [--selections whole,crop] [--budget-s 0]

Request concurrency: zarrkit, zarr-python (async.concurrency) and curl use --concurrency;
tensorstore runs twice, with its default (a shared limit of 32 requests) and with its limit
raised to --concurrency; zarrkit runs a second time at tensorstore's default of 32 (in a
child process: the transport reads ZARRKIT_HTTP_CONCURRENCY once per process). So the table
shows which part of a difference is the number of requests in flight and which the engine.

Selections: "whole" reads the array whole; "crop" reads a box of 256 x 128 x 128 across
shard borders in every axis (a lazy array's typical request: it touches 8 shards in part, or
16 chunks), where the time is mostly round trips (metadata, shard indexes, then the data)
and coalescing the inner chunks' byte ranges counts; crops have no raw fetch row (what the
server alone serves is not one set of objects there).

Each reader opens the array and reads it (or the crop) once to warm up (connections), then `--reps`
times; the tables show the median and the spread (min-max). The values of every reader's
last read are checked against the values written, outside the timing. With latency, the
raw fetch runs twice: directly, and through the delaying server, whose overhead is what it
adds beyond the delay itself (one delay per wave of --concurrency requests).

The peers come from requirements/bench.txt (obstore) and requirements/remote.txt (moto,
s3fs); latency needs nginx's echo module (scripts/setup). The tables go to
bench/remote/last-run.md (--out) and to stdout, the raw times to --json when given;
bench/remote/RESULTS.md keeps the runs that were analysed, with notes.
"""

import argparse
import hashlib
import importlib.metadata
import json
import math
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

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "remote"))

REGION = "us-east-1"
KEY = "testing"  # moto accepts any credentials
BUCKET = "bench"
TENSORSTORE_DEFAULT_CONCURRENCY = 32  # its "shared" limit, for HTTP and S3 alike
ZARR_DEFAULT_CONCURRENCY = 10  # zarr-python's async.concurrency
LAYOUTS = {
    "chunks": ("chunks 64^3 (512 KiB each), zstd 1", dict(chunks=(64, 64, 64))),
    "shards": ("shards 128^3 of 32^3 inner chunks (ranged reads), zstd 1",
               dict(chunks=(32, 32, 32), shards=(128, 128, 128))),
}


def shape_for(size_mib):
    if size_mib % 16:
        raise SystemExit("--size-mib must be a multiple of 16 (whole shards of 128^3 uint16)")
    return (size_mib * 8, 256, 256)  # uint16: 128 KiB per plane


def values(shape):
    """A smooth field plus noise (compresses like measured data), made 64 planes at a time."""
    rng = np.random.default_rng(7)
    out = np.empty(shape, dtype="uint16")
    y, x = np.indices(shape[1:], dtype=np.float32)
    plane = 20000 + 8000 * np.sin(x / 40) * np.cos(y / 33)
    for z0 in range(0, shape[0], 64):
        z = np.arange(z0, min(z0 + 64, shape[0]), dtype=np.float32)[:, None, None]
        out[z0:z0 + 64] = (plane + 50 * (z % 256) + rng.normal(0, 30, (len(z),) + shape[1:])).astype("uint16")
    return out


def selection(name, shape):
    """The slices a selection reads: None for the whole array."""
    if name == "whole":
        return None
    if name == "crop":
        if shape[0] < 256:
            raise SystemExit("a crop needs an array of 32 MiB or more")
        middle = shape[0] // 2 // 128 * 128  # a shard border (shards are 128 planes)
        return (slice(middle - 128, middle + 128), slice(64, 192), slice(64, 192))
    raise SystemExit(f"unknown selection {name!r}")


def as_text(sel):
    return "" if sel is None else ",".join(f"{s.start}:{s.stop}" for s in sel)


def from_text(text):
    return None if not text else tuple(slice(*map(int, part.split(":"))) for part in text.split(","))


def digest(array):
    return hashlib.blake2b(np.ascontiguousarray(array).data, digest_size=16).hexdigest()


def timed(fn, reps):
    """Times of `reps` calls after one warm-up call, and the last call's result."""
    result = fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return times, result


def child_read(url, reps, sel):
    """--child-read: zarrkit in this process, with the environment's concurrency."""
    import zarrkit
    times, result = timed(lambda: zarrkit.open_array(url, mode="r")[sel or ...], reps)
    print(json.dumps({"times": times, "digest": digest(result)}))


def zarrkit_in_child(url, concurrency, sel, threads=None):
    """zarrkit reading `url` in a child process with ZARRKIT_HTTP_CONCURRENCY=concurrency
    (and ZARRKIT_HTTP_THREADS=threads)."""
    def run(reps):
        env = dict(os.environ, ZARRKIT_HTTP_CONCURRENCY=str(concurrency))
        if threads is not None:
            env["ZARRKIT_HTTP_THREADS"] = str(threads)
        proc = subprocess.run([sys.executable, __file__, "--child-read", url, "--reps", str(reps),
                               "--child-selection", as_text(sel)], env=env,
                              capture_output=True, text=True, check=True)
        answer = json.loads(proc.stdout.strip().splitlines()[-1])
        return answer["times"], answer["digest"]
    return run


def peers(kind, url, endpoint, name, concurrency, sel):
    """The readers: name -> (requests in flight, fn returning the array) or, for a reader
    that runs in a child process, (requests in flight, run(reps) -> (times, digest))."""
    import obstore
    import tensorstore as ts
    import zarr
    import zarrkit

    target = url if kind == "http" else f"s3://{BUCKET}/{name}"
    index = sel or ...

    def zk():
        return zarrkit.open_array(target, mode="r")[index]

    def ts_reader(limit):
        if kind == "http":
            kvstore = {"driver": "http", "base_url": url + "/"}
            resource = "http_request_concurrency"
        else:
            kvstore = {"driver": "s3", "bucket": BUCKET, "path": name + "/", "endpoint": endpoint,
                       "aws_region": REGION}
            resource = "s3_request_concurrency"
        context = {"cache_pool": {"total_bytes_limit": 0}}
        if limit is not None:
            context[resource] = {"limit": limit}
        spec = {"driver": "zarr3", "kvstore": kvstore, "context": context}
        return lambda: ts.open(spec, read=True).result()[index].read().result()

    def zarr_fsspec():
        with zarr.config.set({"async.concurrency": concurrency}):
            if kind == "http":
                store = zarr.storage.FsspecStore.from_url(url, read_only=True)
            else:
                store = zarr.storage.FsspecStore.from_url(
                    f"s3://{BUCKET}/{name}", read_only=True,
                    storage_options={"endpoint_url": endpoint, "key": KEY, "secret": KEY,
                                     "client_kwargs": {"region_name": REGION}})
            return zarr.open_array(store, mode="r")[index]

    def zarr_obstore():
        with zarr.config.set({"async.concurrency": concurrency}):
            if kind == "http":
                inner = obstore.store.HTTPStore.from_url(url, client_options={"allow_http": True})
            else:
                inner = obstore.store.S3Store(BUCKET, prefix=name, endpoint=endpoint, region=REGION,
                                              access_key_id=KEY, secret_access_key=KEY,
                                              client_options={"allow_http": True})
            return zarr.open_array(zarr.storage.ObjectStore(inner, read_only=True), mode="r")[index]

    readers = {
        "zarrkit": (concurrency, zk),
        "tensorstore (default)": (TENSORSTORE_DEFAULT_CONCURRENCY, ts_reader(None)),
        f"tensorstore (limit {concurrency})": (concurrency, ts_reader(concurrency)),
        "zarr-python (fsspec)": (concurrency, zarr_fsspec),
        "zarr-python (obstore)": (concurrency, zarr_obstore),
        f"zarrkit ({TENSORSTORE_DEFAULT_CONCURRENCY} in flight)": (TENSORSTORE_DEFAULT_CONCURRENCY,
                                                                   zarrkit_in_child(target, TENSORSTORE_DEFAULT_CONCURRENCY, sel)),
    }
    # The same read as "zarrkit" but in a fresh process: what the process it runs in (the peers'
    # libraries and threads loaded, memory used by their reads) costs it.
    readers[f"zarrkit ({concurrency} in flight, own process)"] = (concurrency,
                                                                zarrkit_in_child(target, concurrency, sel))
    if (os.cpu_count() or 1) >= 8:
        # Its default there is several event loops receiving responses (one per 4 hardware
        # threads, at most 4); this row shows what they add.
        readers["zarrkit (1 receiving thread)"] = (concurrency, zarrkit_in_child(target, concurrency, sel, threads=1))
    extra = os.environ.get("ZARRKIT_BENCH_RECEIVING_THREADS")  # e.g. "4,8": rows with more of them
    for threads in (int(t) for t in extra.split(",")) if extra else ():
        readers[f"zarrkit ({threads} receiving threads)"] = (concurrency,
                                                              zarrkit_in_child(target, concurrency, sel, threads=threads))
    return readers


def curl_fetch(urls, concurrency, signed):
    # S3: curl signs each request itself (SigV4), as any S3 client must.
    auth = ["--aws-sigv4", f"aws:amz:{REGION}:s3", "--user", f"{KEY}:{KEY}"] if signed else []
    curl = os.environ.get("ZARRKIT_BENCH_CURL", "curl")

    def fetch():
        subprocess.run([curl, "-s", "--fail", *auth, "--parallel", "--parallel-max", str(concurrency),
                        "--parallel-immediate", *[arg for u in urls for arg in ("-o", "/dev/null", u)]],
                       check=True, stderr=subprocess.DEVNULL)
    return fetch


def upload(endpoint, local_root):
    """Puts every file under local_root into BUCKET, keys relative to local_root."""
    import boto3
    from boto3.s3.transfer import TransferConfig
    s3 = boto3.client("s3", endpoint_url=endpoint, region_name=REGION, aws_access_key_id=KEY,
                      aws_secret_access_key=KEY)
    s3.create_bucket(Bucket=BUCKET)
    single = TransferConfig(multipart_threshold=1 << 30)  # whole objects: S3 keeps their checksums
    for path in local_root.rglob("*"):
        if path.is_file():
            s3.upload_file(str(path), BUCKET, path.relative_to(local_root).as_posix(), Config=single)


def spread(times):
    return f"{min(times):.3f}-{max(times):.3f}"


def table(case, results, raw, logical):
    """Markdown lines for one (server, latency, layout, selection) case."""
    read = "whole" if case["selection"] == "whole" else f"a crop [{case['slices']}]"
    lines = [f"\n### {case['title']}: {read}\n",
             f"{case['objects']} objects, {case['stored'] / 2**20:.1f} MiB stored, {logical / 2**20:.0f} MiB logical "
             f"read; "
             f"median of {case['reps']} (spread min-max); load average {case['load'][0]:.1f} before, "
             f"{case['load'][1]:.1f} after.\n",
             "| reader | requests in flight | time (s) | spread (s) | logical MB/s | zarrkit speed-up |",
             "|---|---|---|---|---|---|"]
    zk = statistics.median(results["zarrkit"]["times"])
    for peer, r in results.items():
        t = statistics.median(r["times"])
        lines.append(f"| {peer} | {r['concurrency']} | {t:.3f} | {spread(r['times'])} | {logical / t / 1e6:.0f} | "
                     f"{t / zk:.2f}x |")
    for label, times in raw.items():
        t = statistics.median(times)
        lines.append(f"| {label} | {case['concurrency']} | {t:.3f} | {spread(times)} | "
                     f"{case['stored'] / t / 1e6:.0f} (stored) | {t / zk:.2f}x |")
    others = {p: statistics.median(r["times"]) for p, r in results.items() if not p.startswith("zarrkit")}
    defaults = {p: t for p, t in others.items() if not p.startswith("tensorstore (limit")}
    best_default = min(defaults, key=defaults.get)
    best = min(others, key=others.get)
    lines.append(f"\nzarrkit vs the best peer as configured above ({best_default}): "
                 f"**{defaults[best_default] / zk:.2f}x**; vs the best peer with tensorstore's limit raised "
                 f"({best}): **{others[best] / zk:.2f}x**.")
    if not raw:
        return lines
    fetch = statistics.median(raw[case["raw_label"]])
    lines[-1] += f" zarrkit's time is {zk / fetch:.2f}x the raw parallel fetch."
    if case["latency_ms"]:
        direct = statistics.median(raw["curl (raw, no delay)"])
        ideal = direct + case["waves"] * case["latency_ms"] / 1000
        lines.append(f"The delaying server: the raw fetch through it takes {fetch:.3f} s, {fetch - direct:.3f} s "
                     f"more than without it; {case['waves']} waves of {case['concurrency']} requests at "
                     f"{case['latency_ms']} ms account for {ideal - direct:.3f} s of that (overhead beyond the "
                     f"delay: {fetch - ideal:+.3f} s).")
    return lines


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--servers", default="http,s3")
    parser.add_argument("--latency-ms", default="0", help="comma-separated delays before each answer")
    parser.add_argument("--size-mib", type=int, default=32)
    parser.add_argument("--s3-size-mib", type=int, help="the array read from moto (default: --size-mib); "
                        "moto serves far slower than nginx")
    parser.add_argument("--layouts", default="chunks,shards")
    parser.add_argument("--selections", default="whole", help="whole, crop (see above)")
    parser.add_argument("--server-workers", type=int, default=1,
                        help="nginx worker processes (the servers in front of the data and of moto)")
    parser.add_argument("--budget-s", type=float, default=0,
                        help="skip the cases left once this many seconds have passed (0: no limit)")
    # A file of its own: RESULTS.md holds notes written by hand around the tables.
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "remote" / "last-run.md")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--child-read", help=argparse.SUPPRESS)
    parser.add_argument("--child-selection", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child_read:
        return child_read(args.child_read, args.reps, from_text(args.child_selection))

    import zarr
    from servers import MotoServer, Nginx

    started = time.monotonic()
    servers = args.servers.split(",")
    latencies = [int(x) for x in args.latency_ms.split(",")]
    layouts = args.layouts.split(",")
    selections = args.selections.split(",")
    os.environ["ZARRKIT_HTTP_CONCURRENCY"] = str(args.concurrency)
    # zarrkit and tensorstore find moto's credentials and region here; no AWS files of the machine.
    for k in [k for k in os.environ if k.startswith("AWS_")]:
        del os.environ[k]
    os.environ.update(AWS_ACCESS_KEY_ID=KEY, AWS_SECRET_ACCESS_KEY=KEY, AWS_REGION=REGION,
                      AWS_CONFIG_FILE="/nonexistent", AWS_SHARED_CREDENTIALS_FILE="/nonexistent")

    sizes = {"http": args.size_mib, "s3": args.s3_size_mib or args.size_mib}
    work = Path(tempfile.mkdtemp(prefix="zarrkit-bench-remote-"))
    lines, records, skipped = [], [], []
    running = []
    arrays = {}  # size in MiB -> (folder served, digest of the values, logical bytes, shape)

    def write_out():
        versions = ", ".join(f"{p} {importlib.metadata.version(p)}"
                             for p in ("zarr", "tensorstore", "obstore", "s3fs", "moto"))
        shapes = "; ".join(f"{server}: {arrays[sizes[server]][2]} uint16 ({sizes[server]} MiB)"
                           for server in servers if sizes[server] in arrays)
        header = (f"# Reading from servers on loopback (HTTP and S3)\n\nCommand: `{Path(sys.executable).name} "
                  f"bench/remote/remote_read.py {' '.join(sys.argv[1:])}`\n\nMachine: {platform.node()}, "
                  f"{os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f} at the end. Arrays: {shapes}, "
                  f"a smooth field + noise. Requests in flight: zarrkit (ZARRKIT_HTTP_CONCURRENCY), zarr-python "
                  f"(async.concurrency; its default is {ZARR_DEFAULT_CONCURRENCY}) and curl at {args.concurrency}; "
                  f"tensorstore at its default ({TENSORSTORE_DEFAULT_CONCURRENCY}) and raised. nginx worker processes: "
                  f"{args.server_workers}. Times include opening the array. Versions: {versions}.\n")
        if skipped:
            header += f"\nSkipped (--budget-s {args.budget_s:.0f} spent): {'; '.join(skipped)}.\n"
        text = header + "\n".join(lines) + "\n"
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
        if args.json:
            args.json.write_text(json.dumps({"sizes_mib": sizes, "concurrency": args.concurrency, "cases": records,
                                             "machine": platform.node(), "cores": os.cpu_count(),
                                             "skipped": skipped}, indent=1))
        return text

    try:
        for size in sorted({sizes[server] for server in servers}):
            shape = shape_for(size)
            expected = values(shape)
            www = work / f"www{size}"
            www.mkdir()
            for layout in layouts:
                a = zarr.create_array(str(www / f"{layout}.zarr"), shape=shape, dtype="uint16",
                                      compressors=zarr.codecs.ZstdCodec(level=1), **LAYOUTS[layout][1])
                a[...] = expected
            # Per selection: the digest of the values it reads and their size in bytes.
            read = {sel: expected[selection(sel, shape) or ...] for sel in selections}
            arrays[size] = (www, {sel: (digest(v), v.nbytes) for sel, v in read.items()}, shape)
            del read
            del expected
        moto = None
        if "s3" in servers:
            (work / "moto").mkdir()
            moto = MotoServer(work / "moto")
            running.append(moto)
            upload(moto.url, arrays[sizes["s3"]][0])
        for latency in latencies:
            for server in servers:
                www, expected_reads, shape = arrays[sizes[server]]
                folder = work / f"{server}-{latency}"
                folder.mkdir()
                delayed = None
                if server == "http":
                    workers = args.server_workers
                    front = (Nginx(folder, www, delay_ms=latency, workers=workers) if latency
                             else Nginx(folder, www, workers=workers))
                    direct_base = None
                    if latency:
                        (folder / "direct").mkdir()
                        direct = Nginx(folder / "direct", www, workers=workers)
                        running.append(direct)
                        direct_base = direct.url
                    running.append(front)
                    base, endpoint = front.url, None
                    heading = f"HTTP: nginx on loopback, {latency} ms before each answer"
                else:
                    endpoint = moto.url
                    if latency:
                        delayed = Nginx(folder, None, delay_ms=latency, upstream=f"127.0.0.1:{moto.port}",
                                        workers=args.server_workers)
                        running.append(delayed)
                        endpoint = delayed.url
                    direct_base = f"{moto.url}/{BUCKET}" if latency else None
                    base = f"{endpoint}/{BUCKET}"
                    heading = (f"S3: moto's server on loopback (path-style, signed requests), {latency} ms before each "
                               f"answer" + (" (nginx in front of moto)" if latency else ""))
                lines.append(f"\n## {heading}")
                os.environ["AWS_ENDPOINT_URL_S3"] = endpoint or ""
                for layout, sel_name in [(layout, sel) for layout in layouts for sel in selections]:
                    title, _ = LAYOUTS[layout]
                    if args.budget_s and time.monotonic() - started > args.budget_s:
                        skipped.append(f"{server}, {latency} ms, {layout}, {sel_name}")
                        continue
                    sel = selection(sel_name, shape)
                    expected_digest, logical = expected_reads[sel_name]
                    name = f"{layout}.zarr"
                    files = sorted(p for p in (www / name).rglob("*") if p.is_file() and p.name != "zarr.json")
                    stored = sum(p.stat().st_size for p in files)
                    load_before = os.getloadavg()[0]
                    results = {}
                    for peer, (concurrency, fn) in peers(server, f"{base}/{name}", endpoint, name,
                                                         args.concurrency, sel).items():
                        if peer.startswith("zarrkit ("):
                            times, got = fn(args.reps)
                        else:
                            times, array = timed(fn, args.reps)
                            got = digest(array)
                            del array
                        if got != expected_digest:
                            raise SystemExit(f"{peer} read wrong values ({server}, {latency} ms, {layout}, {sel_name})")
                        results[peer] = {"concurrency": concurrency, "times": times}
                    keys = [p.relative_to(www / name).as_posix() for p in files]
                    raw = {}
                    raw_label = "curl (raw objects, no decoding" + ("; signed" if server == "s3" else "") + ")"
                    if sel is None:
                        raw[raw_label] = timed(curl_fetch([f"{base}/{name}/{k}" for k in keys], args.concurrency,
                                                          server == "s3"), args.reps)[0]
                    if latency and sel is None:
                        raw["curl (raw, no delay)"] = timed(curl_fetch([f"{direct_base}/{name}/{k}" for k in keys],
                                                                       args.concurrency, server == "s3"), args.reps)[0]
                    case = {"server": server, "latency_ms": latency, "layout": layout, "title": title,
                            "selection": sel_name, "slices": as_text(sel),
                            "objects": len(files), "stored": stored, "reps": args.reps,
                            "concurrency": args.concurrency, "waves": math.ceil(len(files) / args.concurrency),
                            "load": (load_before, os.getloadavg()[0]), "raw_label": raw_label}
                    lines += table(case, results, raw, logical)
                    records.append({**case, "size_mib": sizes[server], "results": results, "raw": raw})
                    print("\n".join(lines[-(len(results) + len(raw) + 8):]), flush=True)
                    write_out()  # after each case: a run cut short keeps what it measured
                for process in reversed(running):
                    if process is not moto:
                        process.close()
                running = [moto] if moto else []
    finally:
        for process in running:
            process.close()
        shutil.rmtree(work, ignore_errors=True)

    print(write_out())


if __name__ == "__main__":
    main()
