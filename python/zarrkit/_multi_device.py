"""Several GPUs at once: one array read into every GPU of a host, written from several,
and Dask arrays whose chunks decode on the worker's own GPU.

>>> parts = zarrkit.read_devices(a, devices=[0, 1, 2, 3])      # one CuPy array per GPU
>>> zarrkit.split_selection(a, parts=4)                           # which part is which
>>> x = zarrkit.to_dask(a, device=True)                           # CuPy-backed Dask array

The selection is cut along one axis of the array, at the boundaries of its stored chunks
(shards, for sharded arrays), so that no chunk is read twice; each part is read on its own
device, on a thread of its own, with its device's streams, staging and batches, while the
host's decode threads serve all parts.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from zarrkit import _device


def _engine_key(key: tuple[Any, ...]) -> tuple[Any, ...]:
    # Lists of indices go to the engine as 1-d int64 arrays.
    return tuple(np.asarray(k, dtype=np.int64) if isinstance(k, list) else k for k in key)


def _parts(array: Any, selection: Any, axis: int, parts: int) -> list[tuple[Any, ...]]:
    key, moved = array._key(selection, lists="orthogonal")
    if moved is not None:
        raise ValueError("a selection whose list moves its axis first cannot be split; use an orthogonal selection")
    if not 0 <= axis < array.ndim:
        raise ValueError(f"axis {axis} is out of range for an array with {array.ndim} axes")
    if parts < 1:
        raise ValueError(f"parts must be at least 1, got {parts}")
    return [_engine_key(k) for k in array._impl.split_selection(key, axis, parts)]


def split_selection(array: Any, selection: Any = Ellipsis, *, axis: int = 0, parts: int) -> list[tuple[Any, ...]]:
    """``selection`` of ``array`` cut along the array's axis ``axis`` into at most ``parts``
    consecutive index tuples, at stored chunk (shard) boundaries with the chunks balanced
    among them; fewer come back where the axis holds fewer chunks. ``read_devices`` reads
    part ``i`` into ``devices[i]``."""
    return [tuple(k.tolist() if isinstance(k, np.ndarray) else k for k in key) for key in _parts(array, selection, axis, parts)]


def _device_count() -> int:
    return int(_device._cupy().cuda.runtime.getDeviceCount())


def read_devices(
    array: Any,
    selection: Any = Ellipsis,
    *,
    devices: Sequence[int] | None = None,
    axis: int = 0,
    out: Sequence[Any] | None = None,
) -> list[Any]:
    """Reads ``selection`` of ``array`` into several GPUs at once: cut along ``axis`` as
    ``split_selection`` cuts it, part ``i`` lands on ``devices[i]`` (default: every visible
    GPU). Returns one CuPy array per part (fewer than ``devices`` where the axis holds fewer
    chunks). ``out=``: device arrays to read into instead, one per part, each on its own
    device (any strides); their number sets the parts."""
    cupy = _device._cupy()
    if out is not None:
        targets = list(out)
        keys = _parts(array, selection, axis, len(targets))
        if len(keys) != len(targets):
            raise ValueError(f"the selection splits into {len(keys)} parts along axis {axis}, but out has {len(targets)}")
    else:
        devs = list(range(_device_count())) if devices is None else [int(d) for d in devices]
        if not devs:
            raise ValueError("devices is empty")
        keys = _parts(array, selection, axis, len(devs))
        targets = []
        for key, device in zip(keys, devs):
            with cupy.cuda.Device(device):
                targets.append(cupy.empty(tuple(array._impl.selection_shape(key)), dtype=array.dtype))
    work = []
    for key, target in zip(keys, targets):
        pointer, shape, strides, dtype, _ = _device.interface(target)
        expected = tuple(array._impl.selection_shape(key))
        if shape != expected or dtype != array.dtype:
            raise ValueError(f"out has shape {shape} and dtype {dtype}; its part needs {expected} and {array.dtype}")
        work.append((key, pointer, list(shape), list(strides)))
    array._impl.read_into_devices(work)
    return targets


def write_devices(array: Any, parts: Sequence[tuple[Any, Any]]) -> None:
    """Writes ``(selection, device_array)`` pairs at once, each from its own GPU (each array
    of its selection's shape and the array's dtype). Parts that touch a common stored chunk
    are written one after another (so no part's values are lost), the others at once: cut
    the parts with ``split_selection`` to have them all at once."""
    array._check_writable()
    work = []
    keep = []
    for selection, value in parts:
        key, moved = array._key(selection, lists="orthogonal")
        if moved is not None:
            raise ValueError("a selection whose list moves its axis first cannot be written from several devices")
        shape = tuple(array._impl.selection_shape(key))
        # A conversion (dtype, broadcast) runs on the value's own device.
        device = getattr(getattr(value, "device", None), "id", None)
        with _device._cupy().cuda.Device(device) if device is not None else contextlib.nullcontext():
            held, (pointer, vshape, strides, stream) = _device.device_write_source(value, array.dtype, shape, None)
        keep.append(held)
        work.append((key, pointer, list(vshape), list(strides), stream))
    array._impl.write_from_devices(work, array._write_empty_chunks)
    del keep


class _HostChunks:
    """What Dask reads the blocks of an array on a rectilinear grid from: Dask asks its source
    for `chunks` and expects an int per axis, which such an array does not have (it raises,
    as zarr-python's does)."""

    def __init__(self, array: Any) -> None:
        self.array = array
        self.shape = array.shape
        self.dtype = array.dtype
        self.ndim = array.ndim

    def __getitem__(self, key: Any) -> Any:
        return self.array[key]

    def __reduce__(self) -> tuple[Any, ...]:
        return (_HostChunks, (self.array,))


class _DeviceChunks:
    """What Dask reads a device-backed array's blocks from: each block is read into a CuPy
    array on the current device (a Dask-CUDA worker's own GPU)."""

    def __init__(self, array: Any) -> None:
        self.array = array
        self.shape = array.shape
        self.dtype = array.dtype
        self.ndim = array.ndim

    def __getitem__(self, key: Any) -> Any:
        engine_key, moved = self.array._key(key, lists="orthogonal")
        shape = tuple(self.array._impl.selection_shape(engine_key))
        out = _device.new_device_array(shape, self.array.dtype)
        return self.array._read(engine_key, moved, out)


def to_dask(array: Any, chunks: Any = None, *, device: bool = False, name: str | None = None) -> Any:
    """``array`` as a Dask array, one task per stored chunk (shard, for sharded arrays)
    unless ``chunks`` says otherwise. ``device=True``: blocks are CuPy arrays, each decoded
    on the GPU of the worker that computes it (under ``dask_cuda.LocalCUDACluster``, one per
    GPU). ``da.store(x, array)`` writes back, from device memory too. ``name`` as in
    ``dask.array.from_array`` (by default a token of the array and chunks: two calls give one
    Dask array, read once per computation)."""
    import dask.array as da

    if chunks is None:
        # A rectilinear grid has no one chunk shape: Dask takes its sizes listed per axis.
        chunks = array.write_chunk_sizes if array._impl.is_rectilinear else (array.shards or array.chunks)
    named = {} if name is None else {"name": name}
    if not device:
        source = _HostChunks(array) if array._impl.is_rectilinear else array
        return da.from_array(source, chunks=chunks, lock=False, asarray=False, fancy=False, **named)
    cupy = _device._cupy()
    meta = cupy.empty((0,) * array.ndim, dtype=array.dtype)
    return da.from_array(_DeviceChunks(array), chunks=chunks, lock=False, asarray=False, fancy=False, meta=meta,
                         **named)
