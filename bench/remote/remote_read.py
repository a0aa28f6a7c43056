"""Reading a Zarr array from servers on loopback: nginx over HTTP and moto's S3 server.

zarrkit against tensorstore and zarr-python (with fsspec and with obstore), and a plain
parallel client (curl --parallel, no decoding) fetching the same objects: the ceiling of what
the server and the loopback deliver.

    .venv/bin/python bench/remote/remote_read.py [--reps 5] [--concurrency 64] [--servers http,s3]

The peers come from requirements/bench.txt (obstore) and requirements/remote.txt (moto, s3fs).
Small on purpose (32 MiB arrays): the development machine is shared. Each peer reads the
whole array once to warm up (connections, metadata), then `--reps` times; the tables show the
median. Every read is checked against the values written. The tables go to
bench/remote/last-run.md (--out) and to stdout; bench/remote/RESULTS.md keeps the runs that
were analysed, with notes.
"""

import argparse
import importlib.metadata
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
from servers import MotoServer, Nginx  # noqa: E402

SHAPE = (256, 256, 256)  # uint16: 32 MiB
LAYOUTS = {
    "chunks 64^3 (64 objects of 512 KiB), zstd 1": dict(chunks=(64, 64, 64)),
    "shards 128^3 of 32^3 inner chunks (8 objects, ranged reads), zstd 1": dict(chunks=(32, 32, 32),
                                                                                shards=(128, 128, 128)),
}
REGION = "us-east-1"
KEY = "testing"  # moto accepts any credentials
BUCKET = "bench"


def values():
    rng = np.random.default_rng(7)
    z, y, x = np.indices(SHAPE, dtype=np.float32)
    smooth = 20000 + 8000 * np.sin(x / 40) * np.cos(y / 33) + 50 * z
    return (smooth + rng.normal(0, 30, SHAPE)).astype("uint16")


def timed(fn, reps):
    fn()  # warm-up
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return times


def http_peers(base, name, expected, concurrency):
    """Readers of the array at {base}/{name} served by nginx."""
    import obstore
    import zarrkit

    url = f"{base}/{name}"

    def zk():
        assert np.array_equal(zarrkit.open_array(url, mode="r")[...], expected)

    spec = {"driver": "zarr3", "kvstore": {"driver": "http", "base_url": url + "/"},
            "context": {"cache_pool": {"total_bytes_limit": 0}}}

    def tensorstore():
        assert np.array_equal(ts.open(spec, read=True).result().read().result(), expected)

    def zarr_fsspec():
        with zarr.config.set({"async.concurrency": concurrency}):
            store = zarr.storage.FsspecStore.from_url(url, read_only=True)
            assert np.array_equal(zarr.open_array(store, mode="r")[...], expected)

    def zarr_obstore():
        with zarr.config.set({"async.concurrency": concurrency}):
            store = zarr.storage.ObjectStore(obstore.store.HTTPStore.from_url(url, client_options={"allow_http": True}),
                                             read_only=True)
            assert np.array_equal(zarr.open_array(store, mode="r")[...], expected)

    return {"zarrkit": zk, "tensorstore": tensorstore, "zarr-python (fsspec)": zarr_fsspec,
            "zarr-python (obstore)": zarr_obstore}


def s3_peers(endpoint, name, expected, concurrency):
    """Readers of the array at s3://BUCKET/{name} on moto."""
    import obstore
    import zarrkit

    def zk():
        assert np.array_equal(zarrkit.open_array(f"s3://{BUCKET}/{name}", mode="r")[...], expected)

    spec = {"driver": "zarr3", "kvstore": {"driver": "s3", "bucket": BUCKET, "path": name + "/",
                                           "endpoint": endpoint, "aws_region": REGION},
            "context": {"cache_pool": {"total_bytes_limit": 0}}}

    def tensorstore():
        assert np.array_equal(ts.open(spec, read=True).result().read().result(), expected)

    def zarr_fsspec():
        with zarr.config.set({"async.concurrency": concurrency}):
            store = zarr.storage.FsspecStore.from_url(
                f"s3://{BUCKET}/{name}", read_only=True,
                storage_options={"endpoint_url": endpoint, "key": KEY, "secret": KEY,
                                 "client_kwargs": {"region_name": REGION}})
            assert np.array_equal(zarr.open_array(store, mode="r")[...], expected)

    def zarr_obstore():
        with zarr.config.set({"async.concurrency": concurrency}):
            s3 = obstore.store.S3Store(BUCKET, prefix=name, endpoint=endpoint, region=REGION, access_key_id=KEY,
                                       secret_access_key=KEY, client_options={"allow_http": True})
            store = zarr.storage.ObjectStore(s3, read_only=True)
            assert np.array_equal(zarr.open_array(store, mode="r")[...], expected)

    return {"zarrkit": zk, "tensorstore": tensorstore, "zarr-python (fsspec)": zarr_fsspec,
            "zarr-python (obstore)": zarr_obstore}


def curl_all(urls, concurrency, signed=False):
    # S3: curl signs each request itself (SigV4), as any S3 client must.
    auth = ["--aws-sigv4", f"aws:amz:{REGION}:s3", "--user", f"{KEY}:{KEY}"] if signed else []
    def fetch():
        subprocess.run(["curl", "-s", "--fail", *auth, "--parallel", "--parallel-max", str(concurrency),
                        "--parallel-immediate",
                        *[arg for u in urls for arg in ("-o", "/dev/null", u)]], check=True, stderr=subprocess.DEVNULL)
    return fetch


