"""Dask-CUDA on zarrkit: an array larger than one GPU's memory read chunk-parallel by a
LocalCUDACluster (one worker per GPU, each block decoded on its worker's GPU), its sum
equal to NumPy's, and a store round trip from device memory. Runs where dask_cuda loads and
two GPUs or more are visible (the multi-GPU machine); skipped otherwise, with the reason.

The array's size: ZARRKIT_DASK_CUDA_GIB (GiB, logical), by default 1.2 x the first GPU's
memory; its directory: ZARRKIT_DASK_CUDA_DIR (default: pytest's tmp_path). The values are
integers in float32 (sums in float64 are then exact), one 1 GiB slab written again and
again, so NumPy's sum of the whole is the slab's times the number of slabs."""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import pytest

import zarrkit

if not zarrkit.config.gpu_available():
    pytest.skip("no usable GPU for zarrkit here; the Dask-CUDA test runs on the multi-GPU machine", allow_module_level=True)
cupy = pytest.importorskip("cupy", reason="CuPy is not installed; the Dask-CUDA test needs it")
dask_cuda = pytest.importorskip("dask_cuda", reason="dask_cuda is not installed; the Dask-CUDA test needs it")
if cupy.cuda.runtime.getDeviceCount() < 2:
    pytest.skip("one GPU here: the Dask-CUDA test needs two or more (runs on the multi-GPU machine)", allow_module_level=True)

import dask.array as da  # noqa: E402
from distributed import Client  # noqa: E402

SLAB = (256, 1024, 1024)  # 1 GiB of float32


def test_an_array_larger_than_one_gpu_sums_as_numpy_does(tmp_path):
    gpu_bytes = cupy.cuda.Device(0).mem_info[1]
    gib = float(os.environ.get("ZARRKIT_DASK_CUDA_GIB", 1.2 * gpu_bytes / 2**30))
    slabs = max(2, math.ceil(gib))
    root = Path(os.environ.get("ZARRKIT_DASK_CUDA_DIR", tmp_path))
    slab = (np.arange(np.prod(SLAB), dtype=np.int64) % 1009).astype(np.float32).reshape(SLAB)
    a = zarrkit.create_array(root / "large.zarr", shape=(slabs * SLAB[0], *SLAB[1:]), chunks=(32, 512, 1024),
                             dtype="f4", compressors=[{"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle"}}],
                             overwrite=True)
    for k in range(slabs):
        a[k * SLAB[0] : (k + 1) * SLAB[0]] = slab
    assert a.nbytes > gpu_bytes, "the array must not fit one GPU"
    expected = float(slab.sum(dtype=np.float64)) * slabs  # exact: integers below 2**53

    n = min(cupy.cuda.runtime.getDeviceCount(), 2)
    os.environ["ZARRKIT_GPU_DEVICES_SHARING_HOST"] = str(n)
    with dask_cuda.LocalCUDACluster(n_workers=n, threads_per_worker=2, dashboard_address=None) as cluster, Client(
        cluster
    ) as client:
        x = zarrkit.to_dask(a, chunks=(SLAB[0], *SLAB[1:]), device=True)
        assert isinstance(x._meta, cupy.ndarray)
        total = float(x.sum(dtype="f8").compute())
        assert total == expected
        # Every worker (GPU) took part.
        assert len(client.scheduler_info()["workers"]) == n

        # A store round trip from device memory: two slabs written by the workers' GPUs.
        b = zarrkit.create_array(root / "copy.zarr", shape=(2 * SLAB[0], *SLAB[1:]), chunks=(32, 512, 1024), dtype="f4",
                                 overwrite=True)
        da.store(x[: 2 * SLAB[0]], b, lock=False)
    for k in range(2):
        np.testing.assert_array_equal(b[k * SLAB[0] : (k + 1) * SLAB[0]], slab)


def test_xarray_chunks_under_enable_gpu_decode_on_the_workers_gpus(tmp_path):
    xr = pytest.importorskip("xarray")
    from zarrkit.xarray_backend import GPU_CHUNKS, ZarrkitBackendEntrypoint
    values = (np.arange(64 * 512 * 512, dtype=np.int64) % 1013).astype(np.float32).reshape(64, 512, 512)
    ds = xr.Dataset({"v": (("t", "y", "x"), values)}, coords={"t": np.arange(64)})
    ds["v"].encoding["chunks"] = (8, 256, 512)
    ds.to_zarr(tmp_path / "data.zarr", zarr_format=3, consolidated=True)

    n = min(cupy.cuda.runtime.getDeviceCount(), 2)
    with dask_cuda.LocalCUDACluster(n_workers=n, threads_per_worker=2, dashboard_address=None) as cluster, Client(cluster):
        with zarrkit.config.enable_gpu():
            opened = xr.open_dataset(tmp_path / "data.zarr", engine=ZarrkitBackendEntrypoint, chunks={},
                                     chunked_array_type=GPU_CHUNKS)
        v = opened["v"].data
        on_device = v.map_blocks(
            lambda b: np.full((1,) * b.ndim, isinstance(b, cupy.ndarray) and b.device.id == cupy.cuda.Device().id),
            chunks=tuple((1,) * len(c) for c in v.chunks), dtype=bool, meta=np.empty((0, 0, 0), dtype=bool),
        ).compute()
        assert on_device.all(), "every block is a CuPy array on its worker's GPU"
        total = opened["v"].sum(dtype="f8").compute().data
        assert isinstance(total, cupy.ndarray)
        assert float(total.get()) == float(values.sum(dtype=np.float64))
