"""Opening and creating arrays and groups, with zarr-python 3's signatures."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np

from zarrkit import _codecs, _zarrkit
from zarrkit._dtype import dtype_spec
from zarrkit.array import Array
from zarrkit.attributes import _dumps
from zarrkit.errors import InvalidArgumentError, NotFoundError, ReadOnlyError
from zarrkit.group import Group
from zarrkit.storage import Store, StoreLike, resolve

__all__ = ["array", "create_array", "create_group", "group", "open", "open_array", "open_group"]

AccessMode = Literal["r", "r+", "a", "w", "w-"]
_MODES = ("r", "r+", "a", "w", "w-")


class _Default:
    """Marks an argument left out (where None has a meaning of its own)."""

    def __repr__(self) -> str:
        return "<default>"


DEFAULT: Any = _Default()


def _check_mode(mode: str) -> None:
    if mode not in _MODES:
        raise InvalidArgumentError(f"mode must be one of {', '.join(_MODES)}, got {mode!r}")


def _probe(store: Store, path: str) -> tuple[str, int] | None:
    found = _zarrkit.probe_node(store._handle, path)
    return None if found is None else (str(found[0]), int(found[1]))


def _not_found(store: Store, path: str, what: str) -> NotFoundError:
    where = f"'{path}' in " if path else ""
    return NotFoundError(f"no {what} at {where}{store.describe()}")


def _check_store_writable(store: Store, what: str) -> None:
    if store.read_only:
        raise ReadOnlyError(f"cannot {what} in {store.describe()}: the store is read-only")


def _check_format(found: tuple[str, int], zarr_format: int | None, store: Store, path: str) -> None:
    if zarr_format is not None and found[1] != zarr_format:
        raise NotFoundError(
            f"the {found[0]} at '{path}' in {store.describe()} is Zarr v{found[1]}, not v{zarr_format}"
        )


# ---- Opening ---------------------------------------------------------------------------------


def open(  # noqa: A001 - the name zarr-python uses
    store: StoreLike | None = None,
    *,
    mode: AccessMode | None = None,
    zarr_format: int | None = None,
    path: str | None = None,
    **kwargs: Any,
) -> Array | Group:
    """Opens the array or group at ``store``/``path``, creating one when the mode allows.

    Modes as in zarr-python: ``"r"`` read-only; ``"r+"`` read and write, must exist;
    ``"a"`` (the default) read and write, created when missing; ``"w"`` created,
    replacing what was there; ``"w-"`` created, an error if something is there. A node
    that is created is an array when ``shape`` is among ``kwargs`` (the arguments of
    :func:`create_array`), else a group.
    """
    mode = mode or "a"
    _check_mode(mode)
    resolved, node_path = resolve(store, path, mode=mode)
    if mode in ("w", "w-") or _probe(resolved, node_path) is None:
        if mode in ("r", "r+"):
            raise _not_found(resolved, node_path, "array or group")
        if "shape" in kwargs:
            return open_array(resolved, mode=mode, path=node_path, zarr_format=zarr_format, **kwargs)
        return open_group(resolved, mode=mode, path=node_path, zarr_format=zarr_format, **kwargs)
    found = _probe(resolved, node_path)
    assert found is not None
    if found[0] == "array":
        return open_array(resolved, mode=mode, path=node_path, zarr_format=zarr_format)
    return open_group(resolved, mode=mode, path=node_path, zarr_format=zarr_format,
                      use_consolidated=kwargs.get("use_consolidated"))


def open_array(
    store: StoreLike | None = None,
    *,
    mode: AccessMode = "a",
    zarr_format: int | None = None,
    path: str = "",
    **kwargs: Any,
) -> Array:
    """Opens an existing array; in modes ``"a"``, ``"w"`` and ``"w-"`` a missing one is
    created from ``kwargs`` (the arguments of :func:`create_array`, ``shape`` at least).

    Raises :class:`zarrkit.errors.NotFoundError` (a ``FileNotFoundError``) when there is
    no array and none is to be created.
    """
    _check_mode(mode)
    resolved, node_path = resolve(store, path, mode=mode)
    if mode in ("r", "r+"):
        # An existing array in one read of its metadata (probing first would read it twice:
        # one more round trip to a remote store). Anything else is told apart below.
        try:
            opened = Array(_zarrkit.open_array(resolved._handle, node_path), resolved, read_only=mode == "r")
        except (NotFoundError, InvalidArgumentError):
            opened = None
        if opened is not None:
            _check_format(("array", opened.zarr_format), zarr_format, resolved, node_path)
            return opened
    found = None if mode in ("w", "w-") else _probe(resolved, node_path)
    if found is None:
        if mode in ("r", "r+") or "shape" not in kwargs:
            raise _not_found(resolved, node_path, "array")
        return create_array(
            resolved,
            name=node_path,
            zarr_format=zarr_format or 3,
            overwrite=mode == "w",
            **kwargs,
        )
    if found[0] != "array":
        raise NotFoundError(f"'{node_path}' in {resolved.describe()} is a group, not an array")
    _check_format(found, zarr_format, resolved, node_path)
    return Array(_zarrkit.open_array(resolved._handle, node_path), resolved, read_only=mode == "r")


def open_group(
    store: StoreLike | None = None,
    *,
    mode: AccessMode = "a",
    path: str | None = None,
    zarr_format: int | None = None,
    attributes: dict[str, Any] | None = None,
    use_consolidated: bool | None = None,
    **kwargs: Any,
) -> Group:
    """Opens a group; in modes ``"a"``, ``"w"`` and ``"w-"`` a missing one is created
    (with ``attributes``). ``use_consolidated`` as in zarr-python: ``None`` uses consolidated
    metadata where the group has it, ``True`` requires it (``NotFoundError`` without),
    ``False`` reads every node's metadata from the store."""
    _check_mode(mode)
    unknown = set(kwargs) - {"cache_attrs", "synchronizer", "chunk_store", "storage_options", "meta_array"}
    if unknown:
        raise TypeError(f"open_group() got unexpected keyword arguments: {', '.join(sorted(unknown))}")
    resolved, node_path = resolve(store, path, mode=mode)
    found = None if mode in ("w", "w-") else _probe(resolved, node_path)
    if found is None:
        if mode in ("r", "r+"):
            raise _not_found(resolved, node_path, "group")
        return create_group(
            resolved, path=node_path, zarr_format=zarr_format or 3, overwrite=mode == "w", attributes=attributes
        )
    if found[0] != "group":
        raise NotFoundError(f"'{node_path}' in {resolved.describe()} is an array, not a group")
    _check_format(found, zarr_format, resolved, node_path)
    return Group(_zarrkit.open_group(resolved._handle, node_path, use_consolidated), resolved, read_only=mode == "r")


