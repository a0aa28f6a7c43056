"""One array over several devices: split_selection, read_devices, write_devices, to_dask.
The splitting and the host Dask array run everywhere; the device reads and writes run where
a GPU and CuPy are (skipped otherwise, with the reason), on every visible GPU; the Dask-CUDA
test where dask_cuda is installed and the machine has two GPUs or more."""

from __future__ import annotations

import numpy as np
import pytest

import zarrkit


def make(tmp_path, shape=(64, 40), chunks=(8, 40), shards=None, compressors="auto"):
    data = (np.arange(np.prod(shape)) % 1009).astype("f4").reshape(shape)
    a = zarrkit.create_array(tmp_path / "a.zarr", data=data, chunks=chunks, shards=shards, compressors=compressors)
    return a, data


def test_split_selection_cuts_at_chunk_boundaries(tmp_path):
    a, _ = make(tmp_path, shape=(100, 8), chunks=(10, 8))
    assert [p[0] for p in zarrkit.split_selection(a, parts=3)] == [slice(0, 30, 1), slice(30, 60, 1), slice(60, 100, 1)]
    assert [p[0] for p in zarrkit.split_selection(a, np.s_[15:95], parts=2)] == [slice(15, 50, 1), slice(50, 95, 1)]
    # Fewer chunks than parts; an integer keeps dropping its axis.
    assert len(zarrkit.split_selection(a, np.s_[5:25, 3], parts=8)) == 3
    assert zarrkit.split_selection(a, np.s_[:, 3], parts=2)[0][1] == 3


def test_split_selection_of_a_sharded_array_cuts_at_shards(tmp_path):
    a, _ = make(tmp_path, shape=(64, 8), chunks=(4, 8), shards=(16, 8))
    assert [p[0] for p in zarrkit.split_selection(a, parts=2)] == [slice(0, 32, 1), slice(32, 64, 1)]


@pytest.mark.parametrize("selection", [Ellipsis, np.s_[3:61, ::3], np.s_[::-2], np.s_[[5, 1, 60, 7], 2:9]])
def test_the_parts_read_what_the_whole_reads(tmp_path, selection):
    a, _ = make(tmp_path)
    whole = a.get_orthogonal_selection(selection)
    for parts in (1, 2, 3, 5):
        pieces = [a.get_orthogonal_selection(p) for p in zarrkit.split_selection(a, selection, parts=parts)]
        np.testing.assert_array_equal(np.concatenate(pieces), whole)


def test_split_selection_refuses_what_cannot_be_split(tmp_path):
    a, _ = make(tmp_path)
    with pytest.raises(ValueError):
        zarrkit.split_selection(a, parts=0)
    with pytest.raises(ValueError):
        zarrkit.split_selection(a, axis=2, parts=2)
    with pytest.raises(zarrkit.errors.InvalidArgumentError):
        zarrkit.split_selection(a, np.s_[3], parts=2)


def test_to_dask_on_the_host(tmp_path):
    da = pytest.importorskip("dask.array")
    a, data = make(tmp_path, shape=(64, 40), chunks=(4, 40), shards=(16, 40))
    x = zarrkit.to_dask(a)
    assert x.chunks[0] == (16, 16, 16, 16)  # one task per shard
    assert float(x.sum().compute()) == pytest.approx(float(data.sum(dtype="f8")))
    b = zarrkit.create_array(tmp_path / "b.zarr", shape=a.shape, chunks=(4, 40), shards=(16, 40), dtype="f4")
    da.store(x, b, lock=False)
    np.testing.assert_array_equal(b[...], data)


def test_to_dask_names_keep_reads_apart(tmp_path):
    pytest.importorskip("dask.array")
    a, data = make(tmp_path, shape=(64, 40), chunks=(4, 40), shards=(16, 40))
    assert zarrkit.to_dask(a).name == zarrkit.to_dask(a).name  # one array, read once
    first, second = zarrkit.to_dask(a, name="zk-a"), zarrkit.to_dask(a, name="zk-b")
    assert (first.name, second.name) == ("zk-a", "zk-b")
    both = first.sum(dtype="f8") + second.sum(dtype="f8")
    assert float(both.compute()) == pytest.approx(2 * float(data.sum(dtype="f8")))


