"""Decoding many encoded chunks at once, into NumPy or device arrays (``zarrkit.decode_chunks``,
``zarrkit.read_chunks``).

For readers that fetch chunk bytes themselves (a data loader holding its own cache of
compressed chunks, zarr-python's codec pipeline, a custom store): the chunks of one array
are decoded in one call, on the engine's threads into host memory, or on the GPU in
batches into device memory (chunks whose codecs have no device half are decoded on the
host's threads and copied). It is the C++ ``zarrkit::decode_chunks``
(``zarrkit/batch_decode.h``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from zarrkit import _device, _zarrkit
from zarrkit._dtype import numpy_dtype

__all__ = ["decode_chunks", "read_chunks"]


def _metadata_json(metadata: Any) -> str:
    from zarrkit.array import Array

    if isinstance(metadata, Array):
        metadata = metadata.metadata
    if isinstance(metadata, (bytes, bytearray)):
        metadata = metadata.decode()
    if isinstance(metadata, str):
        metadata = json.loads(metadata)
    if not isinstance(metadata, Mapping):
        raise TypeError(
            "metadata must be a zarrkit.Array or an array's metadata document (zarr.json or .zarray, "
            f"as a dict or JSON text), not {type(metadata).__name__}"
        )
    # v2 documents as zarrkit.Array.metadata shows them carry the .zattrs under "attributes".
    document = dict(metadata)
    if document.get("zarr_format") == 2:
        document.pop("attributes", None)
    return json.dumps(document)


def _key(selection: Any) -> Any:
    """`selection` with lists as NumPy arrays (the engine takes integers, slices, ``...`` and
    1-d integer or boolean arrays)."""
    entries = selection if isinstance(selection, tuple) else (selection,)
    return tuple(np.asarray(e) if isinstance(e, list) else e for e in entries)


def _part_shape(chunk_shape: tuple[int, ...], key: Any) -> tuple[int, ...]:
    """The shape NumPy gives `key` applied to an array of `chunk_shape` (no allocation)."""
    return np.broadcast_to(np.empty((), dtype=np.bool_), chunk_shape)[key].shape


def _layout(array: Any, on_device: bool) -> tuple[int, tuple[int, ...], tuple[int, ...]]:
    """(address, shape, byte strides) of a device array (`on_device`) or a NumPy array, as the
    engine's decode_into and read_into take an output."""
    interface = array.__cuda_array_interface__ if on_device else array.__array_interface__
    shape = tuple(int(n) for n in interface["shape"])
    strides = interface.get("strides")
    if strides is None:  # C-contiguous
        strides_list, step = [], array.dtype.itemsize
        for n in reversed(shape):
            strides_list.insert(0, step)
            step *= max(n, 1)
        strides = strides_list
    return int(interface["data"][0]), shape, tuple(int(s) for s in strides)


def decode_chunks(
    metadata: Any,
    chunks: Sequence[Any],
    *,
    selections: Sequence[Any] | None = None,
    out: Sequence[Any] | None = None,
    device: bool | None = None,
) -> list[Any]:
    """Decodes `chunks`, the stored values of chunks of one array, in one batch.

    - ``metadata``: the array (a ``zarrkit.Array``) or its metadata document (zarr.json or
      .zarray, a dict or JSON text): its codecs, chunk shape, data type and fill value.
      For a sharded array a chunk is a whole shard.
    - ``chunks``: bytes-like objects (host memory), or None for a chunk that is not stored
      (it decodes to the fill value).
    - ``selections``: per chunk, the part wanted, a NumPy key (``(slice(0, 10), 3)``, integer
      arrays, ``...``); default the whole chunk. Of a sharded chunk only the inner chunks
      the part touches are decoded.
    - ``out``: per chunk, the array to decode into: NumPy or device arrays (CuPy, anything
      with ``__cuda_array_interface__``) of the part's shape and the array's dtype, any
      strides. Default: new arrays, CuPy when ``device`` is true (default: when
      ``zarrkit.config.enable_gpu()`` is on), else NumPy.

    Returns the output arrays. Every output is written whole. A chunk that cannot be
    decoded raises the typed error of the read (``zarrkit.errors``), naming its place in
    the batch ("chunk 3 of the batch"), once the others are done.
    """
    plan = _Plan("decode_chunks", metadata, len(chunks), selections, out, device)
    if plan.count:
        plan.chain.decode_into(
            list(chunks), list(plan.chunk_shape), plan.chain.fill_bytes, plan.keys, plan.layouts(), plan.on_device
        )
    return plan.outs


