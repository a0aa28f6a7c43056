"""zarr-python reads into GPU memory (``zarr.config.enable_gpu()``), decoded on the device.

With zarr-python's GPU buffer prototype, its default pipeline fetches each chunk, copies
the compressed bytes to the device and decodes them with CPU codecs through CuPy views
(nvCOMP where it has a GPU codec), one chunk at a time (``codec_pipeline.batch_size`` is
1 by default). Here a read's chunks go to zarrkit's batch decode instead
(``zarrkit/batch_decode.h``, ``CodecChain.decode_into``):

1. where zarrkit can open zarr-python's store itself (a local directory), one call reads and
   decodes them all (``CodecChain.read_into``): the chunks are read on zarrkit's threads
   straight into the pinned staging of the device batches; else their encoded bytes are
   fetched through zarr-python's store, concurrently, and one call decodes them
   (``decode_into``). Metadata and compressed bytes stay on the host;
2. the chunks decode on the device, in batches (one copy of each batch to the
   device, one launch per kind of work over its chunks; a missing chunk is the fill
   value), each chunk's part landing straight in zarr-python's output where that part is a
   view of it (slices and integers on both sides). Other parts (integer arrays, dropped
   axes) are decoded whole into a scratch chunk and placed with zarr-python's own indexing
   (chunk selection, dropped axes, output selection) on the device, as its pipeline does.
"""

from __future__ import annotations

import functools
import numbers
from typing import TYPE_CHECKING, Any

import numpy as np
from zarr.core.buffer import cpu
from zarr.core.common import concurrent_map
from zarr.core.config import config as zarr_config
from zarr.storage import LocalStore as ZarrLocalStore

import zarrkit
from zarrkit import storage
from zarrkit._batch import _layout

if TYPE_CHECKING:
    from zarr.core.array_spec import ArraySpec
    from zarr.core.buffer import NDBuffer


def wanted(out: NDBuffer) -> bool:
    """True when `out` lives in device memory and this zarrkit can decode into it."""
    if isinstance(out, cpu.NDBuffer):
        return False
    if not hasattr(out.as_ndarray_like(), "__cuda_array_interface__"):
        return False
    return zarrkit.config.gpu_available()


@functools.lru_cache(maxsize=64)
def _local_store(root: str) -> storage.LocalStore:
    return storage.LocalStore(root, read_only=True)


def _direct_store(zarr_store: Any) -> storage.Store | None:
    """A zarrkit store on the same data as zarr-python's `zarr_store`, where zarrkit can
    read it itself (a local directory, kvikio's GDSStore included)."""
    if isinstance(zarr_store, ZarrLocalStore):
        return _local_store(str(zarr_store.root))
    return None


async def _fetch(batch: list[tuple[Any, ArraySpec, Any, Any, bool]]) -> list[Any]:
    """The encoded bytes of each chunk of `batch` (None where absent), on the host, read
    through zarr-python's store."""
    chunks = await concurrent_map(
        [(byte_getter,) for byte_getter, *_ in batch],
        lambda byte_getter: byte_getter.get(prototype=cpu.buffer_prototype),
        zarr_config.get("async.concurrency"),
    )
    return [None if c is None else c.as_numpy_array() for c in chunks]


def _basic(selection: Any) -> bool:
    """True for a tuple of slices and integers (NumPy basic indexing: a view)."""
    return isinstance(selection, tuple) and all(
        isinstance(s, slice) or (isinstance(s, numbers.Integral) and not isinstance(s, bool)) for s in selection
    )


def _on_device(array: Any) -> bool:
    return hasattr(array, "__cuda_array_interface__")


def _interface(array: Any) -> tuple[int, tuple[int, ...], tuple[int, ...]]:
    """(address, shape, byte strides) of a device array (or, for the tests that run this path
    in host memory, of a NumPy array)."""
    return _layout(array, _on_device(array))


async def read(
    chain: Any,
    fill: bytes | None,
    batch: list[tuple[Any, ArraySpec, Any, Any, bool]],
    out: NDBuffer,
    drop_axes: tuple[int, ...],
) -> list[bool]:
    """Reads `batch` (zarr-python's read batch, chunks of one spec, decoded with zarrkit's
    `chain`) into `out` on the device. Returns, per chunk of the batch, whether it is stored
    (False: it read as the fill value)."""
    spec = batch[0][1]
    direct = _direct_store(batch[0][0].store)
    chunks = None if direct is not None else await _fetch(batch)
    target = out.as_ndarray_like()
    shape = tuple(spec.shape)
    selections: list[Any] = []
    outs: list[tuple[int, tuple[int, ...], tuple[int, ...]]] = []
    scratch_of: list[int | None] = []
    scratch_count = 0
    for _, _, chunk_selection, out_selection, _ in batch:
        view = None
        if not drop_axes and _basic(chunk_selection) and _basic(out_selection):
            candidate = target[(*out_selection, Ellipsis)]  # with "...", integers give a 0-d view, not a copy
            # The chunk's part has the view's shape exactly when NumPy's rules agree.
            part_shape = np.empty(shape, dtype=np.bool_)[chunk_selection].shape
            if candidate.shape == part_shape:
                view = candidate
        if view is not None:
            selections.append(chunk_selection)
            outs.append(_interface(view))
            scratch_of.append(None)
        else:
            selections.append(())
            outs.append((0, shape, ()))  # filled in below
            scratch_of.append(scratch_count)
            scratch_count += 1
    scratch = None
    if scratch_count:
        module = __import__(type(target).__module__.split(".")[0])  # cupy (numpy in the tests)
        scratch = module.empty((scratch_count, *shape), dtype=target.dtype)
        for i, k in enumerate(scratch_of):
            if k is not None:
                outs[i] = _interface(scratch[k])
    if direct is not None:
        # zarrkit reads the chunks itself, as the batches need them (into pinned staging).
        keys = [byte_getter.path for byte_getter, *_ in batch]
        chain.read_into(direct._handle, keys, list(shape), fill, selections, outs, _on_device(target))
        present = [direct.exists(key) for key in keys]
    else:
        chain.decode_into(chunks, list(shape), fill, selections, outs, _on_device(target))
        present = [c is not None for c in chunks]
    if scratch is not None:
        for i, (_, chunk_spec, chunk_selection, out_selection, _) in enumerate(batch):
            k = scratch_of[i]
            if k is None:
                continue
            chunk = chunk_spec.prototype.nd_buffer.from_ndarray_like(scratch[k])
            part = chunk[chunk_selection]
            if drop_axes:
                part = part.squeeze(axis=drop_axes)
            out[out_selection] = part
    return present
