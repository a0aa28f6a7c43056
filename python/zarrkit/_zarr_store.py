"""The bridge between zarrkit's engine and a zarr-python store (``zarr.abc.store.Store``).

zarr-python's stores (fsspec, obstore, Icechunk, its own memory store, wrappers around
them) are asyncio objects. The engine's C++ store for them (python/src/python_store.cpp)
calls the plain methods of :class:`ZarrStoreBridge` from its worker threads, holding the
GIL only to make the call; each method runs the store's coroutines on zarr-python's own
event loop (``zarr.core.sync``, the loop zarr-python's synchronous API uses, so that stores
whose sessions belong to that loop, such as fsspec's HTTP and S3 file systems, keep working)
and waits for them without the GIL. A batch of keys the engine reads together is one
``asyncio.gather`` of the store's ``get``: all of them in flight at once, the values handed
over as they arrive (:class:`Arrivals`) so that the engine decodes the first while the others
are on the way; so are the byte ranges the engine reads of one value (the inner chunks of a
shard), all at once.

The values come back as objects with the buffer protocol (NumPy arrays viewing the store's
bytes); the engine copies them into its own buffers without the GIL.
"""

from __future__ import annotations

import asyncio
import queue
from collections.abc import Awaitable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")

# The range kinds of the engine's ByteRange (include/zarrkit/store.h), as the C++ side sends them.
_WHOLE, _RANGE, _FROM_OFFSET, _SUFFIX = 0, 1, 2, 3


def is_zarr_store(store: object) -> bool:
    """True for an instance of ``zarr.abc.store.Store`` (without importing zarr when the
    caller's object cannot be one)."""
    if not any(cls.__module__.startswith("zarr.") for cls in type(store).__mro__):
        return False
    from zarr.abc.store import Store

    return isinstance(store, Store)


class ZarrStoreBridge:
    """Synchronous access to a zarr-python store for the engine (see the module's text)."""

    def __init__(self, store: Any) -> None:
        from zarr.abc.store import OffsetByteRequest, RangeByteRequest, SuffixByteRequest
        from zarr.core.buffer.cpu import buffer_prototype

        self.store = store
        self._prototype = buffer_prototype  # host memory, whatever zarr.config says
        self._range_types = (RangeByteRequest, OffsetByteRequest, SuffixByteRequest)
        self._run(self._ensure_open())

    # ---- What the engine asks when it wraps the store ----

    @property
    def description(self) -> str:
        """How error messages name the store."""
        text = str(self.store)
        if text == object.__repr__(self.store):  # no text of its own: its class says more
            text = type(self.store).__name__
        return f"zarr-python store {text}"

    @property
    def writable(self) -> bool:
        return not self.store.read_only and bool(self.store.supports_writes)

    @property
    def listable(self) -> bool:
        return bool(self.store.supports_listing)

    # ---- Reads ----

    def get_many(self, keys: Sequence[str]) -> list[Any]:
        """The values of ``keys`` (None where absent), requested all at once."""
        return self._run(self._get_many(keys))

    def fetch_each(self, keys: Sequence[str]) -> Arrivals:
        """Requests the values of ``keys`` all at once and returns at once: the values are
        taken from the result as they arrive."""
        return Arrivals(self, keys)

    def get_ranges(self, key: str, ranges: Sequence[tuple[int, int, int]]) -> list[Any] | None:
        """The byte ranges ``(kind, a, b)`` of the value of ``key``, requested all at once, or
        None when it is absent. Kinds: 0 the whole value, 1 bytes
        [a, b), 2 from byte a on, 3 the last a bytes."""
        return self._run(self._get_ranges(key, ranges))

    def exists(self, key: str) -> bool:
        return self._run(self._exists(key))

    def size(self, key: str) -> int | None:
        """The value's size in bytes, or None when it is absent."""
        return self._run(self._size(key))

    def list(self, prefix: str) -> list[str]:
        """Every key below the directory ``prefix`` ("" for all)."""
        return self._run(self._list(prefix))

    # ---- Writes ----

    def set(self, key: str, value: bytes) -> None:
        self._run(self.store.set(key, self._prototype.buffer.from_bytes(value)))

    def delete(self, key: str) -> None:
        self._require_deletes()
        self._run(self._delete(key))

    def delete_dir(self, prefix: str) -> None:
        self._require_deletes()
        self._run(self.store.delete_dir(prefix))

    # ---- Coroutines ----

    async def _ensure_open(self) -> None:
        # zarr-python opens a store on first use (its own memory and zip stores need it).
        if not getattr(self.store, "_is_open", True):
            await self.store._open()

    async def _get_many(self, keys: Sequence[str]) -> list[Any]:
        return list(await asyncio.gather(*(self._get_value(key) for key in keys)))

    async def _get_ranges(self, key: str, ranges: Sequence[tuple[int, int, int]]) -> list[Any] | None:
        requests = [self._request(kind, a, b) for kind, a, b in ranges]
        # An empty range reads nothing (stores differ on whether they accept one): it only
        # needs the value to exist.
        wanted = [i for i, request in enumerate(requests) if request is not False]
        if len(wanted) < len(requests) and not await self._exists(key):
            return None
        # One get per range, all in flight together: the engine has merged nearby ranges
        # already, and every store's get says "absent" the same way (None), which their
        # get_partial_values do not.
        values = await asyncio.gather(*(self.store.get(key, self._prototype, requests[i]) for i in wanted))
        if any(value is None for value in values):
            return None
        out: list[Any] = [b""] * len(requests)
        for i, value in zip(wanted, values):
            out[i] = value.as_numpy_array()
        return out

    def _request(self, kind: int, a: int, b: int) -> Any:
        range_request, offset_request, suffix_request = self._range_types
        if kind == _WHOLE:
            return None
        if kind == _RANGE:
            return range_request(a, b) if b > a else False
        if kind == _FROM_OFFSET:
            return offset_request(a)
        if kind == _SUFFIX:
            return suffix_request(a) if a > 0 else False
        raise ValueError(f"unknown byte range kind {kind}")

    async def _exists(self, key: str) -> bool:
        try:
            return bool(await self.store.exists(key))
        except (FileNotFoundError, KeyError):  # Icechunk: a v2 metadata key it cannot hold
            return False

    async def _size(self, key: str) -> int | None:
        try:
            return int(await self.store.getsize(key))
        except (FileNotFoundError, KeyError):
            return None

    async def _list(self, prefix: str) -> list[str]:
        prefix = prefix.strip("/")
        try:
            if prefix:
                return [key async for key in self.store.list_prefix(prefix + "/")]
            return [key async for key in self.store.list()]
        except FileNotFoundError:  # fsspec: the directory does not exist
            return []

    async def _delete(self, key: str) -> None:
        try:
            await self.store.delete(key)
        except (FileNotFoundError, KeyError):
            pass  # deleting an absent key is no error, as in zarr-python's own stores

    def _require_deletes(self) -> None:
        if not self.store.supports_deletes:
            raise NotImplementedError(f"{self.description} does not support deletes")

    async def _get_value(self, key: str) -> Any:
        value = await self.store.get(key, self._prototype)
        return None if value is None else value.as_numpy_array()

    def _run(self, coroutine: Awaitable[T]) -> T:
        import zarr
        from zarr.core.sync import sync

        return sync(coroutine, timeout=zarr.config.get("async.timeout"))  # type: ignore[arg-type]