def read_chunks(
    metadata: Any,
    store: Any,
    keys: Sequence[str],
    *,
    selections: Sequence[Any] | None = None,
    out: Sequence[Any] | None = None,
    device: bool | None = None,
) -> list[Any]:
    """:func:`decode_chunks` with the chunks read from ``store`` (a ``zarrkit.storage``
    store or a zarr-python store) at ``keys`` (full keys in the store; an absent key is the fill value). The reads
    happen as the batches need them, into the pinned staging memory of the device batches
    where the GPU takes the bytes as stored (no copy on the host), so this is the faster
    call where zarrkit can open the store itself.
    """
    from zarrkit.storage import Store, _from_zarr_python_store

    if not isinstance(store, Store):
        store = _from_zarr_python_store(store) or store
    if not isinstance(store, Store):
        raise TypeError(
            f"read_chunks: store must be a zarrkit.storage store or a zarr-python store, not {type(store).__name__}"
        )
    keys = [str(k) for k in keys]
    plan = _Plan("read_chunks", metadata, len(keys), selections, out, device)
    if plan.count:
        plan.chain.read_into(
            store._handle, keys, list(plan.chunk_shape), plan.chain.fill_bytes, plan.keys, plan.layouts(), plan.on_device
        )
    return plan.outs


class _Plan:
    """The chain, the parts wanted and the outputs of a batch (checked, or made)."""

    def __init__(self, what: str, metadata: Any, count: int, selections: Any, out: Any, device: bool | None) -> None:
        self.chain = _zarrkit.chain_from_array_metadata(_metadata_json(metadata))
        dtype = numpy_dtype(self.chain.numpy_descr)
        if dtype.kind in "OT":
            raise TypeError(f"{what}: {dtype} has no fixed-size elements")
        self.chunk_shape = tuple(self.chain.chunk_shape)
        self.count = count
        self.keys = [()] * count if selections is None else [_key(k) for k in selections]
        if len(self.keys) != count:
            raise ValueError(f"{what}: {count} chunks but {len(self.keys)} selections")
        part_shapes = [_part_shape(self.chunk_shape, k) for k in self.keys]
        if out is None:
            self.on_device = (_zarrkit.memory_setting() == "device") if device is None else bool(device)
            self.outs = [
                _device.new_device_array(s, dtype) if self.on_device else np.empty(s, dtype=dtype) for s in part_shapes
            ]
            return
        self.outs = list(out)
        if len(self.outs) != count:
            raise ValueError(f"{what}: {count} chunks but {len(self.outs)} outputs")
        kinds = {_device.is_device_array(o) for o in self.outs}
        if len(kinds) > 1:
            raise ValueError(f"{what}: the outputs must all be in host memory or all in device memory")
        self.on_device = kinds.pop() if kinds else bool(device)
        if device is not None and self.on_device != bool(device):
            where = "device" if self.on_device else "host"
            raise ValueError(f"{what}: device={device} but the outputs are in {where} memory")
        for i, (o, s) in enumerate(zip(self.outs, part_shapes)):
            if not self.on_device and not isinstance(o, np.ndarray):
                raise TypeError(f"{what}: output {i} is a {type(o).__name__}, not a NumPy or device array")
            if tuple(o.shape) != s or np.dtype(o.dtype) != dtype:
                raise ValueError(f"{what}: output {i} is {tuple(o.shape)} {np.dtype(o.dtype)}, the part is {s} {dtype}")
            if not self.on_device and not o.flags.writeable:
                raise ValueError(f"{what}: output {i} is read-only")

    def layouts(self) -> list[tuple[int, tuple[int, ...], tuple[int, ...]]]:
        return [_layout(_device.as_cupy(o) if self.on_device else o, self.on_device) for o in self.outs]