# ---- On devices ------------------------------------------------------------------------------

def _gpu():
    if not zarrkit.config.gpu_available():
        pytest.skip("no usable GPU for zarrkit here (build without CUDA or no device); these run on the GPU machine")
    return pytest.importorskip("cupy", reason="CuPy is not installed; the device tests need it")


@pytest.mark.parametrize("layout", ["chunks", "shards"])
def test_read_devices_every_gpu_and_one_listed_twice(tmp_path, layout):
    cupy = _gpu()
    a, data = make(tmp_path, chunks=(4, 40) if layout == "shards" else (8, 40), shards=(16, 40) if layout == "shards" else None)
    n = cupy.cuda.runtime.getDeviceCount()
    for devices in (list(range(n)), [0, 0], list(range(n))[::-1] * 2):
        parts = zarrkit.read_devices(a, devices=devices)
        pieces = zarrkit.split_selection(a, parts=len(devices))
        assert len(parts) == len(pieces)
        for part, piece, device in zip(parts, pieces, devices):
            assert part.device.id == device
            np.testing.assert_array_equal(part.get(), data[piece])
    # out=: arrays of other strides on their devices.
    pieces = zarrkit.split_selection(a, np.s_[2:60, 1:39], parts=2)
    outs = []
    for k, piece in enumerate(pieces):
        with cupy.cuda.Device(k % n):
            shape = a[piece].shape
            outs.append(cupy.empty(shape[::-1], dtype="f4").T)
    got = zarrkit.read_devices(a, np.s_[2:60, 1:39], out=outs)
    for part, piece in zip(got, pieces):
        np.testing.assert_array_equal(part.get(), data[piece])


def test_write_devices_from_every_gpu(tmp_path):
    cupy = _gpu()
    a, data = make(tmp_path, chunks=(4, 40), shards=(16, 40))
    b = zarrkit.create_array(tmp_path / "b.zarr", shape=a.shape, chunks=(4, 40), shards=(16, 40), dtype="f4")
    n = cupy.cuda.runtime.getDeviceCount()
    parts = zarrkit.read_devices(a, devices=[k % n for k in range(4)])
    zarrkit.write_devices(b, list(zip(zarrkit.split_selection(a, parts=4), parts)))
    np.testing.assert_array_equal(b[...], data)
    # Parts cut inside shards are written one after another: nothing is lost.
    c = zarrkit.create_array(tmp_path / "c.zarr", shape=a.shape, chunks=(4, 40), shards=(16, 40), dtype="f4")
    rows = [np.s_[r : r + 4] for r in range(0, 64, 4)]
    values = []
    for k, r in enumerate(rows):
        with cupy.cuda.Device(k % n):
            values.append(cupy.asarray(data[r]))
    zarrkit.write_devices(c, list(zip(rows, values)))
    np.testing.assert_array_equal(c[...], data)


def test_to_dask_on_the_device(tmp_path):
    cupy = _gpu()
    da = pytest.importorskip("dask.array")
    import dask

    a, data = make(tmp_path, chunks=(4, 40), shards=(16, 40))
    x = zarrkit.to_dask(a, device=True)
    assert isinstance(x._meta, cupy.ndarray)
    with dask.config.set(scheduler="threads"):
        assert float(x.sum(dtype="f8").compute()) == pytest.approx(float(data.sum(dtype="f8")))
        b = zarrkit.create_array(tmp_path / "b.zarr", shape=a.shape, chunks=(4, 40), shards=(16, 40), dtype="f4")
        da.store(x * 2, b, lock=False)
    np.testing.assert_array_equal(b[...], data * 2)