def open_consolidated(store: StoreLike | None = None, *, mode: AccessMode = "a", path: str | None = None,
                      **kwargs: Any) -> Group:
    """zarr-python's ``open_consolidated``: :func:`open_group` with ``use_consolidated=True``."""
    return open_group(store, mode=mode, path=path, use_consolidated=True, **kwargs)


def consolidate_metadata(store: StoreLike, path: str | None = None, zarr_format: int | None = None) -> Group:
    """zarr-python's ``consolidate_metadata``: stores the metadata of every node below the
    group at ``store``/``path`` with the group (Zarr v3: inline in its ``zarr.json``; v2: a
    ``.zmetadata`` beside ``.zgroup``), so that opening the hierarchy reads one document.
    Returns the group, opened with it."""
    resolved, node_path = resolve(store, path, mode="r+")
    found = _probe(resolved, node_path)
    if found is None:
        raise _not_found(resolved, node_path, "group")
    if found[0] != "group":
        raise NotFoundError(f"'{node_path}' in {resolved.describe()} is an array, not a group")
    _check_format(found, zarr_format, resolved, node_path)
    return Group(_zarrkit.consolidate_metadata(resolved._handle, node_path), resolved, read_only=False)


# ---- Creating --------------------------------------------------------------------------------


def create_group(
    store: StoreLike | None = None,
    *,
    path: str | None = None,
    zarr_format: int | None = None,
    overwrite: bool = False,
    attributes: dict[str, Any] | None = None,
    storage_options: dict[str, Any] | None = None,
) -> Group:
    """Creates a group (and missing groups on its path). An existing group is kept unless
    ``overwrite``, which removes it and everything below it first."""
    resolved, node_path = resolve(store, path, mode="w" if overwrite else "a")
    _check_store_writable(resolved, "create a group")
    impl = _zarrkit.create_group(resolved._handle, node_path, zarr_format or 3, _dumps(attributes or {}), overwrite)
    return Group(impl, resolved)


