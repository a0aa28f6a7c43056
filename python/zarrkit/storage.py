"""Stores: where arrays and groups live.

Anywhere zarrkit takes a ``store`` you may pass a path (``"data.zarr"``, a
``pathlib.Path``, ``"file:///abs/data.zarr"``), ``"memory://"`` for a new in-memory
store, an S3 or HTTP(S) location (``"s3://bucket/data.zarr"``,
``"https://host/data.zarr"``), a zip archive (``"data.zip"``, ``"data.zip/group"``), a
directory read into GPU memory through GPUDirect Storage (``"gds:///abs/data.zarr"``,
:class:`GDSStore`), one of these objects, or any zarr-python store (an instance of
``zarr.abc.store.Store``: fsspec, obstore, Icechunk, ...; see :class:`ZarrPythonStore`).
"""

from __future__ import annotations

import os
import pathlib
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from zarrkit import _zarrkit
from zarrkit.errors import ReadOnlyError

__all__ = [
    "GDSStore", "GpuMemoryStore", "LocalStore", "MemoryStore", "RemoteStore", "Store", "StoreLike", "ZarrPythonStore",
    "ZipStore",
]


class Store:
    """A key-value store (the base of :class:`LocalStore` and :class:`MemoryStore`).

    Keys are ``/``-separated relative paths such as ``"group/array/c/0/1"``. The methods
    here give direct access to the stored bytes; arrays and groups use them through the
    C++ engine.
    """

    _handle: Any
    _read_only: bool

    def __init__(self) -> None:  # pragma: no cover - abstract
        raise TypeError("use LocalStore or MemoryStore")

    @classmethod
    def _wrap(cls, handle: Any, read_only: bool) -> Store:
        store = cls.__new__(cls)
        store._handle = handle
        store._read_only = read_only
        return store

    @property
    def read_only(self) -> bool:
        """True when writes are refused."""
        return self._read_only or not self._handle.writable

    def _check_writable(self, what: str) -> None:
        if self.read_only:
            raise ReadOnlyError(f"cannot {what}: {self} is read-only")

    def get(self, key: str) -> bytes | None:
        """The value stored at ``key``, or None."""
        value = self._handle.get(key)
        return None if value is None else value.tobytes()

    def get_many(self, keys: list[str]) -> list[np.ndarray | None]:
        """The values of ``keys`` (uint8 NumPy arrays, None where absent), fetched together: in
        parallel on zarrkit's threads, or with many requests in flight on remote stores."""
        return self._handle.get_many(list(keys))

    def set(self, key: str, value: bytes | bytearray | memoryview | np.ndarray) -> None:
        """Stores ``value`` at ``key`` (atomically: readers see the old or the new value)."""
        self._check_writable(f"set {key!r}")
        self._handle.set(key, value)

    def delete(self, key: str) -> None:
        """Removes ``key``; nothing happens when it is absent."""
        self._check_writable(f"delete {key!r}")
        self._handle.erase(key)

    def delete_dir(self, prefix: str) -> None:
        """Removes every key below the directory ``prefix``."""
        self._check_writable(f"delete {prefix!r}")
        self._handle.erase_prefix(prefix)

    def exists(self, key: str) -> bool:
        """True when ``key`` holds a value."""
        return bool(self._handle.exists(key))

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.exists(key)

    def list(self, prefix: str = "") -> list[str]:
        """Every key below the directory ``prefix`` (all keys for ""), sorted."""
        return list(self._handle.list(prefix))

    def list_dir(self, prefix: str = "") -> tuple[list[str], list[str]]:
        """(keys, sub-directories) directly below ``prefix``, as names."""
        keys, prefixes = self._handle.list_dir(prefix)
        return list(keys), list(prefixes)

    def __iter__(self) -> Iterator[str]:
        return iter(self.list())

    def describe(self) -> str:
        """How error messages name this store ("file:///data/x.zarr", "memory://...")."""
        return str(self._handle.describe())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Store) and self._handle.same_as(other._handle)

    def __hash__(self) -> int:
        return hash(self.describe())

    def __repr__(self) -> str:
        mode = ", read_only=True" if self.read_only else ""
        return f"{type(self).__name__}({self.describe()!r}{mode})"


