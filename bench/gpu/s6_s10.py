"""Scenarios S6 (storage -> device memory) and S10 (ML-loader random batches) of
../shared/docs/BENCHMARKS.md, on the GPU machine, all peers in one run on the same files.

Peers, each reading into GPU memory (a CuPy array) and checked against the written values:
  zarrkit           zarrkit.config.enable_gpu(): chunks read into pinned memory, decoded on the GPU
  zarrkit gds (compat), zarrkit gds (cufile)
                    the same through zarrkit.storage.GDSStore: its compat path (I/O threads, pinned
                    pieces, overlapped copies) or cuFile (where libcufile loads; in its own
                    compatibility mode without the nvidia-fs driver); uncompressed chunks go from
                    the files straight into device memory, others as for zarrkit
  zarr+kvikio       zarr-python 3 with kvikio's GDSStore and zarr.config.enable_gpu()
  zarr+zarrkit pipeline  zarr-python 3 with enable_gpu() and zarrkit's codec pipeline (not a peer:
                    zarrkit under zarr-python's API, against zarr-python's own pipeline above)
  tensorstore+copy  tensorstore read into host memory, then copied to the device (pageable, and
                    staged through a pinned buffer; the faster is the peer's figure)
  h5py+copy         (S10, uncompressed only) h5py read, then copied to the device
S10 also times host reads (zarrkit and tensorstore into NumPy).
The "gds" part (--only gds) times the raw store: every chunk file of an array into one
device buffer, through GDSStore.read_into_device (compat, at several piece sizes, and
cuFile), kvikio's CuFile.pread (its thread pool, KVIKIO_NTHREADS) and plain pread by 16
threads into pinned memory followed by one copy.

  python bench/gpu/s6_s10.py --dir /tmp/s6 --json out.jsonl [--size small|full] [--only s6,s10,gds]

Logical GB/s = decoded bytes of the selection per second; "x" columns: the peer's median time
over zarrkit's. Cold reads drop each file of the store from the page cache first
(posix_fadvise DONTNEED), for every peer alike. Without CuPy (a machine without a GPU) the
device peers are skipped and the host parts still run, which checks the script itself.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

import zarrkit

try:
    import cupy

    HAVE_GPU = zarrkit.config.gpu_available()
except ImportError:  # pragma: no cover - depends on the machine
    cupy = None
    HAVE_GPU = False

THREADS = os.cpu_count() or 1
# cuFile forced (mode cufile) only where the nvidia-fs driver is loaded, or when asked for:
# without it libcufile runs in its compatibility mode, which on the H100 machine refused every
# file and once aborted the process (an assertion inside libcufile) when forced here.
GDS_MODES = ("compat", "cufile") if (os.path.exists("/proc/driver/nvidia-fs/version")
                                     or os.environ.get("ZARRKIT_BENCH_CUFILE") == "1") else ("compat",)


# ---- data ----------------------------------------------------------------------------------

def family(name: str, shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    """N: smooth field + noise rounded to 1/64 (blosc-lz4 ratio about 3); P: a smooth
    polynomial pattern, rounded coarsely (ratio above 20)."""
    xp = cupy if cupy is not None and HAVE_GPU else np
    rows = int(np.prod(shape[:-1]))
    x = xp.linspace(0.0, 1.0, shape[-1], dtype=xp.float32)[None, :]
    y = xp.linspace(0.0, 1.0, rows, dtype=xp.float32)[:, None]
    if name == "N":
        rng = xp.random.default_rng(seed) if xp is np else cupy.random.default_rng(seed)
        v = xp.sin(6.0 * x) * xp.cos(3.0 * y * 64.0) * 10.0 + rng.standard_normal((rows, shape[-1]), dtype=xp.float32) * 0.05
        v = xp.round(v * 64.0) / 64.0
    else:
        v = xp.round((x * x * 3.0 + y * 2.0 - x * y) * 16.0) / 16.0
    v = v.astype(xp.float32).reshape(shape)
    return v.get() if xp is not np else v


def drop_cache(path: Path) -> None:
    for root, _, files in os.walk(path):
        for f in files:
            fd = os.open(os.path.join(root, f), os.O_RDONLY)
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)


def store_bytes(path: Path) -> int:
    return sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(path) for f in fs)


# ---- timing --------------------------------------------------------------------------------

def sync() -> None:
    if HAVE_GPU:
        cupy.cuda.runtime.deviceSynchronize()


def timed(run: Callable[[], Any], reps: int, before: Callable[[], None] | None = None) -> list[float]:
    times = []
    for _ in range(reps):
        if before:
            before()
        sync()
        t0 = time.perf_counter()
        result = run()
        sync()
        times.append(time.perf_counter() - t0)
        del result
    return times


def same(result: Any, expected: Any) -> bool:
    if cupy is not None and isinstance(result, cupy.ndarray):
        if isinstance(expected, np.ndarray):
            expected = cupy.asarray(expected)
        return bool(cupy.array_equal(result, expected))
    return bool(np.array_equal(np.asarray(result), expected if isinstance(expected, np.ndarray) else expected.get()))


class Recorder:
    def __init__(self, json_path: str | None) -> None:
        self.rows: list[dict[str, Any]] = []
        self.json_path = json_path

    def add(self, **row: Any) -> None:
        self.rows.append(row)
        if self.json_path:
            with open(self.json_path, "a") as f:
                f.write(json.dumps(row) + "\n")

    def measure(self, scenario: str, case: str, peer: str, logical: int, reps: int, run: Callable[[], Any],
                expected: Any, before: Callable[[], None] | None = None, **extra: Any) -> None:
        row: dict[str, Any] = {"scenario": scenario, "case": case, "peer": peer, "logical_bytes": logical, **extra}
        try:
            if before:
                before()
            first = run()  # warm-up and check
            sync()
            row["ok"] = same(first, expected)
            del first
            times = timed(run, reps, before)
            med = statistics.median(times)
            row.update(reps=reps, median_s=med, min_s=min(times), max_s=max(times), gbs=logical / med / 1e9)
        except Exception as e:  # a peer that cannot read a case says why in the table
            row["error"] = f"{type(e).__name__}: {e}"[:300]
        self.add(**row)
        print(f"  {case:34s} {peer:22s} " + (
            f"{row['median_s']:.4f} s  {row['gbs']:7.2f} GB/s  ok={row['ok']}" if "median_s" in row else row["error"]),
            flush=True)


# ---- peers ---------------------------------------------------------------------------------

def zarrkit_device(path: Path, selection: Any) -> Callable[[], Any]:
    a = zarrkit.open_array(str(path), mode="r")

    def run() -> Any:
        with zarrkit.config.enable_gpu():
            return a[selection] if not isinstance(selection, list) else a.oindex[selection]
    return run


def zarrkit_gds_device(path: Path, selection: Any, mode: str) -> tuple[Callable[[], Any], dict[str, Any], Any]:
    """zarrkit through a GDSStore in `mode`; also says which path its device reads take."""
    store = zarrkit.storage.GDSStore(str(path), read_only=True, mode=mode)
    a = zarrkit.open_array(store, mode="r")
    info = {"gds_path": store.device_path, "gds_detail": store.device_path_detail}

    def run() -> Any:
        with zarrkit.config.enable_gpu():
            return a[selection] if not isinstance(selection, list) else a.oindex[selection]
    return run, info, store


def zarrkit_host(path: Path, selection: Any) -> Callable[[], Any]:
    a = zarrkit.open_array(str(path), mode="r")
    return lambda: a[selection] if not isinstance(selection, list) else a.oindex[selection]


def zarr_kvikio(path: Path, selection: Any) -> Callable[[], Any]:
    import zarr
    from kvikio.zarr import GDSStore

    z = zarr.open_array(GDSStore(str(path), read_only=True), mode="r")

    def run() -> Any:
        with zarr.config.enable_gpu():
            return z[selection] if not isinstance(selection, list) else z.oindex[selection]
    return run


def zarr_zarrkit_pipeline(path: Path, selection: Any) -> Callable[[], Any]:
    """zarr-python 3 with zarr.config.enable_gpu() and zarrkit's codec pipeline: zarr-python
    plans the read, zarrkit fetches and decodes the chunks on the GPU in one batch."""
    import zarr

    import zarrkit.zarr_pipeline  # noqa: F401 - registers the pipeline

    with zarr.config.set({"codec_pipeline.path": "zarrkit.zarr_pipeline.ZarrkitCodecPipeline"}):
        z = zarr.open_array(str(path), mode="r")

    def run() -> Any:
        with zarr.config.set({"codec_pipeline.path": "zarrkit.zarr_pipeline.ZarrkitCodecPipeline"}), \
                zarr.config.enable_gpu():
            return z[selection] if not isinstance(selection, list) else z.oindex[selection]
    return run


def tensorstore_open(path: Path, zarr_format: int = 3) -> Any:
    import tensorstore as ts

    context = ts.Context({"data_copy_concurrency": {"limit": THREADS}, "file_io_concurrency": {"limit": THREADS}})
    return ts.open({"driver": "zarr3" if zarr_format == 3 else "zarr", "kvstore": {"driver": "file", "path": str(path)}},
                   read=True, context=context).result()


def tensorstore_host(path: Path, selection: Any) -> Callable[[], Any]:
    t = tensorstore_open(path)
    view = t[selection] if not isinstance(selection, list) else t[np.asarray(selection)]
    return lambda: view.read().result()


def to_device_pageable(read: Callable[[], np.ndarray]) -> Callable[[], Any]:
    return lambda: cupy.asarray(read())


class PinnedStaging:
    """Host array -> pinned buffer (memcpy) -> device (one async copy)."""

    def __init__(self, read: Callable[[], np.ndarray]) -> None:
        self.read = read
        self.pinned: np.ndarray | None = None

    def __call__(self) -> Any:
        h = self.read()
        if self.pinned is None or self.pinned.nbytes < h.nbytes:
            memory = cupy.cuda.alloc_pinned_memory(h.nbytes)
            self.pinned = np.frombuffer(memory, dtype=np.uint8, count=h.nbytes)
            self._keep = memory
        staged = self.pinned[: h.nbytes].view(h.dtype).reshape(h.shape)
        np.copyto(staged, h)
        d = cupy.empty(h.shape, dtype=h.dtype)
        d.set(staged)
        return d


# ---- scenarios -----------------------------------------------------------------------------

BLOSC = {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 4}}
S6_CODECS = {
    "none": None,
    "blosc-lz4": [BLOSC],
    "lz4": [{"id": "lz4", "acceleration": 1}],
    "zstd 1": [{"name": "zstd", "configuration": {"level": 1}}],
}


def wanted(args: argparse.Namespace, case: str) -> bool:
    return not args.cases or any(part and part in case for part in args.cases.split(","))


def write(path: Path, data: np.ndarray, chunks: tuple[int, ...], compressors: Any, shards: Any = None) -> int:
    if path.exists():
        shutil.rmtree(path)
    with zarrkit.config.set(num_threads=0):
        zarrkit.create_array(str(path), data=data, chunks=chunks, shards=shards, compressors=compressors)
    return store_bytes(path)


def s6(args: argparse.Namespace, rec: Recorder) -> None:
    shape = (1024, 1024, 256) if args.size == "full" else (256, 256, 128)
    chunks = (256, 256, 64) if args.size == "full" else (64, 64, 64)
    inner = (64, 64, 64) if args.size == "full" else (32, 32, 32)
    logical = int(np.prod(shape)) * 4
    cases = [("N", name, codecs, None, False) for name, codecs in S6_CODECS.items()]
    cases += [("N", "sharded blosc-lz4", [BLOSC], chunks, False), ("P", "blosc-lz4", [BLOSC], None, False),
              ("N", "blosc-lz4", [BLOSC], None, True)]
    print(f"S6: read all {shape} float32 ({logical / 2**30:.2f} GiB) into device memory, chunks {chunks}, "
          f"{THREADS} host threads", flush=True)
    data_by_family: dict[str, np.ndarray] = {}
    for fam, name, codecs, shards, cold in cases:
        if not wanted(args, f"{fam} {name}") or (cold and args.no_cold):
            continue
        if fam not in data_by_family:
            data_by_family = {fam: family(fam, shape, seed=1)}
        data = data_by_family[fam]
        path = Path(args.dir) / f"s6_{fam}_{name.replace(' ', '_')}.zarr"
        if not path.exists() or not cold:
            stored = write(path, data, inner if shards else chunks, codecs, shards)
        else:
            stored = store_bytes(path)
        expected = cupy.asarray(data) if HAVE_GPU else data
        case = f"{fam} {name}{' (cold)' if cold else ''}"
        extra = {"ratio": logical / stored, "bytes_stored": stored, "cold": cold}
        before = (lambda p=path: drop_cache(p)) if cold else None
        reps = args.reps
        if HAVE_GPU:
            rec.measure("S6", case, "zarrkit", logical, reps, zarrkit_device(path, ...), expected, before, **extra)
        else:
            rec.measure("S6", case, "zarrkit (host)", logical, reps, zarrkit_host(path, ...), expected, before, **extra)
        if HAVE_GPU:
            for mode in GDS_MODES:
                try:
                    run, info, store = zarrkit_gds_device(path, ..., mode)
                    rec.measure("S6", case, f"zarrkit gds ({mode})", logical, reps, run, expected, before, **extra,
                                **info)
                    # Which path the chunks took (uncompressed ones go straight to the device).
                    rec.add(scenario="S6 gds stats", case=case, peer=f"zarrkit gds ({mode})", **store.stats)
                except Exception as e:  # cufile where cuFile cannot be used: the reason
                    rec.add(scenario="S6", case=case, peer=f"zarrkit gds ({mode})", error=f"{type(e).__name__}: {e}"[:300])
                    print(f"  {case:34s} zarrkit gds ({mode}): {type(e).__name__}: {e}"[:200], flush=True)
            try:
                rec.measure("S6", case, "zarr+kvikio", logical, max(2, reps // 4), zarr_kvikio(path, ...), expected,
                            before, **extra)
            except Exception as e:
                rec.add(scenario="S6", case=case, peer="zarr+kvikio", error=f"{type(e).__name__}: {e}"[:300])
            try:
                rec.measure("S6", case, "zarr+zarrkit pipeline", logical, max(2, reps // 4),
                            zarr_zarrkit_pipeline(path, ...), expected, before, **extra)
            except Exception as e:
                rec.add(scenario="S6", case=case, peer="zarr+zarrkit pipeline", error=f"{type(e).__name__}: {e}"[:300])
        try:
            if args.skip_tensorstore:
                raise RuntimeError("skipped (--skip-tensorstore)")
            read = tensorstore_host(path, ...)
            if HAVE_GPU:
                rec.measure("S6", case, "tensorstore+copy (pageable)", logical, max(3, reps // 2),
                            to_device_pageable(read), expected, before, **extra)
                rec.measure("S6", case, "tensorstore+copy (pinned)", logical, max(3, reps // 2), PinnedStaging(read),
                            expected, before, **extra)
            else:
                rec.measure("S6", case, "tensorstore (host)", logical, 3, read, expected, before, **extra)
        except Exception as e:
            rec.add(scenario="S6", case=case, peer="tensorstore+copy", error=f"{type(e).__name__}: {e}"[:300])
        del expected
        if not cold and not (fam == "N" and name == "blosc-lz4"):
            shutil.rmtree(path)  # the cold case reuses the N blosc-lz4 store


def chunk_files(path: Path) -> list[tuple[str, int]]:
    """(key, size) of every chunk file of the array at `path`, largest first."""
    files = []
    for root, _, names in os.walk(path):
        for name in names:
            full = Path(root) / name
            if name not in ("zarr.json", ".zarray", ".zattrs"):
                files.append((str(full.relative_to(path)), full.stat().st_size))
    return sorted(files, key=lambda f: -f[1])


def gds_raw(args: argparse.Namespace, rec: Recorder) -> None:
    """Raw store throughput: all chunk files of an array into one device buffer."""
    if not HAVE_GPU:
        print("gds: needs a GPU (skipped)", flush=True)
        return
    from concurrent.futures import ThreadPoolExecutor

    full = args.size == "full"
    shape = (1024, 1024, 256) if full else (256, 256, 128)
    layouts = [(256, 256, 64), (64, 64, 64), (32, 32, 32)] if full else [(64, 64, 64), (32, 32, 32), (16, 16, 32)]
    data = family("N", shape, seed=3)
    print(f"gds: raw store reads of {data.nbytes / 2**30:.2f} GiB of chunk files into device memory", flush=True)
    for chunks in layouts:
        chunk_bytes = int(np.prod(chunks)) * 4
        name = f"{chunk_bytes >> 20} MiB files" if chunk_bytes >= 1 << 20 else f"{chunk_bytes >> 10} KiB files"
        if not wanted(args, name):
            continue
        path = Path(args.dir) / f"gds_{name.replace(' ', '_')}.zarr"
        write(path, data, chunks, None)
        files = chunk_files(path)
        total = sum(size for _, size in files)
        keys = [k for k, _ in files]
        offsets = np.concatenate([[0], np.cumsum([(size + 255) // 256 * 256 for _, size in files])]).astype(np.int64)
        target = cupy.empty(int(offsets[-1]), dtype=cupy.uint8)
        pointers = [target.data.ptr + int(o) for o in offsets[:-1]]
        sizes = [size for _, size in files]
        # The expected bytes: the files, placed as the peers place them.
        expected = np.zeros(int(offsets[-1]), dtype=np.uint8)
        for (key, size), o in zip(files, offsets[:-1]):
            expected[int(o): int(o) + size] = np.fromfile(path / key, dtype=np.uint8)
        expected_d = cupy.asarray(expected)
        extra = {"files": len(files), "bytes_stored": total}

        def checked(run: Callable[[], Any]) -> Callable[[], Any]:
            def go() -> Any:
                target.fill(0)
                run()
                return target
            return go

        for mode, piece in [("compat", 1 << 20), ("compat", 4 << 20), ("compat", 16 << 20)] + \
                [("cufile", 0)] * ("cufile" in GDS_MODES):
            peer = f"zarrkit gds ({mode}{'' if mode == 'cufile' else f', {piece >> 20} MiB pieces'})"
            try:
                store = zarrkit.storage.GDSStore(str(path), read_only=True, mode=mode, piece_bytes=piece)
                info = {"gds_path": store.device_path, "gds_detail": store.device_path_detail, "piece_bytes": piece}
                rec.measure("GDS", name, peer, total, args.reps,
                            checked(lambda s=store: s.read_into_device(keys, pointers, sizes)), expected_d, **extra,
                            **info)
                rec.add(scenario="GDS stats", case=name, peer=peer, **store.stats)
            except Exception as e:
                rec.add(scenario="GDS", case=name, peer=peer, error=f"{type(e).__name__}: {e}"[:300])
                print(f"  {name:34s} {peer}: {type(e).__name__}: {e}"[:200], flush=True)
        try:
            import kvikio

            def kvikio_read() -> None:
                handles = [kvikio.CuFile(str(path / k), "r") for k in keys]
                futures = [h.pread(target[int(o): int(o) + size]) for h, o, size in zip(handles, offsets, sizes)]
                for f in futures:
                    f.get()
                for h in handles:
                    h.close()
            rec.measure("GDS", name, f"kvikio CuFile.pread ({os.environ.get('KVIKIO_NTHREADS', '?')} threads)", total,
                        args.reps, checked(kvikio_read), expected_d, **extra,
                        kvikio_compat=os.environ.get("KVIKIO_COMPAT_MODE", ""))
        except Exception as e:
            rec.add(scenario="GDS", case=name, peer="kvikio CuFile.pread", error=f"{type(e).__name__}: {e}"[:300])
        pinned_memory = cupy.cuda.alloc_pinned_memory(int(offsets[-1]))
        pinned = np.frombuffer(pinned_memory, dtype=np.uint8, count=int(offsets[-1]))
        pool = ThreadPoolExecutor(THREADS)

        def pread_copy() -> None:
            def one(i: int) -> None:
                fd = os.open(path / keys[i], os.O_RDONLY)
                try:
                    view = memoryview(pinned)[int(offsets[i]): int(offsets[i]) + sizes[i]]
                    done = 0
                    while done < sizes[i]:
                        done += os.preadv(fd, [view[done:]], done)
                finally:
                    os.close(fd)
            list(pool.map(one, range(len(keys))))
            target.set(pinned)
        rec.measure("GDS", name, f"pread into pinned ({THREADS} threads) + copy", total, args.reps,
                    checked(pread_copy), expected_d, **extra)
        pool.shutdown()
        del target, expected_d, pinned, pinned_memory
        shutil.rmtree(path)


def s10(args: argparse.Namespace, rec: Recorder) -> None:
    shape = (64, 16, 320, 640) if args.size == "full" else (16, 4, 64, 128)
    chunk = (1, 1, *shape[2:])
    shard = (1, *shape[1:])
    batch = 8 if args.size == "full" else 4
    data = family("N", shape, seed=2)
    rng = np.random.default_rng(10)
    batches = [sorted(int(i) for i in rng.choice(shape[0], batch, replace=False)) for _ in range(args.reps + 1)]
    logical = batch * int(np.prod(shape[1:])) * 4
    print(f"S10: random batches of {batch} samples of {shape[1:]} float32 ({logical / 2**20:.0f} MiB) from {shape}, "
          f"chunks {chunk}, shards {shard}", flush=True)
    cases = [("none", None, None), ("zstd 1", [{"name": "zstd", "configuration": {"level": 1}}], None),
             ("sharded none", None, shard), ("sharded zstd 1", [{"name": "zstd", "configuration": {"level": 1}}], shard)]
    for name, codecs, shards in cases:
        if not wanted(args, name):
            continue
        path = Path(args.dir) / f"s10_{name.replace(' ', '_')}.zarr"
        stored = write(path, data, chunk, codecs, shards)
        extra = {"ratio": data.nbytes / stored, "bytes_stored": stored, "batch": batch}
        # Each timed call reads the next random batch; the check uses the first.
        state = {"i": 0}

        def next_batch() -> list[int]:
            state["i"] = (state["i"] + 1) % len(batches)
            return batches[state["i"]]

        def cycling(make: Callable[[list[int]], Any]) -> Callable[[], Any]:
            first = {"done": False}

            def run() -> Any:
                if not first["done"]:
                    first["done"] = True
                    return make(batches[0])
                return make(next_batch())
            return run

        expected_host = data[batches[0]]
        expected = cupy.asarray(expected_host) if HAVE_GPU else expected_host
        za = zarrkit.open_array(str(path), mode="r")
        peers: list[tuple[str, Callable[[list[int]], Any], Any]] = []
        peers.append(("zarrkit (host)", lambda b: za.oindex[b], expected_host))
        if HAVE_GPU:
            def zk_dev(b: list[int]) -> Any:
                with zarrkit.config.enable_gpu():
                    return za.oindex[b]
            peers.append(("zarrkit", zk_dev, expected))
            try:
                import zarr
                from kvikio.zarr import GDSStore

                z = zarr.open_array(GDSStore(str(path), read_only=True), mode="r")

                def zr(b: list[int]) -> Any:
                    with zarr.config.enable_gpu():
                        return z.oindex[b]
                peers.append(("zarr+kvikio", zr, expected))
            except Exception as e:
                rec.add(scenario="S10", case=name, peer="zarr+kvikio", error=f"{type(e).__name__}: {e}"[:300])
        try:
            t = tensorstore_open(path)
            peers.append(("tensorstore (host)", lambda b: t[np.asarray(b)].read().result(), expected_host))
            if HAVE_GPU:
                peers.append(("tensorstore+copy", lambda b: cupy.asarray(t[np.asarray(b)].read().result()), expected))
        except Exception as e:
            rec.add(scenario="S10", case=name, peer="tensorstore", error=f"{type(e).__name__}: {e}"[:300])
        if name == "none":
            try:
                import h5py

                h5 = Path(args.dir) / "s10.h5"
                with h5py.File(h5, "w") as f:
                    f.create_dataset("x", data=data, chunks=chunk)
                hf = h5py.File(h5, "r")
                peers.append(("h5py (host)", lambda b: hf["x"][b], expected_host))
                if HAVE_GPU:
                    peers.append(("h5py+copy", lambda b: cupy.asarray(hf["x"][b]), expected))
            except Exception as e:
                rec.add(scenario="S10", case=name, peer="h5py", error=f"{type(e).__name__}: {e}"[:300])
        for peer, make, exp in peers:
            state["i"] = 0
            rec.measure("S10", name, peer, logical, args.reps, cycling(make), exp, **extra)
        shutil.rmtree(path)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dir", default="/tmp/zarrkit_s6")
    p.add_argument("--json", default=None)
    p.add_argument("--size", choices=["small", "full"], default="full")
    p.add_argument("--reps", type=int, default=8)
    p.add_argument("--only", default="s6,s10")
    p.add_argument("--cases", default="", help="comma-separated substrings: run only the S6/S10 cases that contain one")
    p.add_argument("--skip-tensorstore", action="store_true", help="S6 without the tensorstore peers (shorter)")
    p.add_argument("--no-cold", action="store_true", help="S6 without the cold-cache case (shorter)")
    args = p.parse_args()
    Path(args.dir).mkdir(parents=True, exist_ok=True)
    rec = Recorder(args.json)
    versions = {"python": sys.version.split()[0], "zarrkit_gpu": HAVE_GPU, "threads": THREADS,
                "ZARRKIT_NVCOMP_DECODE": os.environ.get("ZARRKIT_NVCOMP_DECODE", "")}
    for module in ("zarr", "kvikio", "tensorstore", "h5py", "cupy", "numcodecs"):
        try:
            versions[module] = __import__(module).__version__
        except Exception as e:
            versions[module] = f"missing ({type(e).__name__})"
    if HAVE_GPU:
        versions["device"] = cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
    rec.add(scenario="environment", **versions)
    print(json.dumps(versions), flush=True)
    if "s6" in args.only:
        s6(args, rec)
    if "s10" in args.only:
        s10(args, rec)
    if "gds" in args.only:
        gds_raw(args, rec)
    shutil.rmtree(args.dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
