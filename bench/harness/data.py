"""Data sets: generated once with a fixed seed, cached, and written in every format from the
same values.

Layout under the data directory (bench/data by default, git-ignored):
    <size>/<dataset>/values.raw        the values, C order, native dtype (numpy.memmap reads it)
    <size>/<dataset>/<variant>.zarr    one Zarr array per variant (v2 or v3 metadata from
                                       scenarios.py; chunks written by tensorstore)
    <size>/<dataset>/<variant>.h5      the HDF5 twin (dataset "data"), where the variant has one
    <size>/<dataset>/manifest.json     what is there and its checksums; written last, so an
                                       interrupted generation is redone, never half-used
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import json
import os
import shutil
from pathlib import Path

import numpy as np

from scenarios import Dataset, Variant

SLAB_BYTES = 64 << 20


def checksum(values: np.ndarray) -> int:
    """Sum of the elements as unsigned integers of their width, modulo 2**64 (as zarrkit_bench)."""
    values = np.ascontiguousarray(values)
    words = values.view(f"u{values.dtype.itemsize}")
    return int(words.sum(dtype=np.uint64))


def _noise_params(dtype: str) -> tuple[float, float, float]:
    # centre, amplitude of the smooth field, noise sigma: zstd ratio ~2-3 for the integer types
    return {"uint16": (2000.0, 60.0, 2.0), "uint8": (128.0, 30.0, 2.0), "float32": (0.0, 1.0, 0.05)}[dtype]


def values_slab(ds: Dataset, start: int, stop: int) -> np.ndarray:
    """Rows [start, stop) along axis 0 of the data set, the same whatever the slab size."""
    dtype = np.dtype(ds.dtype)
    shape = (stop - start,) + tuple(ds.shape[1:])
    if ds.family == "R":
        rng = np.random.default_rng([ds.seed, start])
        if dtype.kind == "f":
            return rng.random(shape, dtype=dtype)
        return rng.integers(0, np.iinfo(dtype).max, shape, dtype=dtype, endpoint=True)
    axes = list(np.ogrid[tuple(slice(0, s) for s in shape)])
    axes[0] = axes[0] + start
    x0, x1, xl = axes[0], axes[1], axes[-1]
    if ds.family == "P":  # a smooth polynomial: zstd ratio ~15-40 depending on the chunk
        total = x0 * x0
        for x in axes[1:]:
            total = total + x * x
        pattern = total // 4 + (x0 * x1) // 2
        if dtype.kind == "f":
            return (pattern % 100003).astype(dtype) / dtype.type(1000)
        return (pattern % (int(np.iinfo(dtype).max) + 1)).astype(dtype)
    if ds.family == "N":
        centre, amplitude, sigma = _noise_params(ds.dtype)
        field = centre + amplitude * np.sin(x0 / 23.0) * np.cos(x1 / 31.0) + amplitude * np.sin(xl / 17.0 + x0 / 41.0)
        rng = np.random.default_rng([ds.seed, start])
        field = field + rng.normal(0.0, sigma, shape)
        if dtype.kind == "f":
            return field.astype(dtype)
        info = np.iinfo(dtype)
        return np.clip(np.rint(field), info.min, info.max).astype(dtype)
    raise ValueError(f"unknown family {ds.family}")


def slab_rows(ds: Dataset, multiple: int = 1) -> int:
    row_bytes = ds.nbytes // ds.shape[0]
    rows = max(1, SLAB_BYTES // row_bytes)
    return max(multiple, rows // multiple * multiple)


def _spec_hash(obj) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True).encode()).hexdigest()[:16]


def _dir_bytes(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    metadata = {"zarr.json", ".zarray", ".zattrs", ".zgroup"}
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and f.name not in metadata)


class DataStore:
    def __init__(self, root: Path, size: str, log=print):
        self.root = Path(root) / size
        self.log = log
        self._manifests: dict[str, dict] = {}

    def dataset_dir(self, ds: Dataset) -> Path:
        return self.root / ds.name

    def raw_path(self, ds: Dataset) -> Path:
        return self.dataset_dir(ds) / "values.raw"

    def zarr_path(self, v: Variant) -> Path:
        return self.dataset_dir(v.dataset) / f"{v.name}.zarr"

    def h5_path(self, v: Variant) -> Path:
        return self.dataset_dir(v.dataset) / f"{v.name}.h5"

    def raw(self, ds: Dataset) -> np.memmap:
        return np.memmap(self.raw_path(ds), dtype=ds.dtype, mode="r", shape=ds.shape)

    def _manifest_path(self, ds: Dataset) -> Path:
        return self.dataset_dir(ds) / "manifest.json"

    def manifest(self, ds: Dataset) -> dict:
        if ds.name not in self._manifests:
            path = self._manifest_path(ds)
            spec = _spec_hash([ds.shape, ds.dtype, ds.family, ds.seed])
            manifest = json.loads(path.read_text()) if path.exists() else {}
            if manifest.get("spec") != spec:
                manifest = {"spec": spec, "variants": {}}
            self._manifests[ds.name] = manifest
        return self._manifests[ds.name]

    def _save(self, ds: Dataset) -> None:
        path = self._manifest_path(ds)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self._manifests[ds.name], indent=1))
        os.replace(tmp, path)

    def ensure(self, variant: Variant) -> dict:
        """Generates the values and writes the variant unless the cache already has them."""
        ds = variant.dataset
        manifest = self.manifest(ds)
        if "checksum" not in manifest or not self.raw_path(ds).exists():
            self._generate_raw(ds)
        want = _spec_hash([variant.zarr, variant.h5])
        entry = manifest["variants"].get(variant.name)
        if entry is None or entry.get("spec") != want or not self.zarr_path(variant).exists():
            entry = self._write_variant(variant)
            entry["spec"] = want
            manifest["variants"][variant.name] = entry
            self._save(ds)
        return entry

    def _generate_raw(self, ds: Dataset) -> None:
        directory = self.dataset_dir(ds)
        directory.mkdir(parents=True, exist_ok=True)
        self.log(f"  generating {ds.name}: {ds.shape} {ds.dtype}, family {ds.family}, seed {ds.seed}")
        tmp = directory / "values.raw.tmp"
        out = np.memmap(tmp, dtype=ds.dtype, mode="w+", shape=ds.shape)
        rows = slab_rows(ds)

        def fill(start: int) -> int:
            stop = min(start + rows, ds.shape[0])
            slab = values_slab(ds, start, stop)
            out[start:stop] = slab
            return checksum(slab)

        # Slabs are independent (each seeds its own generator), so they fill in parallel.
        with concurrent.futures.ThreadPoolExecutor(os.cpu_count()) as pool:
            total = sum(pool.map(fill, range(0, ds.shape[0], rows))) % (1 << 64)
        out.flush()
        del out
        os.replace(tmp, self.raw_path(ds))
        manifest = self.manifest(ds)
        manifest["checksum"] = str(total)
        manifest["variants"] = {}
        self._save(ds)

    def _write_variant(self, v: Variant) -> dict:
        import tensorstore as ts

        ds = v.dataset
        path = self.zarr_path(v)
        self.log(f"  writing {ds.name}/{v.name}.zarr ({v.label})")
        shutil.rmtree(path, ignore_errors=True)
        path.mkdir(parents=True)
        if v.zarr["zarr_format"] == 3:
            (path / "zarr.json").write_text(json.dumps(v.zarr, indent=2))
            driver = "zarr3"
        else:
            (path / ".zarray").write_text(json.dumps(v.zarr, indent=2))
            driver = "zarr"
        context = ts.Context({"data_copy_concurrency": {"limit": os.cpu_count()}, "file_io_sync": False})
        array = ts.open({"driver": driver, "kvstore": {"driver": "file", "path": str(path)}},
                        open=True, context=context).result()
        raw = self.raw(ds)
        rows = slab_rows(ds, v.chunk_shape[0])
        for start in range(0, ds.shape[0], rows):
            stop = min(start + rows, ds.shape[0])
            array[start:stop].write(np.asarray(raw[start:stop])).result()
        entry = {"bytes_zarr": _dir_bytes(path)}
        if v.h5:
            entry["bytes_h5"] = self._write_h5(v, raw)
        return entry

    def _write_h5(self, v: Variant, raw: np.memmap) -> int:
        import h5py

        path = self.h5_path(v)
        self.log(f"  writing {v.dataset.name}/{v.name}.h5")
        tmp = path.with_suffix(".h5.tmp")
        with h5py.File(tmp, "w") as f:
            d = f.create_dataset("data", shape=v.dataset.shape, dtype=v.dataset.dtype, **v.h5)
            rows = slab_rows(v.dataset, v.h5["chunks"][0])
            for start in range(0, v.dataset.shape[0], rows):
                stop = min(start + rows, v.dataset.shape[0])
                d[start:stop] = raw[start:stop]
        os.replace(tmp, path)
        return path.stat().st_size