class LocalStore(Store):
    """A directory on a local file system; each key is a file below ``root``.

    Writes go to a temporary file that is renamed into place, so readers and crashes see
    a whole old value or a whole new one. The directory is created when missing unless
    ``read_only``. Pickles as its path (so a worker process opens the same directory).
    """

    def __init__(self, root: str | os.PathLike[str], *, read_only: bool = False) -> None:
        self._handle = _zarrkit.local_store(os.fspath(root), read_only=read_only, create=not read_only)
        self._read_only = read_only

    @property
    def root(self) -> pathlib.Path:
        """The directory."""
        return pathlib.Path(self._handle.root)

    def __reduce__(self) -> tuple[Any, ...]:
        return (_local_store, (str(self.root), self.read_only))

    def __eq__(self, other: object) -> bool:
        # Two stores over the same directory hold the same data.
        return isinstance(other, LocalStore) and self.root == other.root

    def __hash__(self) -> int:
        return hash(self.root)

    def __repr__(self) -> str:
        mode = ", read_only=True" if self.read_only else ""
        return f"LocalStore({str(self.root)!r}{mode})"


def _local_store(root: str, read_only: bool) -> LocalStore:
    return LocalStore(root, read_only=read_only)


class GDSStore(Store):
    """A directory whose reads into GPU memory go through GPUDirect Storage, like kvikio's
    ``kvikio.zarr.GDSStore``.

    Keys, writes, listings and host reads are those of :class:`LocalStore` (the same files).
    Arrays read under :func:`zarrkit.config.enable_gpu` return CuPy arrays; chunks stored
    without compression go from the files straight into GPU memory, others through zarrkit's
    GPU decoders. Device reads use cuFile (libcufile, loaded at run time when installed)
    or, where it cannot be used, zarrkit's own path: several threads read pieces into
    pinned buffers and the copies to the GPU overlap the reads.

    ``mode``: ``"auto"`` (cuFile if it loads and its driver opens, else the compat path),
    ``"cufile"`` (cuFile or :class:`zarrkit.errors.UnsupportedError`), ``"compat"``;
    None takes the ``gpu.gds_mode`` setting (:mod:`zarrkit.config`; default auto, or
    ``$ZARRKIT_GDS_MODE``). ``threads`` and ``piece_bytes`` tune the I/O threads (0: the
    ``gpu.gds_threads`` and ``gpu.gds_piece_bytes`` settings, 16 and 4 MiB by default). Without a GPU, everything but device reads works; those raise
    ``UnsupportedError("no CUDA device: ...")``. Pickles as its path and options.
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        read_only: bool = False,
        mode: str | None = None,
        threads: int = 0,
        piece_bytes: int = 0,
    ) -> None:
        if mode is not None and mode not in ("auto", "cufile", "compat"):
            raise ValueError(f"GDSStore mode must be 'auto', 'cufile' or 'compat', got {mode!r}")
        self._handle = _zarrkit.gds_store(
            os.fspath(root), read_only=read_only, create=not read_only, mode=mode, threads=threads,
            piece_bytes=piece_bytes,
        )
        self._read_only = read_only

    @property
    def root(self) -> pathlib.Path:
        """The directory."""
        return pathlib.Path(self._handle.root)

    @property
    def options(self) -> dict[str, Any]:
        """The mode, threads and piece size in force (options given, else the settings)."""
        mode, threads, piece_bytes = self._handle.gds_options()
        return {"mode": mode, "threads": threads, "piece_bytes": piece_bytes}

    @property
    def device_path(self) -> str:
        """How device reads go: ``"cufile"``, ``"cufile-compat"`` (cuFile in its own
        compatibility mode, without the nvidia-fs driver) or ``"compat"``. Chosen at the
        first device read (or here); raises UnsupportedError without a GPU."""
        return str(self._handle.gds_device_path()[0])

    @property
    def device_path_detail(self) -> str:
        """What was found: cuFile's version and mode, or why it is not used."""
        return str(self._handle.gds_device_path()[1])

    @property
    def stats(self) -> dict[str, int]:
        """Device reads so far: values and bytes per path, values cuFile refused."""
        return dict(self._handle.gds_stats())

    def read_into_device(self, keys: list[str], pointers: list[int], capacities: list[int]) -> list[int | None]:
        """Reads the whole values of ``keys`` into device memory at ``pointers`` (each
        ``capacities`` bytes; e.g. ``cupy_array.data.ptr``), all at once over the I/O
        threads. Returns the sizes (None: absent; a value larger than its capacity is not
        read)."""
        return list(self._handle.gds_read_values_into_device(list(keys), list(pointers), list(capacities)))

    def __reduce__(self) -> tuple[Any, ...]:
        mode, threads, piece_bytes = self._handle.gds_options()
        return (_gds_store, (str(self.root), self.read_only, mode, threads, piece_bytes))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GDSStore) and self.root == other.root

    def __hash__(self) -> int:
        return hash(("gds", self.root))

    def __repr__(self) -> str:
        mode = ", read_only=True" if self.read_only else ""
        return f"GDSStore({str(self.root)!r}{mode})"


