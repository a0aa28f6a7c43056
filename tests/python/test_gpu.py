"""zarrkit on the GPU from Python: enable_gpu() reads into CuPy arrays, writes take device
arrays (CuPy, __cuda_array_interface__, DLPack). Skipped, with the reason, where this build
or machine has no usable GPU or CuPy is missing; they run on the GPU machine."""

from __future__ import annotations

import numpy as np
import pytest

import zarrkit

if not zarrkit.config.gpu_available():
    pytest.skip(
        "no usable GPU for zarrkit here (build without CUDA or no device); the GPU tests run on the GPU machine",
        allow_module_level=True,
    )
cupy = pytest.importorskip("cupy", reason="CuPy is not installed; the GPU tests need it")

BLOSC = {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 4}}
CHAINS = {
    "raw": None,
    "blosc-lz4": [BLOSC],
    "blosc-lz4+crc32c": [BLOSC, {"name": "crc32c"}],
    "numcodecs-lz4": [{"id": "lz4", "acceleration": 1}],
    "zstd": [{"name": "zstd", "configuration": {"level": 1}}],
    "gzip": [{"name": "gzip", "configuration": {"level": 1}}],
}
SELECTIONS = [..., (slice(3, 40), slice(None, None, 3)), (5, slice(None)), (slice(None, None, -2), -1), (slice(7, 7), 2)]


def values(shape=(45, 67), dtype="f4", seed=0):
    rng = np.random.default_rng(seed)
    return (np.round(rng.normal(size=shape) * 64) / 64).astype(dtype)


def make(store, data, chain, **kwargs):
    return zarrkit.create_array(store, data=data, chunks=(8, 16), compressors=CHAINS[chain], **kwargs)


@pytest.mark.parametrize("chain", sorted(CHAINS))
@pytest.mark.parametrize("selection", SELECTIONS, ids=repr)
def test_enable_gpu_reads_return_cupy(store, chain, selection):
    data = values()
    a = make(store, data, chain)
    with zarrkit.config.enable_gpu():
        assert zarrkit.config.memory == "device"
        got = a[selection]
    assert isinstance(got, cupy.ndarray)
    np.testing.assert_array_equal(cupy.asnumpy(got), data[selection])
    assert zarrkit.config.memory == "host"
    assert isinstance(a[selection], (np.ndarray, np.generic))


@pytest.mark.parametrize("shards", [None, (16, 32)])
def test_sharded_and_v2_reads(tmp_path, shards):
    data = values((40, 70), "i2", seed=1)
    a = zarrkit.create_array(tmp_path / "s.zarr", data=data, chunks=(8, 16), shards=shards, compressors=[BLOSC])
    b = zarrkit.create_array(tmp_path / "v2.zarr", data=data, chunks=(9, 13), zarr_format=2, order="F",
                             compressors={"id": "blosc", "cname": "lz4", "clevel": 3, "shuffle": 2})
    zarrkit.config.enable_gpu()
    try:
        for arr in (a, b):
            np.testing.assert_array_equal(cupy.asnumpy(arr[2:37, ::4]), data[2:37, ::4])
            np.testing.assert_array_equal(cupy.asnumpy(arr.oindex[[5, 1, 5], 3:9]), data[[5, 1, 5], 3:9])
            assert isinstance(arr.vindex[[0, 3], [2, 5]], cupy.ndarray)
            assert isinstance(np.asarray(arr), np.ndarray)  # NumPy's protocol still gives host memory
    finally:
        zarrkit.config.reset()


def test_read_into_device_out_with_strides(store):
    data = values()
    a = make(store, data, "blosc-lz4")
    big = cupy.full((90, 67), -1, dtype="f4")
    out = big[::2]  # every other row: a strided device view
    assert a.get_basic_selection(..., out=out) is out
    np.testing.assert_array_equal(cupy.asnumpy(out), data)
    assert bool((big[1::2] == -1).all())
    with pytest.raises(ValueError, match="out has shape"):
        a.get_basic_selection(..., out=cupy.empty((3, 3), dtype="f4"))


@pytest.mark.parametrize("chain", sorted(CHAINS))
def test_writes_from_cupy(store, chain):
    data = values(seed=2)
    a = make(store, np.zeros_like(data), chain)
    a[...] = cupy.asarray(data)  # whole chunks: encoded on the GPU where the chain allows
    np.testing.assert_array_equal(a[...], data)
    patch = values((10, 20), seed=3)
    a[4:14, 30:50] = cupy.asarray(patch)  # partial chunks
    data[4:14, 30:50] = patch
    a[40:, ::7] = cupy.asarray(np.float32(2.5))  # a device scalar, broadcast
    data[40:, ::7] = 2.5
    a.oindex[[3, 0], :5] = cupy.asarray(values((2, 5), seed=4)).astype("f8")  # other dtype, list axis
    data[[3, 0], :5] = values((2, 5), seed=4)
    np.testing.assert_array_equal(a[...], data)


class InterfaceOnly:
    """A producer that exposes only __cuda_array_interface__ (as Numba and PyTorch do)."""

    def __init__(self, array):
        self._array = array
        self.__cuda_array_interface__ = array.__cuda_array_interface__


class DLPackOnly:
    """A producer that exposes only DLPack (as JAX does)."""

    def __init__(self, array):
        self._array = array

    def __dlpack__(self, *args, **kwargs):
        return self._array.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()


