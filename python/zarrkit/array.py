"""zarrkit.Array: a Zarr array (v2 or v3) read and written through the C++ engine."""

from __future__ import annotations

import json
import math
import operator
from dataclasses import dataclass
from typing import Any

import numpy as np

from zarrkit import _codecs, _device, _zarrkit
from zarrkit._dtype import numpy_dtype
from zarrkit.attributes import Attributes
from zarrkit.errors import ReadOnlyError
from zarrkit.storage import Store

__all__ = ["Array", "ArrayInfo", "BlockIndex", "OIndex", "VIndex"]

_PLAIN_BOUND = (int, type(None))


def _plain_slices(selection: Any, ndim: int) -> bool:
    """True for a tuple of at most `ndim` slices whose bounds and steps are Python ints or
    None: a selection the engine takes as it is."""
    return type(selection) is tuple and len(selection) <= ndim and all(
        type(s) is slice and type(s.start) in _PLAIN_BOUND and type(s.stop) in _PLAIN_BOUND
        and type(s.step) in _PLAIN_BOUND for s in selection)


def _host_value(value: Any) -> Any:
    # Selections that the engine writes from host memory take device arrays by copying them.
    return _device.to_host(value) if _device.is_device_array(value) else value


def _as_configured(result: np.ndarray) -> Any:
    # Selections that the engine reads into host memory: moved to the GPU in device mode.
    if _zarrkit.memory_setting() == "device":
        return _device.as_cupy_copy(result)
    return result


def _format_bytes(n: int) -> str:
    if n < 1024:
        return str(n)
    size = float(n)
    for unit in ("K", "M", "G", "T", "P"):
        size /= 1024
        if size < 1024 or unit == "P":
            return f"{n} ({size:.1f}{unit})"
    return str(n)  # pragma: no cover


@dataclass(frozen=True)
class ArrayInfo:
    """What ``Array.info`` shows; its ``repr`` is a readable table."""

    type: str
    zarr_format: int
    data_type: str
    fill_value: Any
    shape: tuple[int, ...]
    shard_shape: tuple[int, ...] | str | None  # "<variable>" for a rectilinear grid
    chunk_shape: tuple[int, ...] | str
    order: str
    read_only: bool
    store_type: str
    filters: tuple[Any, ...]
    serializer: Any
    compressors: tuple[Any, ...]
    count_bytes: int
    count_bytes_stored: int | None = None
    count_chunks_initialized: int | None = None
    count_chunks: int | None = None

    def __repr__(self) -> str:
        rows = [
            ("Type", self.type),
            ("Zarr format", self.zarr_format),
            ("Data type", self.data_type),
            ("Fill value", self.fill_value),
            ("Shape", self.shape),
        ]
        if self.shard_shape is not None:
            rows.append(("Shard shape", self.shard_shape))
        rows += [
            ("Chunk shape", self.chunk_shape),
            ("Order", self.order),
            ("Read-only", self.read_only),
            ("Store type", self.store_type),
            ("Filters", self.filters),
        ]
        if self.serializer is not None:
            rows.append(("Serializer", self.serializer))
        rows += [("Compressors", self.compressors), ("No. bytes", _format_bytes(self.count_bytes))]
        if self.count_bytes_stored is not None:
            rows.append(("No. bytes stored", _format_bytes(self.count_bytes_stored)))
            ratio = self.count_bytes / self.count_bytes_stored if self.count_bytes_stored else math.inf
            rows.append(("Storage ratio", f"{ratio:.1f}"))
        if self.count_chunks_initialized is not None:
            rows.append(("Chunks Initialized", f"{self.count_chunks_initialized} / {self.count_chunks}"))
        width = max(len(name) for name, _ in rows)
        return "\n".join(f"{name:<{width}} : {value}" for name, value in rows)


def _as_index(value: Any) -> int:
    if isinstance(value, (bool, np.bool_)):
        raise IndexError("boolean scalars are not valid indices")
    return operator.index(value)