def _gds_store(root: str, read_only: bool, mode: str, threads: int, piece_bytes: int) -> GDSStore:
    return GDSStore(root, read_only=read_only, mode=mode, threads=threads, piece_bytes=piece_bytes)


class MemoryStore(Store):
    """A store in this process's memory.

    ``store_dict`` gives initial contents (key -> bytes). A MemoryStore pickles as a copy
    of its contents, as zarr-python's does: a worker process gets its own copy, and its
    writes do not come back (use a :class:`LocalStore` for work across processes).
    """

    def __init__(self, store_dict: Mapping[str, bytes] | None = None, *, read_only: bool = False) -> None:
        self._handle = self._new_handle()
        self._read_only = False
        for key, value in (store_dict or {}).items():
            self._handle.set(key, value)
        self._read_only = read_only

    @staticmethod
    def _new_handle() -> Any:
        return _zarrkit.memory_store()

    def to_dict(self) -> dict[str, bytes]:
        """A copy of the contents (key -> bytes)."""
        return {key: self.get(key) or b"" for key in self.list()}

    def __reduce__(self) -> tuple[Any, ...]:
        return (_memory_store, (type(self), self.to_dict(), self.read_only))


def _memory_store(cls: type[MemoryStore], contents: dict[str, bytes], read_only: bool) -> MemoryStore:
    return cls(contents, read_only=read_only)


class GpuMemoryStore(MemoryStore):
    """A store whose values live in GPU memory, like zarr-python's ``GpuMemoryStore``.

    Keys stay on the host; each value is held in device memory. :meth:`get` copies a
    value back to the host; arrays read with :func:`zarrkit.config.enable_gpu` land in
    device memory. Needs a zarrkit built with CUDA and a usable GPU: otherwise creating
    one raises :class:`zarrkit.errors.UnsupportedError` with the reason. Pickles as a copy
    of its contents, which the receiving process puts in its own GPU's memory.
    """

    @staticmethod
    def _new_handle() -> Any:
        return _zarrkit.gpu_memory_store()


class ZipStore(Store):
    """A zip archive, read and written as zarr-python's ZipStore does (members stored
    uncompressed, zip64 when needed; either reads the other's archives).

    ``mode``: ``"r"`` read-only (the file must exist), ``"a"`` read and write (created
    when missing), ``"w"`` start empty (the old archive is replaced at the first flush).
    Writes are kept aside and go into the archive at :meth:`flush`, :meth:`close` or the
    end of a ``with`` block, which write a new archive and rename it into place: a
    reader or a crash sees the old archive or the new one. Close writable stores
    explicitly (errors of a flush at garbage collection only reach stderr). Pickles as
    its path.
    """

    def __init__(
        self, path: str | os.PathLike[str], *, mode: str = "r", read_only: bool | None = None
    ) -> None:
        if mode not in ("r", "a", "w"):
            raise ValueError(f"ZipStore mode must be 'r', 'a' or 'w', got {mode!r}")
        if read_only is None:
            read_only = mode == "r"
        if read_only and mode == "w":
            raise ValueError("ZipStore mode 'w' cannot be read-only")
        self._handle = _zarrkit.zip_store(os.fspath(path), read_only=read_only, truncate=mode == "w")
        self._read_only = read_only

    @property
    def path(self) -> pathlib.Path:
        """The archive."""
        return pathlib.Path(self._handle.root)

    def flush(self) -> None:
        """Writes the pending changes into the archive; the store stays open."""
        self._handle.flush()

    def close(self) -> None:
        """Flushes, then closes the archive; later use raises InvalidArgumentError."""
        self._handle.close()

    def __enter__(self) -> ZipStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __reduce__(self) -> tuple[Any, ...]:
        return (_zip_store, (str(self.path), self.read_only))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ZipStore) and self.path == other.path

    def __hash__(self) -> int:
        return hash(self.path)

    def __repr__(self) -> str:
        mode = ", read_only=True" if self.read_only else ""
        return f"ZipStore({str(self.path)!r}{mode})"


