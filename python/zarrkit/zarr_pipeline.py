"""A codec pipeline for zarr-python that encodes and decodes chunks with zarrkit.

>>> import zarr, zarrkit.zarr_pipeline
>>> zarr.config.set({"codec_pipeline.path": "zarrkit.zarr_pipeline.ZarrkitCodecPipeline"})

zarr-python keeps doing what it does well (indexing, store IO, sharding's partial reads
and writes, the write_empty_chunks logic); every batch of chunks it encodes or decodes
goes to zarrkit's C++ codecs instead, in parallel on zarrkit's thread pool with the GIL
released. That includes the inner chunks of shards (zarr-python builds their pipeline
from the same setting).

Whatever zarrkit does not cover falls back to zarr-python's own BatchedCodecPipeline,
batch by batch: codecs zarrkit does not implement, variable-length strings and objects,
and any batch zarrkit's codecs refuse (so that the error a user
sees is zarr-python's own, and data zarr-python reads leniently still reads).
With ``zarr.config.enable_gpu()``, reads decode on the GPU through zarrkit's batch
decode (zarrkit._zarr_gpu_read); writes from device memory encode through zarr-python. ``zarrkit.zarr_pipeline.stats`` counts the chunks each path handled.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from zarr.codecs._v2 import V2Codec
from zarr.core.buffer import cpu
from zarr.core.codec_pipeline import BatchedCodecPipeline
from zarr.core.metadata import ArrayV2Metadata
from zarr.registry import register_pipeline

from zarrkit import _zarr_gpu_read, _zarrkit
from zarrkit.errors import ZarrkitError

if TYPE_CHECKING:
    from typing import Self

    from zarr.abc.store import ByteGetter, Store
    from zarr.core.array_spec import ArraySpec
    from zarr.core.buffer import Buffer, NDBuffer
    from zarr.core.indexing import SelectorTuple
    from zarr.core.metadata import ArrayMetadata

__all__ = ["ZarrkitCodecPipeline", "stats"]

# Chunks handled by zarrkit and by the fallback since the process started (or since a
# test reset them): "decoded", "encoded", "fallback_decoded", "fallback_encoded", and
# "gpu_decoded" (chunks of reads into device memory that zarrkit read and decoded on the
# GPU, missing ones included).
stats: dict[str, int] = {"decoded": 0, "encoded": 0, "fallback_decoded": 0, "fallback_encoded": 0, "gpu_decoded": 0}


@functools.lru_cache(maxsize=256)
def _chain_v3(codecs_json: str, data_type_json: str) -> Any:
    try:
        return _zarrkit.chain_from_v3(codecs_json, data_type_json)
    except ZarrkitError:
        return None


@functools.lru_cache(maxsize=256)
def _chain_v2(zarray_json: str) -> Any:
    try:
        return _zarrkit.chain_from_v2_metadata(zarray_json)
    except ZarrkitError:
        return None


# Modules of the codec classes zarr-python and numcodecs ship. A codec of another class is
# a user's own implementation (registered for a codec name through zarr.config's
# "codecs.<name>" or numcodecs' registry): it must run, so its chains stay with zarr-python.
_STOCK_CODEC_MODULES = ("zarr.codecs.", "numcodecs.")


def _stock(codec: Any) -> bool:
    return type(codec).__module__.startswith(_STOCK_CODEC_MODULES)


def _all_stock(codecs: Iterable[Any]) -> bool:
    """True when every codec, the inner ones of shards and v2 wrappers included, is one
    zarr-python or numcodecs ships."""
    for codec in codecs:
        if not _stock(codec):
            return False
        if isinstance(codec, V2Codec):
            inner = [c for c in (codec.compressor, *(codec.filters or ())) if c is not None]
        else:  # sharding_indexed carries chains of its own
            inner = [*getattr(codec, "codecs", ()), *getattr(codec, "index_codecs", ())]
        if inner and not _all_stock(inner):
            return False
    return True


def _native(dtype: np.dtype) -> np.dtype:
    return dtype.newbyteorder("=")


# NumPy (2.5 included) casts datetime64 and timedelta64 of the generic unit from one byte
# order to the other without swapping the bytes, and dtype.newbyteorder drops the unit's
# scale ("M8[2generic]" becomes "M8"): those types change byte order as int64 instead.
def _time_kind(dtype: np.dtype) -> bool:
    return dtype.kind in "Mm"


def _int64(dtype: np.dtype) -> np.dtype:
    """int64 in the byte order of a datetime64 or timedelta64 type."""
    return np.dtype(np.int64).newbyteorder(dtype.str[0])


def _to_native_array(array: np.ndarray, native: np.dtype) -> np.ndarray:
    """A chunk's values in native byte order, contiguous, as zarrkit's codecs take them."""
    if _time_kind(array.dtype):
        return np.ascontiguousarray(array.view(_int64(array.dtype)), dtype=np.int64)
    return np.ascontiguousarray(array, dtype=native)


def _from_native_bytes(raw: np.ndarray, target: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
    """A decoded chunk (bytes in native byte order) as an array of the chunk's own dtype."""
    if _time_kind(target):
        return raw.view(np.int64).reshape(shape).astype(_int64(target)).view(target)
    native = _native(target)
    array = raw.view(native).reshape(shape)
    return array if target == native else array.astype(target)