@pytest.mark.parametrize("wrap", [InterfaceOnly, DLPackOnly], ids=["cuda_array_interface", "dlpack"])
def test_writes_from_other_producers(store, wrap):
    data = values(seed=5)
    a = make(store, np.zeros_like(data), "blosc-lz4")
    a[...] = wrap(cupy.asarray(data))
    np.testing.assert_array_equal(a[...], data)
    a[1:9, ::2] = wrap(cupy.asarray(data[1:9, ::2] * 2))  # a strided source copied by the producer
    data[1:9, ::2] *= 2
    np.testing.assert_array_equal(a[...], data)


def test_write_waits_for_the_producers_stream(store):
    # The value is computed on a non-default stream and written before that stream is
    # synchronised: the engine must wait for it.
    data = values((64, 64), seed=6)
    a = make(store, np.zeros_like(data), "blosc-lz4")
    with cupy.cuda.Stream(non_blocking=True):
        x = cupy.asarray(data)
        for _ in range(20):
            x = x * 1.0 + 0.0
        a[...] = x
    np.testing.assert_array_equal(a[...], data)


def test_host_only_selections_take_device_values(store):
    data = values(seed=7)
    a = make(store, data, "zstd")
    a.vindex[[1, 2], [3, 4]] = cupy.asarray([9.0, 8.0], dtype="f4")
    a.blocks[0, 0] = cupy.zeros((8, 16), dtype="f4")
    data[[1, 2], [3, 4]] = [9.0, 8.0]
    data[:8, :16] = 0
    np.testing.assert_array_equal(a[...], data)


def test_gpu_written_arrays_read_by_zarr_python(tmp_path):
    zarr = pytest.importorskip("zarr", reason="zarr-python is not installed")
    data = values((33, 70), seed=8)
    for i, compressors in enumerate([[BLOSC], [BLOSC, {"name": "crc32c"}], [{"id": "lz4", "acceleration": 1}]]):
        path = tmp_path / f"w{i}.zarr"
        a = zarrkit.create_array(path, shape=data.shape, dtype="f4", chunks=(8, 16), compressors=compressors)
        a[...] = cupy.asarray(data)
        np.testing.assert_array_equal(zarr.open_array(str(path), mode="r")[...], data)


def test_gpu_memory_store(tmp_path):
    import pickle

    store = zarrkit.storage.GpuMemoryStore({"raw": b"abc"})
    assert store.get("raw") == b"abc"
    data = values((50, 70), "i4", seed=3)
    a = zarrkit.create_array(store, data=data, chunks=(16, 16), compressors=[BLOSC, {"name": "crc32c"}])
    np.testing.assert_array_equal(a[...], data)  # CPU read of device-held chunks
    with zarrkit.config.enable_gpu():
        got = a[3:40, ::3]
    assert isinstance(got, cupy.ndarray)
    np.testing.assert_array_equal(cupy.asnumpy(got), data[3:40, ::3])
    a[:10] = cupy.asarray(data[:10] * 2)  # written from device memory
    np.testing.assert_array_equal(a[:10], data[:10] * 2)
    copy = pickle.loads(pickle.dumps(store))
    assert isinstance(copy, zarrkit.storage.GpuMemoryStore)
    assert sorted(copy.list()) == sorted(store.list())
    np.testing.assert_array_equal(zarrkit.open_array(copy, mode="r")[:10], data[:10] * 2)


@pytest.mark.parametrize("chain", ["blosc-lz4", "zstd", "sharded"])
def test_decode_chunks_into_device_arrays(store, chain):
    data = values(shape=(40, 48))
    if chain == "sharded":
        a = zarrkit.create_array(store, data=data, chunks=(8, 16), shards=(16, 32), compressors=[BLOSC])
    else:
        a = zarrkit.create_array(store, data=data, chunks=(16, 32), compressors=CHAINS[chain])
    stored = store.get_many(["c/0/0", "c/1/1", "c/0/1"]) + [None]
    # New CuPy arrays under enable_gpu(); given CuPy outputs (a strided view) with device=True.
    with zarrkit.config.enable_gpu():
        got = zarrkit.decode_chunks(a, stored)
    assert all(isinstance(g, cupy.ndarray) for g in got)
    np.testing.assert_array_equal(cupy.asnumpy(got[0]), data[:16, :32])
    np.testing.assert_array_equal(cupy.asnumpy(got[1])[:, :16], data[16:32, 32:])
    np.testing.assert_array_equal(cupy.asnumpy(got[3]), np.zeros((16, 32), "f4"))
    wide = cupy.full((5, 32), -1, dtype="f4")
    outs = [wide[:, ::2], cupy.empty(3, dtype="f4")]
    zarrkit.decode_chunks(a, stored[:2], selections=[(slice(1, 16, 3), slice(None, None, -2)), (4, [0, 5, 3])], out=outs, device=True)
    np.testing.assert_array_equal(cupy.asnumpy(wide[:, ::2]), data[:16, :32][1:16:3, ::-2])
    assert (cupy.asnumpy(wide[:, 1::2]) == -1).all()
    np.testing.assert_array_equal(cupy.asnumpy(outs[1]), data[20, [32, 37, 35]])


def test_read_chunks_into_device_arrays(store):
    data = values(shape=(40, 48))
    a = zarrkit.create_array(store, data=data, chunks=(16, 32), compressors=[BLOSC])
    got = zarrkit.read_chunks(a, store, ["c/0/0", "c/2/1", "c/7/7"], device=True)
    assert all(isinstance(g, cupy.ndarray) for g in got)
    np.testing.assert_array_equal(cupy.asnumpy(got[0]), data[:16, :32])
    np.testing.assert_array_equal(cupy.asnumpy(got[1])[:8, :16], data[32:, 32:])
    np.testing.assert_array_equal(cupy.asnumpy(got[2]), np.zeros((16, 32), "f4"))
