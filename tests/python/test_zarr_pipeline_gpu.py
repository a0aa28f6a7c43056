"""zarr-python with zarr.config.enable_gpu() and zarrkit's codec pipeline: reads return
CuPy arrays decoded on the GPU by zarrkit, equal to what zarr-python reads on the CPU.
Skipped, with the reason, where there is no usable GPU or CuPy; they run on the GPU
machine."""

from __future__ import annotations

import numpy as np
import pytest

numcodecs = pytest.importorskip("numcodecs", reason="numcodecs is not installed; the zarr-python GPU tests need it")
zarr = pytest.importorskip("zarr", reason="zarr-python is not installed; the zarr-python GPU tests need it")
import zarr.codecs as zc  # noqa: E402

import zarrkit  # noqa: E402
from zarrkit import zarr_pipeline  # noqa: E402

if not zarrkit.config.gpu_available():
    pytest.skip(
        "no usable GPU for zarrkit here (build without CUDA or no device); the GPU tests run on the GPU machine",
        allow_module_level=True,
    )
cupy = pytest.importorskip("cupy", reason="CuPy is not installed; the GPU tests need it")

OURS = "zarrkit.zarr_pipeline.ZarrkitCodecPipeline"

V3 = {
    "raw": {"compressors": None},
    "blosc-lz4": {"compressors": zc.BloscCodec(cname="lz4", clevel=5, shuffle="shuffle")},
    "blosc-bitshuffle-crc32c": {
        "compressors": [zc.BloscCodec(cname="blosclz", shuffle="bitshuffle"), zc.Crc32cCodec()]
    },
    "zstd": {"compressors": zc.ZstdCodec(level=3)},
    "gzip-transpose-bigendian": {
        "filters": [zc.TransposeCodec(order=(1, 0))],
        "serializer": zc.BytesCodec(endian="big"),
        "compressors": zc.GzipCodec(level=1),
    },
    "sharded": {"shards": (20, 24), "chunks": (5, 6)},
}
V2 = {
    "blosc": {"compressors": numcodecs.Blosc(cname="lz4", shuffle=numcodecs.Blosc.SHUFFLE)},
    "lz4-F": {"compressors": numcodecs.LZ4(), "order": "F"},
}
SELECTIONS = {
    "all": lambda a: a[...],
    "slices": lambda a: a[3:37:2, 5:],
    "int-axis": lambda a: a[7, :],
    "oindex": lambda a: a.oindex[[0, 5, 39], [1, 2, 47]],
    # Point lists (vindex with integer arrays) are left out: zarr-python 3.1's
    # get_coordinate_selection reshapes its result with np.array(), which CuPy refuses, with
    # either pipeline. Masks take another path and work.
    "mask": lambda a: a.vindex[(np.arange(40 * 48).reshape(40, 48) % 7) == 0],
}


def make(path, zarr_format, kwargs):
    data = (np.arange(40 * 48).reshape(40, 48) % 251).astype("f4") - 100
    options = {"chunks": (10, 12), **kwargs}
    a = zarr.create_array(path, shape=data.shape, dtype="f4", zarr_format=zarr_format, fill_value=-1, **options)
    a[:] = data
    a[30:, :] = -1  # these chunks are not stored: they read as the fill value
    data[30:, :] = -1
    return data


CASES = [(3, name, kwargs) for name, kwargs in V3.items()] + [(2, name, kwargs) for name, kwargs in V2.items()]


@pytest.mark.parametrize("zarr_format,name,kwargs", CASES, ids=[f"v{f}-{n}" for f, n, _ in CASES])
@pytest.mark.parametrize("selection", sorted(SELECTIONS))
def test_enable_gpu_reads_decode_on_the_gpu(tmp_path, zarr_format, name, kwargs, selection):
    path = tmp_path / "a.zarr"
    data = make(path, zarr_format, kwargs)
    expected = SELECTIONS[selection](zarr.open_array(path, mode="r"))  # zarr-python on the CPU
    np.testing.assert_array_equal(zarr.open_array(path, mode="r")[...], data)
    before = dict(zarr_pipeline.stats)
    with zarr.config.set({"codec_pipeline.path": OURS}), zarr.config.enable_gpu():
        got = SELECTIONS[selection](zarr.open_array(path, mode="r"))
    assert isinstance(got, cupy.ndarray)
    np.testing.assert_array_equal(cupy.asnumpy(got), expected)
    assert zarr_pipeline.stats["gpu_decoded"] > before["gpu_decoded"]
    assert zarr_pipeline.stats["fallback_decoded"] == before["fallback_decoded"]


def test_corrupt_chunk_goes_to_zarr_python_which_reports_it(tmp_path):
    # zarrkit refuses the batch (a truncated blosc chunk); zarr-python then reads it the
    # way it always does, so the user sees zarr-python's own error, never wrong data.
    path = tmp_path / "a.zarr"
    make(path, 3, V3["blosc-lz4"])
    chunk = path / "c" / "1" / "1"
    chunk.write_bytes(chunk.read_bytes()[:20])
    with zarr.config.set({"codec_pipeline.path": OURS}), zarr.config.enable_gpu():
        with pytest.raises(Exception) as caught:
            zarr.open_array(path, mode="r")[...]
    assert not isinstance(caught.value, AssertionError)
