"""Variables of the xarray backend that live in GPU memory.

xarray's CF decoding (masking fill values, scale and offset) converts to NumPy, and Dask
blocks of xarray's lazily indexed arrays pass through ``np.asarray``; neither keeps CuPy
arrays. So for a dataset opened under ``enable_gpu()`` the backend decodes masks and
scales itself, on the device, exactly as xarray's coders would on the host (their dtype
and encoding are taken from xarray's own coders, run on an empty array), and hands xarray
lazily indexed device arrays whose values are already decoded. xarray's Dask chunking
converts every block of a backend to NumPy; `device_chunk_manager` is its Dask chunk manager
without that conversion (``chunked_array_type=`` of ``open_dataset``).
Variables this cannot decode on the device (times, ``_Unsigned``, strings) stay on the
host, as do dimension coordinates (pandas indexes).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from xarray.coding import variables as coding
from xarray.core.variable import Variable


@dataclass(frozen=True)
class DeviceDecoding:
    """What xarray's mask and scale coders do to one variable, to be done on the device."""

    dtype: np.dtype
    fill_values: tuple[Any, ...]
    scale_factor: Any
    add_offset: Any
    attrs: dict[str, Any]
    encoding: dict[str, Any]

    def apply(self, block: Any) -> Any:
        """The decoded values of ``block`` (a CuPy array; NumPy works the same)."""
        out = block.astype(self.dtype, copy=True)
        if self.fill_values:
            masked = block == self.fill_values[0]
            for value in self.fill_values[1:]:
                masked |= block == value
            out[masked] = np.nan
        if self.scale_factor is not None:
            out *= self.scale_factor
        if self.add_offset is not None:
            out += self.add_offset
        return out


def _cupy() -> Any:
    from zarrkit import _device

    return _device._cupy()


def device_decoding(dimensions: tuple[str, ...], dtype: np.dtype, attrs: dict[str, Any],
                    mask_and_scale: bool) -> DeviceDecoding | None:
    """How to decode a variable on the device, or None where it stays on the host."""
    if dtype.kind not in "biuf" or "_Unsigned" in attrs or " since " in str(attrs.get("units", "")):
        return None
    if not mask_and_scale:
        return DeviceDecoding(dtype, (), None, None, dict(attrs), {})
    empty = Variable(dimensions, np.empty((0,) * len(dimensions), dtype=dtype), dict(attrs))
    decoded = coding.CFScaleOffsetCoder().decode(coding.CFMaskCoder().decode(empty))
    encoding = dict(decoded.encoding)
    fills = tuple(
        v for key in ("_FillValue", "missing_value") if key in encoding
        for v in np.ravel(encoding[key]) if not (isinstance(v, float | np.floating) and np.isnan(v))
    )
    if decoded.dtype.kind not in "biuf" or (fills and decoded.dtype.kind != "f"):
        return None
    return DeviceDecoding(decoded.dtype, fills, encoding.get("scale_factor"), encoding.get("add_offset"),
                          dict(decoded.attrs), encoding)


class DecodedDeviceChunks:
    """Reads of a zarrkit array into GPU memory, decoded: what Dask (or xarray's lazy
    indexing) takes blocks from."""

    def __init__(self, array: Any, decoding: DeviceDecoding) -> None:
        from zarrkit._multi_device import _DeviceChunks

        self._chunks = _DeviceChunks(array)
        self.decoding = decoding
        self.shape = tuple(array.shape)
        self.dtype = decoding.dtype
        self.ndim = len(self.shape)

    def __getitem__(self, key: Any) -> Any:
        return self.decoding.apply(self._chunks[key])


def _device_block(source: Any, key: Any) -> Any:
    # What Dask calls for each block: xarray's lazy indexing down to the device read, and no
    # conversion to NumPy on the way (host variables' blocks move to the device).
    block = source[key]
    while hasattr(block, "get_duck_array"):
        block = block.get_duck_array()
    return _cupy().asarray(block)


def device_chunk_manager() -> Any:
    """xarray's Dask chunk manager, but making Dask arrays of CuPy blocks: what
    ``chunked_array_type=`` takes (see zarrkit.xarray_backend.GPU_CHUNKS)."""
    from xarray.namedarray.daskmanager import DaskManager

    class DeviceDaskManager(DaskManager):
        def is_chunked_array(self, data: Any) -> bool:
            # The arrays it makes are plain Dask arrays, left to Dask's own manager.
            return False

        def from_array(self, data: Any, chunks: Any, **kwargs: Any) -> Any:
            import dask.array as da

            kwargs.pop("meta", None)
            meta = _cupy().empty((0,) * len(data.shape), dtype=data.dtype)
            return da.from_array(data, chunks, meta=meta, getitem=_device_block, asarray=False, **kwargs)

    return DeviceDaskManager()
