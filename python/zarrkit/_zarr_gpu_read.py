"""zarr-python reads into GPU memory (``zarr.config.enable_gpu()``), decoded on the device.

With zarr-python's GPU buffer prototype, its default pipeline fetches each chunk, copies
the compressed bytes to the device and decodes them with CPU codecs through CuPy views
(nvCOMP where it has a GPU codec), one chunk at a time (``codec_pipeline.batch_size`` is
1 by default). Here the whole read goes to zarrkit's batched GPU reader instead:

1. the chunks of the read become the chunks of a temporary zarrkit array that stacks them
   along the first axis (same codecs, same data type, chunk i at rows i*c0..(i+1)*c0).
   Where zarrkit can open zarr-python's store itself (a local directory), that array is a
   view renaming the real chunk keys (stores/wrappers/key_map_store.h), so zarrkit reads the
   files with its own threads; otherwise the chunks are fetched through zarr-python's store
   as host bytes into an in-memory store. Metadata and compressed bytes stay on the host;
2. that array is read into device memory in one call: zarrkit uploads the batch through
   pinned memory and decodes every chunk on the GPU, a missing chunk being the fill value;
3. each chunk's part is copied, on the device, into zarr-python's output with zarr-python's
   own indexing (chunk selection, dropped axes, output selection), as its pipeline does.

The stacked array costs device memory for every chunk the read touches, on top of the
output. Sharded arrays read whole shards (one stacked chunk per shard; their inner
chunks are decoded in the same batch).
"""

from __future__ import annotations

import functools
import json
from typing import TYPE_CHECKING, Any

from zarr.core.buffer import cpu
from zarr.core.common import concurrent_map
from zarr.core.config import config as zarr_config
from zarr.storage import LocalStore as ZarrLocalStore

import zarrkit
from zarrkit import _zarrkit, storage

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


def _device_memory() -> Any:
    # The memory the stacked read lands in (a function, so that the CPU tests can run this
    # whole path in host memory).
    return zarrkit.config.enable_gpu()


def _chunk_key(v2_separator: str | None, index: int, ndim: int) -> str:
    coords = [str(index)] + ["0"] * (ndim - 1)
    if v2_separator is None:
        return "c/" + "/".join(coords)
    return v2_separator.join(coords)


def _stacked_metadata(
    codecs_json: str | None, v2_zarray: str | None, spec: ArraySpec, count: int
) -> tuple[str, bytes, str | None]:
    """The metadata key and document of the stacked array of `count` chunks shaped like
    `spec`, and its v2 key separator (None for v3)."""
    chunk_shape = list(spec.shape)
    shape = [chunk_shape[0] * count, *chunk_shape[1:]]
    if v2_zarray is not None:
        document = json.loads(v2_zarray)
        document.update(shape=shape, chunks=chunk_shape)
        return ".zarray", json.dumps(document).encode(), document.get("dimension_separator") or "."
    document = {
        "zarr_format": 3,
        "node_type": "array",
        "shape": shape,
        "data_type": spec.dtype.to_json(zarr_format=3),
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": chunk_shape}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": spec.dtype.to_json_scalar(spec.fill_value, zarr_format=3),
        "codecs": json.loads(codecs_json or "[]"),
    }
    return "zarr.json", json.dumps(document).encode(), None


@functools.lru_cache(maxsize=64)
def _local_store(root: str) -> storage.LocalStore:
    return storage.LocalStore(root, read_only=True)


def _direct_store(zarr_store: Any) -> storage.Store | None:
    """A zarrkit store on the same data as zarr-python's `zarr_store`, where zarrkit can
    read it itself (a local directory, kvikio's GDSStore included)."""
    if isinstance(zarr_store, ZarrLocalStore):
        return _local_store(str(zarr_store.root))
    return None


async def _stacked_store(
    batch: list[tuple[Any, ArraySpec, Any, Any, bool]], metadata_key: str, document: bytes, keys: list[str]
) -> storage.Store:
    """The stacked array's store: a view of the chunks where they are (renamed keys), else a
    memory store holding the chunks fetched through zarr-python's store."""
    direct = _direct_store(batch[0][0].store)
    if direct is not None:
        renames = {key: byte_getter.path for key, (byte_getter, *_) in zip(keys, batch, strict=True)}
        return storage.Store._wrap(_zarrkit.key_map_store(direct._handle, renames, {metadata_key: document}), True)
    chunks = await concurrent_map(
        [(byte_getter,) for byte_getter, *_ in batch],
        lambda byte_getter: byte_getter.get(prototype=cpu.buffer_prototype),
        zarr_config.get("async.concurrency"),
    )
    store = storage.MemoryStore({metadata_key: document})
    for key, chunk in zip(keys, chunks, strict=True):
        if chunk is not None:
            store.set(key, chunk.as_numpy_array())
    return store


async def read(
    codecs_json: str | None,
    v2_zarray: str | None,
    batch: list[tuple[Any, ArraySpec, Any, Any, bool]],
    out: NDBuffer,
    drop_axes: tuple[int, ...],
) -> int:
    """Reads `batch` (zarr-python's read batch, chunks of one shape) into `out` on the
    device. Returns the number of chunks it covered (missing ones included)."""
    spec = batch[0][1]
    metadata_key, document, separator = _stacked_metadata(codecs_json, v2_zarray, spec, len(batch))
    keys = [_chunk_key(separator, i, len(spec.shape)) for i in range(len(batch))]
    store = await _stacked_store(batch, metadata_key, document, keys)
    stacked_array = zarrkit.open_array(store, mode="r")
    with _device_memory():
        stacked = stacked_array[...]
    rows = spec.shape[0]
    for i, (_, chunk_spec, chunk_selection, out_selection, _) in enumerate(batch):
        chunk = chunk_spec.prototype.nd_buffer.from_ndarray_like(stacked[i * rows : (i + 1) * rows])
        part = chunk[chunk_selection]
        if drop_axes:
            part = part.squeeze(axis=drop_axes)
        out[out_selection] = part
    return len(batch)
