"""GPU (device) arrays on the Python side: recognising them and describing their memory.

zarrkit takes any object that exposes ``__cuda_array_interface__`` (CuPy, Numba, PyTorch
CUDA tensors) or a DLPack capsule on a CUDA device (``__dlpack_device__``; JAX, PyTorch).
DLPack producers and values that need a dtype change, broadcasting or an axis move go
through CuPy, which is then required; a plain device array of the right shape and dtype
is handed to the engine as it is. Reads into device memory (``zarrkit.config.enable_gpu()``)
return CuPy arrays.
"""

from __future__ import annotations

from typing import Any

import numpy as np

# DLPack device types that live in GPU memory: kDLCUDA, kDLCUDAManaged.
_DLPACK_CUDA_DEVICES = (2, 13)


def is_device_array(value: Any) -> bool:
    """True for objects whose data lives in GPU memory (see the module docstring)."""
    if isinstance(value, np.ndarray):
        return False
    if hasattr(value, "__cuda_array_interface__"):
        return True
    device = getattr(value, "__dlpack_device__", None)
    if device is None:
        return False
    try:
        return int(device()[0]) in _DLPACK_CUDA_DEVICES
    except Exception:
        return False


def _cupy() -> Any:
    try:
        import cupy
    except ImportError as e:  # pragma: no cover - depends on the machine
        raise ImportError(
            "reading into or writing from GPU memory with this value needs CuPy (pip install cupy-cuda13x)"
        ) from e
    return cupy


def new_device_array(shape: tuple[int, ...], dtype: np.dtype) -> Any:
    """An uninitialised CuPy array (the engine fills every element)."""
    return _cupy().empty(shape, dtype=dtype)


def as_cupy(value: Any) -> Any:
    cupy = _cupy()
    if isinstance(value, cupy.ndarray):
        return value
    if hasattr(value, "__cuda_array_interface__"):
        return cupy.asarray(value)
    return cupy.from_dlpack(value)


def as_cupy_copy(value: np.ndarray) -> Any:
    """A CuPy copy of a host array."""
    return _cupy().asarray(value)


def to_host(value: Any) -> np.ndarray:
    """A NumPy copy of a device array (for paths that work in host memory)."""
    return np.asarray(as_cupy(value).get())


def interface(value: Any) -> tuple[int, tuple[int, ...], list[int], np.dtype, int]:
    """(pointer, shape, byte strides, dtype, stream) of a ``__cuda_array_interface__`` object.

    ``stream`` is the one the producer names (0 when none): the engine waits for it before
    it reads the memory, as the interface's version 3 asks of consumers.
    """
    cai = value.__cuda_array_interface__
    shape = tuple(int(n) for n in cai["shape"])
    dtype = np.dtype(cai["typestr"])
    if cai.get("descr") and len(cai["descr"]) > 1:
        dtype = np.dtype([tuple(d) for d in cai["descr"]])
    strides = cai.get("strides")
    if strides is None:  # C-contiguous
        strides, step = [], dtype.itemsize
        for n in reversed(shape):
            strides.insert(0, step)
            step *= max(n, 1)
    pointer = int(cai["data"][0]) if cai.get("data") else 0
    stream = cai.get("stream")
    return pointer, shape, [int(s) for s in strides], dtype, int(stream) if stream else 0


def device_write_source(value: Any, dtype: np.dtype, shape: tuple[int, ...], moved: int | None) -> tuple[Any, tuple]:
    """The device array to write to a selection of ``shape`` (in the engine's axis order),
    and its interface: converted, broadcast and axis-moved through CuPy only when needed.
    Returns (object that keeps the memory alive, interface tuple)."""
    numpy_shape = shape if moved is None else (shape[moved], *shape[:moved], *shape[moved + 1 :])
    direct = hasattr(value, "__cuda_array_interface__") and moved is None
    if direct:
        pointer, vshape, strides, vdtype, stream = interface(value)
        if vshape == tuple(shape) and vdtype == dtype:
            return value, (pointer, vshape, strides, stream)
    cupy = _cupy()
    data = as_cupy(value)
    if data.dtype != dtype:
        data = data.astype(dtype)
    if data.shape != numpy_shape:
        data = cupy.broadcast_to(data, numpy_shape)
    if moved is not None:
        data = cupy.moveaxis(data, 0, moved)
    if any(s == 0 for s in data.strides) and data.size > 1:
        data = cupy.ascontiguousarray(data)  # the engine gathers from real elements
    pointer, vshape, strides, _, stream = interface(data)
    return data, (pointer, vshape, strides, stream)