def _fill_key(fill_value: Any) -> Any:
    """A key telling fill values apart. NumPy cannot print some of them (a structured
    value holding a generic-unit datetime other than NaT raises ValueError in repr)."""
    try:
        return repr(fill_value)
    except ValueError:
        return (type(fill_value), np.asarray(fill_value).tobytes())


@dataclass(frozen=True)
class ZarrkitCodecPipeline(BatchedCodecPipeline):
    """zarr-python's batched pipeline with zarrkit's C++ codecs doing the work.

    Select it with ``zarr.config.set({"codec_pipeline.path":
    "zarrkit.zarr_pipeline.ZarrkitCodecPipeline"})``. See the module documentation.
    """

    # The .zarray document of a Zarr v2 array (its chain comes from the whole metadata:
    # compressor, filters, memory order and byte order), None for v3 chains.
    v2_zarray: str | None = None

    @classmethod
    def from_array_metadata_and_store(cls, array_metadata: ArrayMetadata, store: Store) -> Self:
        if not isinstance(array_metadata, ArrayV2Metadata):
            # v3: zarr-python then builds the pipeline from the metadata's codecs.
            raise NotImplementedError("zarrkit builds v3 pipelines from codecs")
        pipeline = cls.from_codecs(
            [V2Codec(filters=array_metadata.filters, compressor=array_metadata.compressor)]
        )
        document = array_metadata.to_dict()
        document.pop("attributes", None)
        return dataclasses.replace(pipeline, v2_zarray=json.dumps(document, sort_keys=True))

    def evolve_from_array_spec(self, array_spec: ArraySpec) -> Self:
        evolved = super().evolve_from_array_spec(array_spec)
        return dataclasses.replace(evolved, v2_zarray=self.v2_zarray)

    # ---- Which chain a batch uses -----------------------------------------------------------

    def _chain(self, spec: ArraySpec, *, host_only: bool = True) -> Any:
        # decode_batch and encode_batch work in host memory: GPU prototypes
        # (zarr.config.enable_gpu()) go to zarr-python there; reads into device memory
        # come through `read` (host_only=False).
        if host_only and not (
            issubclass(spec.prototype.buffer, cpu.Buffer) and issubclass(spec.prototype.nd_buffer, cpu.NDBuffer)
        ):
            return None
        # Objects and NumPy's variable-length strings stay with zarr-python's codecs.
        if spec.dtype.to_native_dtype().kind in "OT":
            return None
        if not _all_stock(self):
            return None
        if self.v2_zarray is not None:
            return _chain_v2(self.v2_zarray)
        try:
            codecs_json = self._codecs_json()
            data_type_json = json.dumps(spec.dtype.to_json(zarr_format=3))
        except (TypeError, ValueError, NotImplementedError):
            return None
        return _chain_v3(codecs_json, data_type_json)

    def _codecs_json(self) -> str:
        return json.dumps([codec.to_dict() for codec in self])

    @staticmethod
    def _fill_bytes(spec: ArraySpec) -> bytes | None:
        if spec.fill_value is None:
            return None  # a v2 null fill value: zeros
        target = spec.dtype.to_native_dtype()
        return _to_native_array(np.asarray(spec.fill_value, dtype=target), _native(target)).tobytes()

    @staticmethod
    def _groups(specs: list[ArraySpec]) -> list[list[int]]:
        """Indices of the batch grouped by chunk spec (shape, dtype, fill, prototype)."""
        groups: dict[Any, list[int]] = {}
        for i, spec in enumerate(specs):
            key = (spec.shape, str(spec.dtype), _fill_key(spec.fill_value), id(spec.prototype))
            groups.setdefault(key, []).append(i)
        return list(groups.values())

    # ---- Reading into device memory ---------------------------------------------------------

    async def read(
        self,
        batch_info: Iterable[tuple[ByteGetter, ArraySpec, SelectorTuple, SelectorTuple, bool]],
        out: NDBuffer,
        drop_axes: tuple[int, ...] = (),
    ) -> tuple[dict[str, str], ...] | None:
        """With zarr-python's GPU prototype (zarr.config.enable_gpu()), the chunks of the
        read are decoded on the GPU by zarrkit in one batch (see zarrkit._zarr_gpu_read);
        everything else reads as zarr-python reads, through decode_batch above.

        Returns what zarr-python's own pipeline returns: from zarr-python 3.4 on, one
        ``{"status": "present" | "missing"}`` per chunk, in the batch's order (zarr-python
        raises for missing chunks from it when ``array.read_missing_chunks`` is off);
        None with zarr-python 3.1."""
        batch = list(batch_info)
        if not (batch and _zarr_gpu_read.wanted(out)):
            return await super().read(batch, out, drop_axes)
        results: list[Any] = [None] * len(batch)
        for indices in self._groups([spec for _, spec, *_ in batch]):
            items = [batch[i] for i in indices]
            spec = items[0][1]
            chain = self._chain(spec, host_only=False) if spec.shape else None
            group: Any = None
            if chain is not None:
                try:
                    present = await _zarr_gpu_read.read(chain, self._fill_bytes(spec), items, out, drop_axes)
                except ZarrkitError:
                    pass  # zarr-python decides, naming the chunk in its own terms
                else:
                    stats["gpu_decoded"] += len(items)
                    group = [{"status": "present" if p else "missing"} for p in present]
            if group is None:
                group = await super().read(items, out, drop_axes)
                if group is None:  # zarr-python 3.1's pipeline returns nothing
                    continue
            for i, result in zip(indices, group, strict=True):
                results[i] = result
        return None if None in results else tuple(results)

    # ---- Decoding ---------------------------------------------------------------------------

    async def decode_batch(
        self, chunk_bytes_and_specs: Iterable[tuple[Buffer | None, ArraySpec]]
    ) -> Iterable[NDBuffer | None]:
        batch = list(chunk_bytes_and_specs)
        results: list[NDBuffer | None] = [None] * len(batch)
        for indices in self._groups([spec for _, spec in batch]):
            items = [batch[i] for i in indices]
            decoded = await self._decode_group(items)
            for i, d in zip(indices, decoded, strict=True):
                results[i] = d
        return results

    async def _decode_group(self, items: list[tuple[Buffer | None, ArraySpec]]) -> list[NDBuffer | None]:
        spec = items[0][1]
        chain = self._chain(spec)
        if chain is not None:
            inputs = [None if b is None else b.as_numpy_array() for b, _ in items]
            try:
                raw = await asyncio.to_thread(chain.decode, inputs, list(spec.shape), self._fill_bytes(spec))
            except ZarrkitError:
                pass  # zarr-python decides: it may read it, or raise its own error
            else:
                target = spec.dtype.to_native_dtype()
                out: list[NDBuffer | None] = []
                for r in raw:
                    if r is None:
                        out.append(None)
                        continue
                    array = _from_native_bytes(r, target, tuple(spec.shape))
                    out.append(spec.prototype.nd_buffer.from_numpy_array(array))
                stats["decoded"] += sum(r is not None for r in raw)
                return out
        stats["fallback_decoded"] += sum(b is not None for b, _ in items)
        return list(await super().decode_batch(items))

    # ---- Encoding ---------------------------------------------------------------------------

    async def encode_batch(
        self, chunk_arrays_and_specs: Iterable[tuple[NDBuffer | None, ArraySpec]]
    ) -> Iterable[Buffer | None]:
        batch = list(chunk_arrays_and_specs)
        results: list[Buffer | None] = [None] * len(batch)
        for indices in self._groups([spec for _, spec in batch]):
            items = [batch[i] for i in indices]
            encoded = await self._encode_group(items)
            for i, e in zip(indices, encoded, strict=True):
                results[i] = e
        return results

    async def _encode_group(self, items: list[tuple[NDBuffer | None, ArraySpec]]) -> list[Buffer | None]:
        spec = items[0][1]
        chain = self._chain(spec)
        if chain is not None:
            native = _native(spec.dtype.to_native_dtype())
            inputs: list[np.ndarray | None] = []
            usable = True
            for chunk, _ in items:
                if chunk is None:
                    inputs.append(None)
                    continue
                array = chunk.as_numpy_array()
                if array.shape != tuple(spec.shape) or array.dtype.kind != native.kind:
                    usable = False
                    break
                inputs.append(_to_native_array(array, native))
            if usable:
                try:
                    raw = await asyncio.to_thread(chain.encode, inputs, list(spec.shape), self._fill_bytes(spec))
                except ZarrkitError:
                    pass
                else:
                    stats["encoded"] += sum(r is not None for r in raw)
                    return [None if r is None else spec.prototype.buffer.from_array_like(r) for r in raw]
        stats["fallback_encoded"] += sum(c is not None for c, _ in items)
        return list(await super().encode_batch(items))


register_pipeline(ZarrkitCodecPipeline)