class Arrivals:
    """The values of a batch of keys, handed over as their gets complete (the engine's
    get_each). The gets run on zarr-python's event loop, all of them at once; :meth:`next`
    waits for the next values without the GIL."""

    def __init__(self, bridge: ZarrStoreBridge, keys: Sequence[str]) -> None:
        from zarr.core.sync import _get_loop

        loop = _get_loop()  # the loop zarr.core.sync.sync runs coroutines on
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:  # as zarr.core.sync.sync refuses it: waiting there would never end
            raise RuntimeError("cannot read through a zarr-python store from inside zarr-python's event loop")
        self._arrived: queue.SimpleQueue[tuple[int, Any]] = queue.SimpleQueue()
        self._left = len(keys)
        self._future = asyncio.run_coroutine_threadsafe(self._fetch_all(bridge, keys), loop)

    async def _fetch_all(self, bridge: ZarrStoreBridge, keys: Sequence[str]) -> None:
        await asyncio.gather(*(self._fetch(bridge, i, key) for i, key in enumerate(keys)))

    async def _fetch(self, bridge: ZarrStoreBridge, index: int, key: str) -> None:
        try:
            self._arrived.put((index, await bridge._get_value(key)))
        except Exception as e:  # handed over in the value's place: the engine names the key
            self._arrived.put((index, e))

    def next(self) -> list[tuple[int, Any]]:
        """(index, value) of the values that have arrived since the last call, at least one
        (waiting for it), or [] once every value was handed over. A value is None where the
        key is absent, the exception where its get failed."""
        if self._left == 0:
            return []
        import zarr

        timeout = zarr.config.get("async.timeout")
        try:
            items = [self._arrived.get(timeout=timeout)]
        except queue.Empty:
            raise TimeoutError(f"no value arrived within {timeout} s (zarr.config's async.timeout)") from None
        while True:
            try:
                items.append(self._arrived.get_nowait())
            except queue.Empty:
                break
        self._left -= len(items)
        return items

    def cancel(self) -> None:
        """Cancels the gets still on the way (the engine stopped reading)."""
        self._future.cancel()