class Array:
    """A Zarr array in a store.

    Create or open arrays with :func:`zarrkit.create_array`, :func:`zarrkit.open_array`,
    :func:`zarrkit.open` or through a :class:`zarrkit.Group`; not with this constructor.

    Indexing follows NumPy: ``a[...]``, ``a[3]``, ``a[2:10, ::3]`` read into a new NumPy
    array (only the chunks the selection touches are read, in parallel, with the GIL
    released); ``a[0:5] = values`` writes, broadcasting ``values`` like NumPy.
    ``np.asarray(a)`` reads the whole array.
    """

    __slots__ = ("_dtype", "_impl", "_metadata", "_read_only", "_store", "_write_empty_chunks")

    def __init__(self, impl: Any, store: Store, *, read_only: bool = False) -> None:
        self._impl = impl
        self._store = store
        self._read_only = read_only or store.read_only
        self._dtype = numpy_dtype(impl.numpy_descr)
        self._metadata: dict[str, Any] | None = None
        self._write_empty_chunks: bool | None = None

    def _set_config(self, config: Any) -> None:
        unknown = set(config) - {"write_empty_chunks", "order"}
        if unknown:
            raise ValueError(f"unknown array config keys: {', '.join(sorted(unknown))}")
        if "write_empty_chunks" in config:
            self._write_empty_chunks = bool(config["write_empty_chunks"])

    # ---- Description ----------------------------------------------------------------------

    @property
    def metadata(self) -> dict[str, Any]:
        """The metadata document: zarr.json for v3; .zarray plus "attributes" for v2."""
        if self._metadata is None:
            self._metadata = json.loads(self._impl.metadata_json())
        return self._metadata

    @property
    def store(self) -> Store:
        """The store holding the array."""
        return self._store

    @property
    def path(self) -> str:
        """The array's path inside the store ("" for the root)."""
        return str(self._impl.path)

    @property
    def name(self) -> str:
        """The path with a leading "/", as zarr-python names arrays."""
        return "/" + self.path

    @property
    def basename(self) -> str:
        """The last segment of the path."""
        return self.path.rsplit("/", 1)[-1]

    @property
    def zarr_format(self) -> int:
        """2 or 3."""
        return int(self._impl.zarr_format)

    @property
    def shape(self) -> tuple[int, ...]:
        """The array's shape."""
        return tuple(self._impl.shape)

    @property
    def dtype(self) -> np.dtype:
        """The NumPy data type of the elements (in native byte order)."""
        return self._dtype

    @property
    def ndim(self) -> int:
        """Number of dimensions."""
        return len(self.shape)

    @property
    def size(self) -> int:
        """Number of elements."""
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        """Bytes of the whole array in memory (size * itemsize), not what is stored."""
        return self.size * self._dtype.itemsize

    @property
    def itemsize(self) -> int:
        """Bytes per element."""
        return self._dtype.itemsize

    def _sharding(self) -> dict[str, Any] | None:
        if self.zarr_format != 3:
            return None
        codecs = self.metadata.get("codecs", [])
        if len(codecs) == 1 and isinstance(codecs[0], dict) and codecs[0].get("name") == "sharding_indexed":
            return dict(codecs[0].get("configuration", {}))
        return None

    @property
    def chunks(self) -> tuple[int, ...]:
        """The chunk shape; for sharded arrays the inner chunks inside each shard.

        Undefined (NotImplementedError, as in zarr-python) for an array on a rectilinear
        chunk grid without sharding: see ``read_chunk_sizes``."""
        sharding = self._sharding()
        if sharding is not None:
            return tuple(sharding["chunk_shape"])
        if self._impl.is_rectilinear:
            raise NotImplementedError(
                "The `chunks` attribute is only defined for arrays using regular chunk grids. This array has a "
                "rectilinear chunk grid. Use `read_chunk_sizes` for general access."
            )
        return tuple(self._impl.chunk_shape)

    @property
    def shards(self) -> tuple[int, ...] | None:
        """The shard shape of sharded arrays, else None.

        Undefined (NotImplementedError, as in zarr-python) for shards on a rectilinear grid:
        see ``write_chunk_sizes``."""
        if self._sharding() is None:
            return None
        if self._impl.is_rectilinear:
            raise NotImplementedError(
                "The `shards` attribute is only defined for arrays using regular chunk grids. This array has a "
                "rectilinear chunk grid. Use `write_chunk_sizes` for general access."
            )
        return tuple(self._impl.chunk_shape)

    @property
    def write_chunk_sizes(self) -> tuple[tuple[int, ...], ...]:
        """Per axis, the sizes of the chunks as stored (the shards, for sharded arrays), the
        last one cut by the array's extent; for regular and rectilinear grids alike."""
        return tuple(tuple(axis) for axis in self._impl.chunk_sizes)

    @property
    def read_chunk_sizes(self) -> tuple[tuple[int, ...], ...]:
        """Per axis, the sizes of the chunks a read decodes: the inner chunks of sharded
        arrays, else the same as ``write_chunk_sizes``."""
        sharding = self._sharding()
        if sharding is None:
            return self.write_chunk_sizes
        return tuple(
            tuple(min(c, s - start) for start in range(0, s, c))
            for s, c in zip(self.shape, sharding["chunk_shape"], strict=True)
        )

    @property
    def cdata_shape(self) -> tuple[int, ...]:
        """The number of chunks (shards, for sharded arrays) along each axis."""
        return tuple(self._impl.chunk_grid_shape)

    @property
    def nchunks(self) -> int:
        """The number of chunks (shards, for sharded arrays) in the grid."""
        return math.prod(self.cdata_shape)

    @property
    def nchunks_initialized(self) -> int:
        """How many chunks (shards) are stored."""
        return int(self._impl.storage_info()["chunks_stored"])

    @property
    def nbytes_stored(self) -> int:
        """Bytes of the stored chunks (not counting metadata)."""
        return int(self._impl.storage_info()["bytes_stored"])

    @property
    def fill_value(self) -> Any:
        """The fill value as a NumPy scalar (None for a Zarr v2 null fill value)."""
        if self._impl.fill_value_is_null:
            return None
        if self._dtype.kind == "T":  # a variable-length string: its UTF-8 bytes
            return self._impl.fill_value_bytes.decode("utf-8")
        if self._dtype.kind == "O":
            return bytes(self._impl.fill_value_bytes)
        return np.frombuffer(self._impl.fill_value_bytes, dtype=self._dtype)[0]

    @property
    def order(self) -> str:
        """The memory order of chunks: "C", or "F" for Zarr v2 arrays stored in F order."""
        return str(self.metadata.get("order", "C")) if self.zarr_format == 2 else "C"

    @property
    def read_only(self) -> bool:
        """True when writes are refused."""
        return self._read_only

    @property
    def attrs(self) -> Attributes:
        """User attributes: a dict-like view whose changes are written at once."""
        return Attributes(self._impl, self._read_only)

    @property
    def dimension_names(self) -> tuple[str | None, ...] | None:
        """Zarr v3 dimension names, or None."""
        names = self.metadata.get("dimension_names") if self.zarr_format == 3 else None
        return None if names is None else tuple(names)

    def _codec_groups(self) -> tuple[tuple[Any, ...], Any, tuple[Any, ...]]:
        if self.zarr_format == 2:
            compressor = self.metadata.get("compressor")
            return tuple(self.metadata.get("filters") or ()), None, (compressor,) if compressor else ()
        sharding = self._sharding()
        codecs = list(self.metadata.get("codecs", []))
        if sharding is not None:
            codecs = list(sharding.get("codecs", []))
        filters, serializer, compressors = _codecs.split_v3_chain(codecs)
        return tuple(filters), serializer, tuple(compressors)

    @property
    def filters(self) -> tuple[Any, ...]:
        """Array->array codecs (v3) or numcodecs filters (v2), as metadata dicts."""
        return self._codec_groups()[0]

    @property
    def serializer(self) -> Any:
        """The array->bytes codec (v3), as a metadata dict; None for v2."""
        return self._codec_groups()[1]

    @property
    def compressors(self) -> tuple[Any, ...]:
        """Bytes->bytes codecs (v3) or the compressor (v2), as metadata dicts."""
        return self._codec_groups()[2]

    def _info(self, complete: bool) -> ArrayInfo:
        filters, serializer, compressors = self._codec_groups()
        stored = self._impl.storage_info() if complete else None
        sharded = self._sharding() is not None
        return ArrayInfo(
            type="Array",
            zarr_format=self.zarr_format,
            data_type=str(self._impl.dtype_name),
            fill_value=self.fill_value,
            shape=self.shape,
            shard_shape="<variable>" if self._impl.is_rectilinear and sharded else self.shards,
            chunk_shape="<variable>" if self._impl.is_rectilinear and not sharded else self.chunks,
            order=self.order,
            read_only=self.read_only,
            store_type=type(self._store).__name__,
            filters=filters,
            serializer=serializer,
            compressors=compressors,
            count_bytes=self.nbytes,
            count_bytes_stored=None if stored is None else int(stored["bytes_stored"]),
            count_chunks_initialized=None if stored is None else int(stored["chunks_stored"]),
            count_chunks=None if stored is None else int(stored["chunks_total"]),
        )

    @property
    def info(self) -> ArrayInfo:
        """A summary of the array (metadata only; see :meth:`info_complete`)."""
        return self._info(complete=False)

    def info_complete(self) -> ArrayInfo:
        """The summary plus what is stored (lists the array's keys)."""
        return self._info(complete=True)

    def __repr__(self) -> str:
        return f"<zarrkit.Array {self._store.describe()}{self.name} shape={self.shape} dtype={self._dtype}>"

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d array")
        return self.shape[0]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Array) and self._store == other._store and self.path == other.path

    def __hash__(self) -> int:
        return hash((self._store.describe(), self.path))

    # Arrays pickle as (store, path): a worker process opens the same array, and no data
    # travels. A MemoryStore pickles as a copy of its contents (see zarrkit.storage).
    def __reduce__(self) -> tuple[Any, ...]:
        return (_reopen_array, (self._store, self.path, self._read_only))

    # ---- Reading and writing --------------------------------------------------------------

    def _key(self, key: Any, *, lists: str) -> tuple[tuple[Any, ...], int | None]:
        """Checks an index and returns it as the engine's tuple of int, slice, ... and 1-d
        int64 / bool arrays, with where NumPy puts the list's axis in the result (None
        when that is where the engine puts it).

        ``lists``: "none" (basic selections), "one" (NumPy indexing: at most one list) or
        "orthogonal" (every axis may have its own list).
        """
        if not isinstance(key, tuple):
            key = (key,)
        ellipses = sum(item is Ellipsis for item in key)  # not `in`: arrays compare elementwise
        if ellipses > 1:
            raise IndexError("an index can only have a single ellipsis ('...')")
        if len(key) - ellipses > self.ndim:
            raise IndexError(
                f"too many indices for array: array is {self.ndim}-dimensional, "
                f"but {len(key) - ellipses} were indexed"
            )
        out: list[Any] = []
        kinds: list[str] = []  # per array axis: "int", "slice" or "list"
        axis = 0
        for item in key:
            if item is Ellipsis:
                span = self.ndim - (len(key) - 1)
                out.append(Ellipsis)
                kinds += ["slice"] * span
                axis += span
                continue
            if item is None:
                raise IndexError("zarrkit does not support np.newaxis (None) in selections")
            n = self.shape[axis]
            if isinstance(item, slice):
                out.append(
                    slice(
                        None if item.start is None else _as_index(item.start),
                        None if item.stop is None else _as_index(item.stop),
                        None if item.step is None else _as_index(item.step),
                    )
                )
                kinds.append("slice")
            elif isinstance(item, (int, np.integer)) and not isinstance(item, (bool, np.bool_)):
                index = int(item)
                if not -n <= index < n:
                    raise IndexError(f"index {index} is out of bounds for axis {axis} with size {n}")
                out.append(index)
                kinds.append("int")
            else:
                out.append(self._list_entry(item, axis, n, lists))
                kinds.append("list")
            axis += 1
        if kinds.count("list") > 1 and lists != "orthogonal":
            raise IndexError(
                "several index arrays mixed with slices are not supported; use a.vindex[...] "
                "(arrays on every axis, paired element by element) or a.oindex[...] (each axis "
                "on its own)"
            )
        # NumPy moves the axis of a list to the front when the list and the integers
        # (advanced indices too) are not next to each other.
        advanced = [i for i, k in enumerate(kinds) if k != "slice"]
        moved = None
        if "list" in kinds and lists == "one" and advanced[-1] - advanced[0] + 1 != len(advanced):
            list_axis = kinds.index("list")
            moved = sum(1 for k in kinds[:list_axis] if k == "slice")
        return tuple(out), moved

    def _list_entry(self, item: Any, axis: int, n: int, lists: str) -> np.ndarray:
        if lists == "none":
            raise IndexError(
                f"unsupported index {item!r} for a basic selection (integers, slices and ...); "
                "integer and boolean lists work with a[...] and a.oindex[...]"
            )
        try:
            array = np.asarray(item)
        except Exception:
            array = None
        if array is not None and array.size == 0 and array.ndim == 1:
            array = array.astype(np.int64)  # [] selects nothing
        if array is None or array.ndim != 1 or (array.dtype != bool and array.dtype.kind not in "iu"):
            raise IndexError(
                f"unsupported index {item!r}: zarrkit takes integers, slices, ... and "
                "one-dimensional integer or boolean lists"
            )
        if array.dtype == bool:
            if array.shape[0] != n:
                raise IndexError(f"boolean index of length {array.shape[0]} does not match axis {axis} of size {n}")
            return np.ascontiguousarray(array)
        indices = np.ascontiguousarray(array, dtype=np.int64)
        if indices.size and (indices.min() < -n or indices.max() >= n):
            bad = indices[(indices < -n) | (indices >= n)][0]
            raise IndexError(f"index {bad} is out of bounds for axis {axis} with size {n}")
        return indices

    def _read(self, key: tuple[Any, ...], moved: int | None, out: np.ndarray | None, host: bool = False) -> Any:
        shape = tuple(self._impl.selection_shape(key))
        if self._dtype.kind in "OT":
            return self._read_var(key, moved, out)
        if out is None and not host and _zarrkit.memory_setting() == "device":
            return self._read_to_device(key, moved, shape)
        if out is not None and _device.is_device_array(out):
            return self._read_into_device_out(key, moved, shape, out)
        if moved is not None:
            # Read in the engine's (orthogonal) order, then move the list's axis first.
            result = np.empty(shape, dtype=self._dtype)
            self._impl.read_into(key, result)
            result = np.moveaxis(result, moved, 0)
            if out is not None:
                out[...] = result
                return out
            return result
        if out is None:
            result = np.empty(shape, dtype=self._dtype)
            self._impl.read_into(key, result)
            return result if result.ndim else result[()]
        if out.shape != shape or out.dtype != self._dtype:
            raise ValueError(
                f"out has shape {out.shape} and dtype {out.dtype}; the selection needs {shape} and {self._dtype}"
            )
        self._impl.read_into(key, out)
        return out

    def _var_result(self, shape_and_elements: tuple[list[int], list[Any]], out: np.ndarray | None) -> Any:
        # Variable-length strings and bytes come back as Python objects, one per element.
        shape, elements = shape_and_elements
        result = np.empty(len(elements), dtype=self._dtype)
        result[:] = elements
        result = result.reshape(tuple(shape))
        if out is not None:
            out[...] = result
            return out
        return result

    def _read_var(self, key: tuple[Any, ...], moved: int | None, out: np.ndarray | None) -> Any:
        result = self._var_result(self._impl.read_var(key), None)
        if moved is not None:
            result = np.moveaxis(result, moved, 0)
        if out is not None:
            out[...] = result
            return out
        return result if result.ndim else result[()]

    def _read_to_device(self, key: tuple[Any, ...], moved: int | None, shape: tuple[int, ...]) -> Any:
        # zarrkit.config.enable_gpu(): the engine decodes into a CuPy array's memory.
        result = _device.new_device_array(shape, self._dtype)
        pointer = result.__cuda_array_interface__["data"][0]
        self._impl.read_into_device(key, pointer, list(shape), list(result.strides))
        if moved is not None:
            result = _device.as_cupy(result)
            import cupy

            result = cupy.moveaxis(result, moved, 0)
        return result

    def _read_into_device_out(self, key: tuple[Any, ...], moved: int | None, shape: tuple[int, ...], out: Any) -> Any:
        # out= a device array (any strides): the engine decodes into its memory.
        out_shape = None
        if hasattr(out, "__cuda_array_interface__"):
            pointer, out_shape, strides, dtype, _ = _device.interface(out)
        numpy_shape = shape if moved is None else (shape[moved], *shape[:moved], *shape[moved + 1 :])
        if out_shape is None or moved is not None:
            # DLPack-only outputs and list-moved axes: read, then copy into out.
            result = self._read_to_device(key, moved, shape)
            target = _device.as_cupy(out)
            if target.shape != numpy_shape or target.dtype != self._dtype:
                raise ValueError(
                    f"out has shape {target.shape} and dtype {target.dtype}; the selection needs {numpy_shape} and {self._dtype}"
                )
            target[...] = result
            return out
        if out_shape != shape or dtype != self._dtype:
            raise ValueError(f"out has shape {out_shape} and dtype {dtype}; the selection needs {shape} and {self._dtype}")
        self._impl.read_into_device(key, pointer, list(shape), strides)
        return out

    def _write(self, key: tuple[Any, ...], moved: int | None, value: Any) -> None:
        self._check_writable()
        if _device.is_device_array(value):
            if self._dtype.kind in "OT":
                value = _device.to_host(value)
            else:
                # Device memory (CuPy, __cuda_array_interface__, DLPack): the engine encodes
                # on the GPU where it can, else copies to the host once.
                shape = tuple(self._impl.selection_shape(key))
                keep, (pointer, vshape, strides, stream) = _device.device_write_source(value, self._dtype, shape, moved)
                self._impl.write_from_device(key, pointer, list(vshape), strides, stream, self._write_empty_chunks)
                del keep
                return
        data = np.asarray(value, dtype=self._dtype)
        if self._dtype.kind in "OT":
            if moved is not None:
                shape = tuple(self._impl.selection_shape(key))
                numpy_shape = (shape[moved], *shape[:moved], *shape[moved + 1 :])
                data = np.moveaxis(np.broadcast_to(data, numpy_shape), 0, moved)
            self._impl.write_var(key, [_var_element(v) for v in data.ravel()], list(data.shape), self._write_empty_chunks)
            return
        if moved is not None:
            shape = tuple(self._impl.selection_shape(key))
            numpy_shape = (shape[moved], *shape[:moved], *shape[moved + 1 :])
            data = np.moveaxis(np.broadcast_to(data, numpy_shape), 0, moved)
        self._impl.write(key, data, self._write_empty_chunks)

    def warm_up_gpu(self, selection: Any = Ellipsis) -> None:
        """Makes ahead what reading ``selection`` into GPU memory needs: pinned staging,
        device memory, streams and the kernels of this array's codecs, kept for later reads.
        The first read then costs what later ones do (a CUDA context is made too).
        ``zarrkit.config.warm_up_gpu(array)`` does the same."""
        key, _ = self._key(selection, lists="orthogonal")
        self._impl.warm_up_gpu(key)
        # The read's result comes from CuPy's memory pool: grow it once now (a block of the
        # result's size, returned to the pool), so that the first read does not pay for it.
        try:
            shape = np.broadcast_to(np.empty((), dtype=np.bool_), self.shape)[selection].shape
        except (IndexError, TypeError, ValueError):
            return
        block = _device.new_device_array(shape, self._dtype)
        del block

    def get_basic_selection(self, selection: Any = Ellipsis, *, out: np.ndarray | None = None) -> Any:
        """Reads a basic selection (integers, slices, ...).

        The result is a new NumPy array the engine decodes into directly (a NumPy scalar
        when every axis is indexed by an integer). With ``out`` (a writable array of the
        selection's shape and the array's dtype, any strides) the data lands there.
        """
        key, moved = self._key(selection, lists="none")
        return self._read(key, moved, out)

    def set_basic_selection(self, selection: Any, value: Any) -> None:
        """Writes ``value`` (broadcast like NumPy) to a basic selection."""
        key, moved = self._key(selection, lists="none")
        self._write(key, moved, value)

    def get_orthogonal_selection(self, selection: Any, *, out: np.ndarray | None = None) -> Any:
        """Reads an orthogonal selection: per axis an integer, a slice (any step), or a
        list / 1-d array of integers (any order, repeats allowed) or of booleans; each axis
        is selected independently (``np.ix_`` semantics), as zarr's ``oindex``."""
        key, moved = self._key(selection, lists="orthogonal")
        return self._read(key, moved, out)

    def set_orthogonal_selection(self, selection: Any, value: Any) -> None:
        """Writes ``value`` to an orthogonal selection (where an element is selected
        twice, the last value in C order wins, as in NumPy)."""
        key, moved = self._key(selection, lists="orthogonal")
        self._write(key, moved, value)

    @property
    def oindex(self) -> OIndex:
        """Orthogonal indexing: ``a.oindex[[0, 5], ::2]``, ``a.oindex[mask0, mask1] = v``."""
        return OIndex(self)

    def _fancy_kind(self, selection: Any) -> str | None:
        """"mask" or "coordinate" when NumPy would index with a boolean array of the
        array's shape, or with integer arrays on every axis (paired element by element)."""
        items = selection if isinstance(selection, tuple) else (selection,)
        if len(items) == 1 and self.ndim > 1 and _is_array_like(items[0]):
            if np.asarray(items[0]).dtype == bool and np.ndim(items[0]) == self.ndim:
                return "mask"
        if self.ndim > 0 and len(items) == self.ndim and all(
            _is_array_like(i) or isinstance(i, (int, np.integer)) for i in items
        ):
            arrays = [np.asarray(i) for i in items if _is_array_like(i)]
            if arrays and all(a.dtype.kind in "iu" for a in arrays) and (
                len(arrays) > 1 or arrays[0].ndim > 1
            ):
                return "coordinate"
        return None

    def __getitem__(self, selection: Any) -> Any:
        """NumPy indexing: integers, slices (any step), ..., one integer or boolean list,
        integer arrays on every axis (paired, as ``vindex``) or a boolean mask."""
        if _plain_slices(selection, self.ndim):
            # The engine takes these as they are: small reads (a window, a patch) skip the
            # checks below, which cost as much as copying a cached chunk's part.
            return self._read(selection, None, None)
        kind = self._fancy_kind(selection)
        if kind == "mask":
            return self.get_mask_selection(selection[0] if isinstance(selection, tuple) else selection)
        if kind == "coordinate":
            return self.get_coordinate_selection(selection)
        key, moved = self._key(selection, lists="one")
        return self._read(key, moved, None)

    def __setitem__(self, selection: Any, value: Any) -> None:
        kind = self._fancy_kind(selection)
        if kind == "mask":
            self.set_mask_selection(selection[0] if isinstance(selection, tuple) else selection, value)
            return
        if kind == "coordinate":
            self.set_coordinate_selection(selection, value)
            return
        key, moved = self._key(selection, lists="one")
        self._write(key, moved, value)

    # ---- Coordinate, mask and block selections --------------------------------------------

    def _coordinates(self, selection: Any) -> list[np.ndarray]:
        items = selection if isinstance(selection, tuple) else (selection,)
        if len(items) != self.ndim:
            raise IndexError(
                f"a coordinate selection needs one integer array per axis ({self.ndim}), got {len(items)}"
            )
        coordinates = []
        for axis, item in enumerate(items):
            array = np.asarray(item)
            if array.dtype.kind not in "iu" and not (array.size == 0 and array.dtype.kind == "f"):
                raise IndexError(f"coordinate arrays must hold integers, got {array.dtype} on axis {axis}")
            array = np.ascontiguousarray(array, dtype=np.int64)
            n = self.shape[axis]
            if array.size and (array.min() < -n or array.max() >= n):
                bad = array[(array < -n) | (array >= n)].flat[0]
                raise IndexError(f"index {bad} is out of bounds for axis {axis} with size {n}")
            coordinates.append(array)
        return coordinates

    def get_coordinate_selection(self, selection: Any, *, out: np.ndarray | None = None) -> np.ndarray:
        """The elements at the given coordinates (zarr's ``vindex``): one integer array per
        axis, broadcast together (NumPy rules); the result has the broadcast shape."""
        coordinates = self._coordinates(selection)
        shape = np.broadcast_shapes(*(c.shape for c in coordinates))
        if self._dtype.kind in "OT":
            return self._var_result(self._impl.read_var_coordinates(coordinates), out)
        result = np.empty(shape, dtype=self._dtype) if out is None else out
        if result.shape != shape or result.dtype != self._dtype:
            raise ValueError(f"out has shape {result.shape} and dtype {result.dtype}; the selection needs {shape} and {self._dtype}")
        self._impl.read_coordinates_into(coordinates, result)
        return result if out is not None else _as_configured(result)

    def set_coordinate_selection(self, selection: Any, value: Any) -> None:
        """Writes ``value`` at the coordinates; a repeated coordinate keeps the last value."""
        self._check_writable()
        coordinates = self._coordinates(selection)
        data = np.asarray(_host_value(value), dtype=self._dtype)
        if self._dtype.kind in "OT":
            shape = np.broadcast_shapes(*(c.shape for c in coordinates))
            data = np.broadcast_to(data, shape)
            self._impl.write_var_coordinates(coordinates, [_var_element(v) for v in data.ravel()], list(shape),
                                             self._write_empty_chunks)
            return
        self._impl.write_coordinates(coordinates, data, self._write_empty_chunks)

    def _mask(self, mask: Any) -> np.ndarray:
        array = np.asarray(mask)
        if array.dtype != bool or array.shape != self.shape:
            raise IndexError(f"a mask selection needs a boolean array of the array's shape {self.shape}, got {array.dtype} {array.shape}")
        return np.ascontiguousarray(array)

    def get_mask_selection(self, mask: Any) -> np.ndarray:
        """NumPy's ``a[mask]``: the elements where ``mask`` (of the array's shape) is true,
        in C order."""
        if self._dtype.kind in "OT":
            return self._var_result(self._impl.read_var_mask(self._mask(mask)), None)
        raw = self._impl.read_mask(self._mask(mask))
        return _as_configured(raw.view(self._dtype))

    def set_mask_selection(self, mask: Any, value: Any) -> None:
        """NumPy's ``a[mask] = value``."""
        self._check_writable()
        data = np.asarray(_host_value(value), dtype=self._dtype)
        if self._dtype.kind in "OT":
            selected = self._mask(mask)
            data = np.broadcast_to(data, (int(np.count_nonzero(selected)),))
            self._impl.write_var_mask(selected, [_var_element(v) for v in data.ravel()], list(data.shape),
                                      self._write_empty_chunks)
            return
        self._impl.write_mask(self._mask(mask), data, self._write_empty_chunks)

    def _block_key(self, selection: Any) -> tuple[Any, ...]:
        items = selection if isinstance(selection, tuple) else (selection,)
        out: list[Any] = []
        for item in items:
            if item is Ellipsis or isinstance(item, slice):
                out.append(item)
            elif isinstance(item, (int, np.integer)) and not isinstance(item, (bool, np.bool_)):
                out.append(int(item))
            else:
                raise IndexError(f"block selections take integers, slices and ..., got {item!r}")
        self._check_block_bounds(out)
        return tuple(out)

    def _check_block_bounds(self, items: list[Any]) -> None:
        # Out-of-range chunk indices are IndexError, as NumPy and zarr-python say.
        if items.count(Ellipsis) > 1 or len(items) - items.count(Ellipsis) > self.ndim:
            return  # the engine explains what is wrong
        grid = self.cdata_shape
        axes = list(range(len(items)))
        if Ellipsis in items:
            at = items.index(Ellipsis)
            axes = axes[:at] + [-1] + [self.ndim - (len(items) - i) for i in range(at + 1, len(items))]
        for item, axis in zip(items, axes, strict=True):
            if isinstance(item, int) and not -grid[axis] <= item < grid[axis]:
                raise IndexError(f"block index {item} is out of bounds for axis {axis} with {grid[axis]} chunks")

    def get_block_selection(self, selection: Any, *, out: np.ndarray | None = None) -> np.ndarray:
        """Whole chunks by chunk index (zarr's ``blocks``): ``a.blocks[1, 2:4]``; an
        integer selects one chunk and keeps its axis."""
        key = self._block_key(selection)
        shape = tuple(self._impl.block_selection_shape(key))
        if self._dtype.kind in "OT":
            return self._var_result(self._impl.read_var_blocks(key), out)
        result = np.empty(shape, dtype=self._dtype) if out is None else out
        if result.shape != shape or result.dtype != self._dtype:
            raise ValueError(f"out has shape {result.shape} and dtype {result.dtype}; the selection needs {shape} and {self._dtype}")
        self._impl.read_blocks_into(key, result)
        return result if out is not None else _as_configured(result)

    def set_block_selection(self, selection: Any, value: Any) -> None:
        """Writes ``value`` to whole chunks selected by chunk index."""
        self._check_writable()
        data = np.asarray(_host_value(value), dtype=self._dtype)
        key = self._block_key(selection)
        if self._dtype.kind in "OT":
            shape = tuple(self._impl.block_selection_shape(key))
            data = np.broadcast_to(data, shape)
            self._impl.write_var_blocks(key, [_var_element(v) for v in data.ravel()], list(shape),
                                        self._write_empty_chunks)
            return
        self._impl.write_blocks(key, data, self._write_empty_chunks)

    @property
    def vindex(self) -> VIndex:
        """Coordinate and mask selections: ``a.vindex[[0, 3], [2, 5]]``, ``a.vindex[mask]``."""
        return VIndex(self)

    @property
    def blocks(self) -> BlockIndex:
        """Block (chunk) selections: ``a.blocks[0, 1:3]``."""
        return BlockIndex(self)

    # ---- Changing the shape -----------------------------------------------------------------

    def resize(self, *shape: Any) -> None:
        """Changes the shape (same number of axes). Growing keeps every element and reads
        the fill value in the new part; shrinking erases the chunks left outside."""
        self._check_writable()
        new_shape = tuple(int(s) for s in (shape[0] if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)) else shape))
        self._impl.resize(list(new_shape))
        self._metadata = None

    def append(self, data: Any, axis: int = 0) -> tuple[int, ...]:
        """Grows ``axis`` by ``data``'s length along it and writes ``data`` there; returns
        the new shape (as zarr-python's ``append``)."""
        self._check_writable()
        array = np.asarray(_host_value(data), dtype=self._dtype)
        if array.ndim != self.ndim:
            raise ValueError(f"data has {array.ndim} dimensions, the array {self.ndim}")
        if not -self.ndim <= axis < self.ndim:
            raise IndexError(f"axis {axis} is out of bounds for an array of {self.ndim} dimensions")
        shape = tuple(self._impl.append(array, axis % self.ndim))
        self._metadata = None
        return shape

    def _check_writable(self) -> None:
        if self._read_only:
            raise ReadOnlyError(f"cannot write to {self!r}: it was opened read-only")

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        """The whole array as a new NumPy array."""
        if copy is False:
            raise ValueError("reading a zarrkit array always makes a new NumPy array (copy=False is impossible)")
        # NumPy asks for host memory, whatever zarrkit.config.memory says.
        key, moved = self._key(Ellipsis, lists="none")
        result = np.asarray(self._read(key, moved, None, host=True))
        return result if dtype is None else result.astype(dtype, copy=False)

    def __iter__(self) -> Any:
        for i in range(len(self)):
            yield self[i]