def _zip_store(path: str, read_only: bool) -> ZipStore:
    return ZipStore(path, mode="r" if read_only else "a", read_only=read_only)


class RemoteStore(Store):
    """An S3 bucket (``"s3://bucket/prefix"``, read and write) or an HTTP(S) directory
    (``"https://host/data.zarr"``, read-only).

    S3 credentials, region, endpoint (``AWS_ENDPOINT_URL_S3``) and addressing come from
    the environment and the AWS files, as boto3 reads them; retries, timeouts and request
    concurrency from the ``remote.*`` settings of :mod:`zarrkit.config` in force when it is
    opened (their defaults from the ``ZARRKIT_HTTP_*`` variables; see docs/settings.md).
    Opening sends no request. Pickles as its URL, so a worker process (a Dask worker, say)
    opens the same bucket or site with the settings of its own environment.
    """

    def __init__(self, url: str, *, read_only: bool = False) -> None:
        scheme = _scheme(url)
        if scheme not in ("s3", "http", "https"):
            raise ValueError(f"RemoteStore takes an s3://, http:// or https:// URL, got {url!r}")
        if scheme != "s3" and not read_only:
            read_only = True  # HTTP stores are read-only: say so, rather than fail later
        handle, inner = _zarrkit.open_location(url, for_writing=not read_only)
        if inner:  # pragma: no cover - remote locations have no node path part
            raise ValueError(f"unexpected node path {inner!r} in {url!r}")
        self._handle = handle
        self._read_only = read_only

    @property
    def url(self) -> str:
        """The store's root URL, as error messages name it."""
        return self.describe()

    def __reduce__(self) -> tuple[Any, ...]:
        return (_remote_store, (self.url, self.read_only))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RemoteStore) and self.url == other.url

    def __hash__(self) -> int:
        return hash(self.url)


def _remote_store(url: str, read_only: bool) -> RemoteStore:
    return RemoteStore(url, read_only=read_only)


class ZarrPythonStore(Store):
    """A zarr-python store (any ``zarr.abc.store.Store``) read and written by zarrkit's engine.

    fsspec's ``FsspecStore`` (its memory file system, kerchunk-style reference file
    systems, S3 or HTTP through fsspec), zarr-python's ``ObjectStore`` over obstore's stores,
    an Icechunk session's store, zarr-python's ``MemoryStore`` and wrappers around any of
    them. Passing such a store as ``store=`` to :func:`zarrkit.open` and the other functions
    wraps it in one of these; zarr-python's ``LocalStore`` opens zarrkit's own
    :class:`LocalStore` on its directory instead.

    The engine keeps many requests in flight: the keys a read needs are fetched in batches,
    each batch one ``asyncio.gather`` of the store's ``get`` on zarr-python's event loop (the
    ``remote.concurrency`` setting in force when the store is wrapped bounds the values on
    the way); the byte ranges read of one value (the inner chunks of a shard read in part)
    go the same way, one gather of ranged ``get`` calls. Chunks are decoded on zarrkit's
    threads as they arrive, with the GIL released. Writes go through the store's
    ``set`` and ``delete`` and are as atomic as the store makes them. A read-only store (or
    one that does not support writes) is read-only here too. Errors the store raises arrive
    as :mod:`zarrkit.errors` classes naming the store, the operation and the key
    (``OSError`` and the store's own failures as :class:`~zarrkit.errors.IoError`).
    Pickles as the zarr-python store it wraps (where that store pickles).
    """

    _bridge: Any

    def __init__(self, store: Any) -> None:
        from zarrkit._zarr_store import ZarrStoreBridge, is_zarr_store

        if not is_zarr_store(store):
            raise TypeError(f"ZarrPythonStore takes a zarr.abc.store.Store, got {type(store).__name__}")
        # The engine holds the bridge weakly (python/src/python_store.cpp): this object keeps it.
        self._bridge = ZarrStoreBridge(store)
        self._handle = _zarrkit.python_store(self._bridge)
        self._read_only = False

    @classmethod
    def _wrap(cls, handle: Any, read_only: bool) -> Store:
        store = super()._wrap(handle, read_only)
        store._bridge = _zarrkit.python_store_bridge(handle)
        return store

    @property
    def store(self) -> Any:
        """The zarr-python store."""
        return self._bridge.store

    def __reduce__(self) -> tuple[Any, ...]:
        return (_zarr_python_store, (self.store, self._read_only))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ZarrPythonStore) and (self._handle.same_as(other._handle) or self.store == other.store)

    def __hash__(self) -> int:
        return hash(type(self.store))

    def __repr__(self) -> str:
        mode = ", read_only=True" if self.read_only else ""
        return f"ZarrPythonStore({self.store!r}{mode})"