def group(store: StoreLike | None = None, *, path: str | None = None, **kwargs: Any) -> Group:
    """Opens the group at ``store``/``path``, creating it when missing (mode ``"a"``)."""
    return open_group(store, path=path, mode=kwargs.pop("mode", "a"), **kwargs)


def _shape_tuple(shape: Any, what: str) -> tuple[int, ...]:
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    try:
        return tuple(int(s) for s in shape)
    except TypeError:
        raise InvalidArgumentError(f"{what} must be an integer or a sequence of integers, got {shape!r}") from None


def _rectilinear_chunks(chunks: Any, shape: tuple[int, ...], what: str) -> list[Any] | None:
    """Per axis a size or the list of the chunks' sizes (a rectilinear grid), when `chunks`
    lists sizes for some axis; None for a regular chunk shape. Listed sizes must be positive
    and sum to the axis's extent, as zarr-python requires of a new array."""
    if chunks is None or isinstance(chunks, (str, int, np.integer, Mapping)):
        return None
    entries = list(chunks)
    if not any(isinstance(e, (list, tuple, np.ndarray)) for e in entries):
        return None
    if len(entries) != len(shape):
        raise InvalidArgumentError(f"{what} {chunks} must have one entry per axis of shape {shape}")
    out: list[Any] = []
    for axis, (entry, extent) in enumerate(zip(entries, shape, strict=True)):
        if isinstance(entry, (list, tuple, np.ndarray)):
            sizes = [int(s) for s in entry]
            if not sizes or any(s < 1 for s in sizes):
                raise InvalidArgumentError(f"{what}: axis {axis} must list positive chunk sizes, got {list(entry)}")
            if sum(sizes) != extent:
                raise InvalidArgumentError(f"{what}: the chunk sizes {sizes} of axis {axis} do not sum to {extent}")
            out.append(sizes)
        else:
            size = int(entry)
            if size < 1:
                raise InvalidArgumentError(f"{what}: axis {axis} chunk size must be positive, got {entry}")
            out.append(size)
    return out


def _chunk_tuple(chunks: Any, shape: tuple[int, ...]) -> tuple[int, ...] | None:
    """None for automatic chunks; -1 or None entries mean the whole axis."""
    if chunks is None or (isinstance(chunks, str) and chunks == "auto"):
        return None
    if isinstance(chunks, (int, np.integer)):
        chunks = (int(chunks),) * len(shape)
    chunks = tuple(chunks)
    if len(chunks) != len(shape):
        raise InvalidArgumentError(f"chunks {chunks} must have one entry per axis of shape {shape}")
    return tuple(max(s, 1) if c in (None, -1) else int(c) for c, s in zip(chunks, shape, strict=True))


def _fill_bytes(fill_value: Any, dt: np.dtype, zarr_format: int) -> Any:
    if fill_value is DEFAULT:
        return None
    if fill_value is None:
        return "null" if zarr_format == 2 else None
    try:
        return np.asarray(fill_value, dtype=dt).tobytes()
    except (TypeError, ValueError) as e:
        raise InvalidArgumentError(f"fill_value {fill_value!r} is not a value of {dt}: {e}") from None


def _bytes_codec(dt: np.dtype) -> dict[str, Any]:
    if dt.itemsize > 1 and dt.kind not in "bSV":
        return {"name": "bytes", "configuration": {"endian": "little"}}
    return {"name": "bytes"}


