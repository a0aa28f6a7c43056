"""zarrkit arrays with Dask: threads, a distributed cluster of worker processes, xarray."""

from __future__ import annotations

import dask
import dask.array as da
import numpy as np
import pytest

import zarrkit


def test_from_array_and_store_threads(tmp_path):
    data = np.random.default_rng(5).random((60, 45))
    src = zarrkit.create_array(tmp_path / "src.zarr", data=data, chunks=(16, 10))
    x = da.from_array(src, chunks=src.chunks)
    assert x.chunks[0][0] == 16 and x.chunks[1][0] == 10
    np.testing.assert_allclose(x.mean().compute(), data.mean())
    dst = zarrkit.create_array(tmp_path / "dst.zarr", shape=data.shape, chunks=(16, 10), dtype="f8")
    with dask.config.set(scheduler="threads"):
        da.store(2 * x + 1, dst, lock=False)
    np.testing.assert_array_equal(dst[:], 2 * data + 1)


def test_distributed_local_cluster(tmp_path):
    distributed = pytest.importorskip("distributed")
    shape, chunks = (96, 80), (24, 20)
    data = np.arange(np.prod(shape), dtype="i8").reshape(shape)
    src = zarrkit.create_array(tmp_path / "src.zarr", data=data, chunks=chunks)
    dst = zarrkit.create_array(tmp_path / "dst.zarr", shape=shape, chunks=chunks, dtype="i8")
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=50
    ) as cluster, distributed.Client(cluster) as client:
        x = da.from_array(src, chunks=src.chunks)
        # Each task reads or writes one chunk in a worker process: the arrays travel as
        # (store, path), never as data.
        total = client.compute(x.sum()).result()
        assert total == data.sum()
        stored = da.store(x * 3 - 7, dst, lock=False, compute=False)
        client.compute(stored).result()
        workers = client.run(lambda: __import__("os").getpid())
        assert len(set(workers.values())) == 2
        # The workers read what they wrote, chunk-parallel, through their own opens.
        back = client.compute(da.from_array(dst, chunks=dst.chunks)).result()
    np.testing.assert_array_equal(back, data * 3 - 7)
    np.testing.assert_array_equal(dst[:], data * 3 - 7)


def test_xarray_open_zarr_through_pipeline(tmp_path):
    xr = pytest.importorskip("xarray")
    zarr = pytest.importorskip("zarr")
    from zarrkit import zarr_pipeline

    data = np.random.default_rng(2).random((6, 8)).astype("f4")
    ds = xr.Dataset(
        {"t": (("y", "x"), data, {"units": "K"})},
        coords={"y": np.arange(6), "x": np.linspace(0, 1, 8)},
    )
    before = dict(zarr_pipeline.stats)
    with zarr.config.set({"codec_pipeline.path": "zarrkit.zarr_pipeline.ZarrkitCodecPipeline"}):
        ds.to_zarr(tmp_path / "ds.zarr", zarr_format=3, consolidated=False)
        opened = xr.open_zarr(tmp_path / "ds.zarr", consolidated=False)
        np.testing.assert_array_equal(opened["t"].values, data)
        assert opened["t"].attrs["units"] == "K"
        np.testing.assert_array_equal(opened["x"].values, ds["x"].values)
    assert zarr_pipeline.stats["encoded"] > before["encoded"]
    assert zarr_pipeline.stats["decoded"] > before["decoded"]
    # zarrkit reads what xarray wrote through zarr-python.
    t = zarrkit.open_array(tmp_path / "ds.zarr", path="t", mode="r")
    np.testing.assert_array_equal(t[:], data)
    assert t.dimension_names == ("y", "x")