def _zarr_python_store(store: Any, read_only: bool) -> Store:
    wrapped = ZarrPythonStore(store)
    return ZarrPythonStore._wrap(wrapped._handle, read_only) if read_only else wrapped


def _scheme(location: str) -> str:
    head, sep, _ = location.partition("://")
    return head.lower() if sep and head[:1].isalpha() and head.isalnum() else ""


StoreLike = Store | str | os.PathLike  # what `store=` accepts (and zarr-python's stores)


def resolve(store: Any, path: str | None, *, mode: str) -> tuple[Store, str]:
    """The Store and node path for a user's ``store`` and ``path`` arguments.

    Paths go through the engine's location rules: an existing directory inside a Zarr
    hierarchy opens the hierarchy's root and the node path below it.
    """
    node_path = _normalize_path(path)
    if store is None:
        return MemoryStore(), node_path
    if isinstance(store, Store):
        if mode == "r" and not store.read_only:
            store = type(store)._wrap(store._handle, True)
        return store, node_path
    zarr_store = _from_zarr_python_store(store)
    if zarr_store is not None:
        if zarr_store.read_only and mode in ("r+", "w", "w-"):
            raise ReadOnlyError(f"cannot open {zarr_store!r} in mode {mode!r}: the store is read-only")
        return resolve(zarr_store, path, mode=mode)
    if isinstance(store, (str, os.PathLike)):
        location = os.fspath(store)
        writing = mode != "r"
        if writing and mode == "a" and _scheme(location) in ("http", "https"):
            # HTTP is read-only: mode "a" (the default) opens what is there, read-only.
            writing = False
        handle, inner = _zarrkit.open_location(location, for_writing=writing)
        classes: dict[str, type[Store]] = {
            "local": LocalStore, "gds": GDSStore, "memory": MemoryStore, "s3": RemoteStore, "http": RemoteStore,
            "zip": ZipStore,
        }
        wrapped = classes.get(handle.kind, Store)._wrap(handle, not writing)
        return wrapped, _join(inner, node_path)
    raise TypeError(
        f"store must be a path, 'memory://', a zarrkit.storage store or a zarr-python store, got {type(store).__name__}"
    )


def _from_zarr_python_store(store: Any) -> Store | None:
    # zarr-python's LocalStore names a directory: open the same directory.
    cls = type(store)
    if cls.__module__.startswith("zarr.") and cls.__name__ == "LocalStore":
        return LocalStore(store.root, read_only=bool(getattr(store, "read_only", False)))
    # kvikio's GDSStore (a zarr-python LocalStore read into GPU memory): zarrkit's.
    if cls.__module__.startswith("kvikio") and cls.__name__ == "GDSStore":
        return GDSStore(store.root, read_only=bool(getattr(store, "read_only", False)))
    # Any other zarr-python store: read and written through it.
    from zarrkit._zarr_store import is_zarr_store

    return ZarrPythonStore(store) if is_zarr_store(store) else None


def _normalize_path(path: str | None) -> str:
    if path is None:
        return ""
    return str(path).strip("/")


def _join(a: str, b: str) -> str:
    return "/".join(p for p in (a, b) if p)