def upload(endpoint, local_root):
    """Puts every file under local_root into BUCKET, keys relative to local_root."""
    import boto3
    s3 = boto3.client("s3", endpoint_url=endpoint, region_name=REGION, aws_access_key_id=KEY,
                      aws_secret_access_key=KEY)
    s3.create_bucket(Bucket=BUCKET)
    for path in local_root.rglob("*"):
        if path.is_file():
            s3.upload_file(str(path), BUCKET, path.relative_to(local_root).as_posix())


def table(title, results, ceiling, stored, logical, nfiles, reps):
    lines = [f"\n### {title}\n\n{nfiles} objects, {stored / 2**20:.1f} MiB stored, "
             f"{logical / 2**20:.0f} MiB logical; median of {reps}.\n",
             "| reader | time (s) | logical MB/s | zarrkit speed-up |", "|---|---|---|---|"]
    for peer, t in results.items():
        lines.append(f"| {peer} | {t:.3f} | {logical / t / 1e6:.0f} | {t / results['zarrkit']:.2f}x |")
    lines.append(f"| curl --parallel (raw objects, no decoding; signed on S3) | {ceiling:.3f} | "
                 f"{stored / ceiling / 1e6:.0f} (stored) | {ceiling / results['zarrkit']:.2f}x |")
    best = min(results[p] for p in results if p != "zarrkit")
    lines.append(f"\nzarrkit vs the best peer: **{best / results['zarrkit']:.2f}x**; "
                 f"zarrkit's time is {results['zarrkit'] / ceiling:.2f}x the raw parallel fetch.")
    return lines


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--servers", default="http,s3")
    # A file of its own: RESULTS.md holds notes written by hand around the tables.
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "remote" / "last-run.md")
    args = parser.parse_args()
    servers = args.servers.split(",")
    os.environ["ZARRKIT_HTTP_CONCURRENCY"] = str(args.concurrency)
    # zarrkit and tensorstore find moto's credentials and region here; no AWS files of the machine.
    for k in [k for k in os.environ if k.startswith("AWS_")]:
        del os.environ[k]
    os.environ.update(AWS_ACCESS_KEY_ID=KEY, AWS_SECRET_ACCESS_KEY=KEY, AWS_REGION=REGION,
                      AWS_CONFIG_FILE="/nonexistent", AWS_SHARED_CREDENTIALS_FILE="/nonexistent")

    expected = values()
    logical = expected.nbytes
    work = Path(tempfile.mkdtemp(prefix="zarrkit-bench-remote-"))
    lines = []
    try:
        www = work / "www"
        www.mkdir()
        for i, layout in enumerate(LAYOUTS.values()):
            a = zarr.create_array(str(www / f"a{i}.zarr"), shape=SHAPE, dtype="uint16",
                                  compressors=zarr.codecs.ZstdCodec(level=1), **layout)
            a[...] = expected
        for server in servers:
            if server == "http":
                process = Nginx(work, www)
                base, make_peers = process.url, http_peers
                lines.append("\n## HTTP: nginx on loopback")
            else:
                (work / "moto").mkdir()
                process = MotoServer(work / "moto")
                os.environ["AWS_ENDPOINT_URL_S3"] = process.url
                upload(process.url, www)
                base, make_peers = f"{process.url}/{BUCKET}", s3_peers
                lines.append("\n## S3: moto's server on loopback (path-style, signed requests)")
            try:
                for i, title in enumerate(LAYOUTS):
                    name = f"a{i}.zarr"
                    files = sorted(p for p in (www / name).rglob("*") if p.is_file() and p.name != "zarr.json")
                    stored = sum(p.stat().st_size for p in files)
                    target = base if server == "http" else process.url
                    peers = make_peers(target, name, expected, args.concurrency)
                    results = {peer: statistics.median(timed(fn, args.reps)) for peer, fn in peers.items()}
                    urls = [f"{base}/{name}/{p.relative_to(www / name).as_posix()}" for p in files]
                    ceiling = statistics.median(timed(curl_all(urls, args.concurrency, server == "s3"), args.reps))
                    lines += table(title, results, ceiling, stored, logical, len(files), args.reps)
            finally:
                process.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)

    header = (f"# Reading from servers on loopback (HTTP and S3)\n\nCommand: `.venv/bin/python "
              f"bench/remote/remote_read.py --reps {args.reps} --concurrency {args.concurrency} --servers "
              f"{args.servers}`\n\nMachine: {platform.node()}, {os.cpu_count()} cores (shared; load average "
              f"{os.getloadavg()[0]:.1f} at the end). Request concurrency {args.concurrency} for zarrkit "
              f"(ZARRKIT_HTTP_CONCURRENCY), zarr-python (async.concurrency) and curl; tensorstore's defaults. "
              f"Array {SHAPE} uint16 (smooth field + noise). Versions: zarr {zarr.__version__}, tensorstore "
              f"{importlib.metadata.version('tensorstore')}, obstore {importlib.metadata.version('obstore')}.\n")
    text = header + "\n".join(lines) + "\n"
    args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
