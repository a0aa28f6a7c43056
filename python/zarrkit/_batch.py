"""Decoding many encoded chunks at once, into NumPy or device arrays (``zarrkit.decode_chunks``).

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

__all__ = ["decode_chunks"]


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
    chain = _zarrkit.chain_from_array_metadata(_metadata_json(metadata))
    dtype = numpy_dtype(chain.numpy_descr)
    if dtype.kind in "OT":
        raise TypeError(f"decode_chunks: {dtype} has no fixed-size elements")
    chunk_shape = tuple(chain.chunk_shape)
    count = len(chunks)
    keys = [()] * count if selections is None else [_key(k) for k in selections]
    if len(keys) != count:
        raise ValueError(f"decode_chunks: {count} chunks but {len(keys)} selections")
    part_shapes = [_part_shape(chunk_shape, k) for k in keys]
    if out is None:
        on_device = (_zarrkit.get_settings()["memory"] == "device") if device is None else bool(device)
        outs = [
            _device.new_device_array(s, dtype) if on_device else np.empty(s, dtype=dtype) for s in part_shapes
        ]
    else:
        outs = list(out)
        if len(outs) != count:
            raise ValueError(f"decode_chunks: {count} chunks but {len(outs)} outputs")
        kinds = {_device.is_device_array(o) for o in outs}
        if len(kinds) > 1:
            raise ValueError("decode_chunks: the outputs must all be in host memory or all in device memory")
        on_device = kinds.pop() if kinds else bool(device)
        if device is not None and on_device != bool(device):
            raise ValueError(f"decode_chunks: device={device} but the outputs are in {'device' if on_device else 'host'} memory")
        for i, (o, s) in enumerate(zip(outs, part_shapes)):
            if not on_device and not isinstance(o, np.ndarray):
                raise TypeError(f"decode_chunks: output {i} is a {type(o).__name__}, not a NumPy or device array")
            if tuple(o.shape) != s or np.dtype(o.dtype) != dtype:
                raise ValueError(
                    f"decode_chunks: output {i} is {tuple(o.shape)} {np.dtype(o.dtype)}, the part is {s} {dtype}"
                )
            if not on_device and not o.flags.writeable:
                raise ValueError(f"decode_chunks: output {i} is read-only")
    if count:
        layouts = [_layout(_device.as_cupy(o) if on_device else o, on_device) for o in outs]
        chain.decode_into(list(chunks), list(chunk_shape), chain.fill_bytes, keys, layouts, on_device)
    return outs