def create_array(
    store: StoreLike | None = None,
    *,
    name: str | None = None,
    shape: Any = None,
    dtype: Any = None,
    data: Any = None,
    chunks: Any = "auto",
    shards: Any = None,
    filters: Any = "auto",
    compressors: Any = "auto",
    compressor: Any = "auto",
    serializer: Any = "auto",
    fill_value: Any = DEFAULT,
    order: Literal["C", "F"] | None = None,
    zarr_format: int | None = 3,
    attributes: dict[str, Any] | None = None,
    chunk_key_encoding: Any = None,
    dimension_names: Sequence[str | None] | None = None,
    storage_options: dict[str, Any] | None = None,
    overwrite: bool = False,
    config: Mapping[str, Any] | None = None,
    write_data: bool = True,
) -> Array:
    """Creates an array, as ``zarr.create_array`` does.

    Parameters
    ----------
    store : path, ``"memory://"`` or zarrkit.storage store (None: a new MemoryStore)
    name : the array's path inside the store
    shape, dtype : the array's shape and NumPy data type (taken from ``data`` if given;
        dtype defaults to float64)
    data : array-like written after creation (unless ``write_data=False``)
    chunks : chunk shape; ``"auto"`` picks chunks of about 1 MiB. With ``shards``, the
        inner chunks of each shard
    shards : shard shape (Zarr v3): chunks are stored in shards of this shape
    filters : array->array codecs (v3) or numcodecs filters (v2); ``"auto"``: none
    compressors : bytes->bytes codecs (v3) or one numcodecs compressor (v2); ``"auto"``:
        zstd level 0; None: none. ``compressor`` is the zarr-python v2 spelling
    serializer : the array->bytes codec (v3); ``"auto"``: ``bytes`` (little-endian)
    fill_value : value of elements never written (default 0 / False / ""); None means a
        null fill value in Zarr v2
    order : "C" or "F", the memory order of chunks in Zarr v2
    zarr_format : 3 (default) or 2
    attributes : user attributes (JSON)
    chunk_key_encoding : {"name": "default"|"v2", "separator": "/"|"."}
    dimension_names : one name (or None) per axis (Zarr v3)
    overwrite : replace an existing node (and everything below it)
    config : {"write_empty_chunks": bool} for this array's writes
    """
    if data is not None:
        data = np.asarray(data)
        if shape is None:
            shape = data.shape
        if dtype is None:
            dtype = data.dtype
    if shape is None:
        raise InvalidArgumentError("create_array needs shape= (or data=)")
    if zarr_format is None:
        zarr_format = 3
    if zarr_format not in (2, 3):
        raise InvalidArgumentError(f"zarr_format must be 2 or 3, got {zarr_format!r}")
    shape_t = _shape_tuple(shape, "shape")
    engine_dtype, dt = dtype_spec(np.float64 if dtype is None else dtype)
    # Listed chunk sizes on some axis: a rectilinear grid (Zarr v3), of chunks or of shards.
    rectilinear = _rectilinear_chunks(shards if shards is not None else chunks, shape_t,
                                      "shards" if shards is not None else "chunks")
    if shards is not None and _rectilinear_chunks(chunks, shape_t, "chunks") is not None:
        raise InvalidArgumentError(
            "the chunks inside shards are all of one shape: give chunk sizes that vary to shards= instead"
        )
    if rectilinear is not None and zarr_format != 3:
        raise InvalidArgumentError("rectilinear chunk grids (chunk sizes listed per axis) are a Zarr v3 feature")
    if rectilinear is not None and shards is None:
        chunks = None
    chunk_t = _chunk_tuple(chunks, shape_t)
    if compressor != "auto":
        if compressors != "auto":
            raise InvalidArgumentError("pass compressors= or compressor=, not both")
        compressors = compressor

    spec: dict[str, Any] = {"zarr_format": zarr_format, "shape": list(shape_t), "dtype": engine_dtype}
    if zarr_format == 3:
        if order not in (None, "C", "F"):
            raise InvalidArgumentError(f"order must be 'C' or 'F', got {order!r}")
        explicit = not (filters == "auto" and compressors == "auto" and serializer == "auto" and shards is None)
        if explicit:
            filter_list = [] if filters == "auto" else [_codecs.v3_entry(c) for c in _codecs.as_list(filters)]
            serializer_entry = _bytes_codec(dt) if serializer == "auto" else _codecs.v3_entry(serializer)
            if compressors == "auto":
                compressor_list: list[Any] = [{"name": "zstd", "configuration": {"level": 0, "checksum": False}}]
            else:
                compressor_list = [_codecs.v3_entry(c) for c in _codecs.as_list(compressors)]
            codecs = [*filter_list, serializer_entry, *compressor_list]
            if shards is not None:
                if isinstance(shards, Mapping):
                    shards = shards["shape"]
                shard_t = (
                    _chunk_tuple(shards, shape_t)
                    if rectilinear is None
                    else tuple(max(a) if isinstance(a, list) else a for a in rectilinear)
                )
                if shard_t is None:
                    raise InvalidArgumentError("shards must be a shape (automatic shards are not supported)")
                if chunk_t is None:
                    raise InvalidArgumentError("pass chunks= (the inner chunk shape) together with shards=")
                shard_sizes = (
                    [[s] for s in shard_t]
                    if rectilinear is None
                    else [a if isinstance(a, list) else [a] for a in rectilinear]
                )
                bad = [i for i, (s, c) in enumerate(zip(shard_sizes, chunk_t, strict=True)) if any(x % c for x in s)]
                if bad:
                    raise InvalidArgumentError(
                        f"the shard shape {shard_t} must be a multiple of the chunk shape {chunk_t} on every axis"
                    )
                codecs = [
                    {
                        "name": "sharding_indexed",
                        "configuration": {
                            "chunk_shape": list(chunk_t),
                            "codecs": codecs,
                            "index_codecs": [
                                {"name": "bytes", "configuration": {"endian": "little"}},
                                {"name": "crc32c"},
                            ],
                            "index_location": "end",
                        },
                    }
                ]
                chunk_t = shard_t
            spec["codecs"] = codecs
        if dimension_names is not None:
            names = list(dimension_names)
            if len(names) != len(shape_t):
                raise InvalidArgumentError(f"dimension_names {names} must have one entry per axis of shape {shape_t}")
            spec["dimension_names"] = names
    else:
        if shards is not None:
            raise InvalidArgumentError("shards are a Zarr v3 feature")
        if serializer != "auto":
            raise InvalidArgumentError("serializer applies to Zarr v3 arrays only")
        if dimension_names is not None:
            raise InvalidArgumentError("dimension_names are a Zarr v3 feature")
        if compressors != "auto":
            compressor_list = _codecs.as_list(compressors)
            if len(compressor_list) > 1:
                raise InvalidArgumentError("a Zarr v2 array takes at most one compressor")
            spec["compressor"] = _codecs.v2_entry(compressor_list[0], engine_dtype) if compressor_list else None
        if filters != "auto":
            filter_list = [_codecs.v2_entry(c, engine_dtype) for c in _codecs.as_list(filters)]
            spec["filters"] = filter_list or None
        spec["order"] = order or "C"
    if rectilinear is not None:
        spec["rectilinear_chunks"] = rectilinear
    elif chunk_t is not None:
        spec["chunks"] = list(chunk_t)
    if chunk_key_encoding is not None:
        spec["chunk_key_encoding"] = _chunk_key_encoding(chunk_key_encoding)
    if attributes:
        spec["attributes"] = json.loads(_dumps(attributes))

    resolved, node_path = resolve(store, name, mode="w" if overwrite else "a")
    _check_store_writable(resolved, "create an array")
    impl = _zarrkit.create_array(
        resolved._handle, node_path, json.dumps(spec), _fill_bytes(fill_value, dt, zarr_format), overwrite
    )
    result = Array(impl, resolved)
    if config:
        result._set_config(config)
    if data is not None and write_data:
        result[...] = data
    return result


def _chunk_key_encoding(value: Any) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise InvalidArgumentError(f"chunk_key_encoding must be a dict, got {value!r}")
    name = value.get("name", "default")
    separator = value.get("separator", value.get("configuration", {}).get("separator"))
    out: dict[str, Any] = {"name": name}
    if separator is not None:
        out["configuration"] = {"separator": separator}
    return out


def array(data: Any, **kwargs: Any) -> Array:
    """Creates an array holding ``data`` (in a new MemoryStore unless ``store=``)."""
    store = kwargs.pop("store", None)
    return create_array(store, data=data, **kwargs)