class OIndex:
    """``Array.oindex``: orthogonal selections with ``[]``."""

    __slots__ = ("_array",)

    def __init__(self, array: Array) -> None:
        self._array = array

    def __getitem__(self, selection: Any) -> Any:
        return self._array.get_orthogonal_selection(selection)

    def __setitem__(self, selection: Any, value: Any) -> None:
        self._array.set_orthogonal_selection(selection, value)


class VIndex:
    """``Array.vindex``: coordinate selections (or a mask) with ``[]``."""

    __slots__ = ("_array",)

    def __init__(self, array: Array) -> None:
        self._array = array

    def __getitem__(self, selection: Any) -> Any:
        if self._array._fancy_kind(selection) == "mask":
            return self._array.get_mask_selection(selection[0] if isinstance(selection, tuple) else selection)
        return self._array.get_coordinate_selection(selection)

    def __setitem__(self, selection: Any, value: Any) -> None:
        if self._array._fancy_kind(selection) == "mask":
            self._array.set_mask_selection(selection[0] if isinstance(selection, tuple) else selection, value)
        else:
            self._array.set_coordinate_selection(selection, value)


class BlockIndex:
    """``Array.blocks``: block (chunk) selections with ``[]``."""

    __slots__ = ("_array",)

    def __init__(self, array: Array) -> None:
        self._array = array

    def __getitem__(self, selection: Any) -> Any:
        return self._array.get_block_selection(selection)

    def __setitem__(self, selection: Any, value: Any) -> None:
        self._array.set_block_selection(selection, value)


def _var_element(value: Any) -> str | bytes:
    if isinstance(value, (str, bytes)):
        return value
    if isinstance(value, np.str_):
        return str(value)
    if isinstance(value, np.bytes_):
        return bytes(value)
    raise ValueError(f"elements of a string array must be str or bytes, got {type(value).__name__}")


def _is_array_like(item: Any) -> bool:
    return isinstance(item, (list, np.ndarray))


def _reopen_array(store: Store, path: str, read_only: bool) -> Array:
    from zarrkit import api

    return api.open_array(store, path=path, mode="r" if read_only else "r+")
