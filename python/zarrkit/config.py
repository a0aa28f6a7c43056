"""Runtime settings of zarrkit: process-wide, or for a ``with`` block.

Settings
--------
Every setting of the engine, the remote stores and the GPU path (docs/settings.md lists
each with its C++ field and environment variable). The most used:

num_threads : int
    Worker threads that fetch, decode and encode chunks; 0 (the default) means one per
    hardware thread.
write_empty_chunks : bool
    Store chunks that hold only the fill value (default False: such chunks are not
    written, and an existing one is removed, as zarr-python does).
durable_writes : bool
    Local stores and zip archives opened while it is on sync each written file, then its
    directory, before the write counts as done, so that it survives a power loss (default
    False; ``ZARRKIT_DURABLE_WRITES``).
memory : str
    Where reads land: ``"host"`` (NumPy, the default), ``"pinned"`` or ``"device"``
    (GPU memory; see :func:`enable_gpu`).
remote.* : the HTTP and S3 stores
    ``remote.concurrency`` (requests in flight, 64), ``remote.max_attempts`` (8),
    ``remote.connect_timeout_ms``, ``remote.stall_timeout_ms``, ``remote.verify_tls``,
    ``remote.ca_bundle``, ``remote.coalesce_gap_bytes``, ... A store keeps the settings
    in force when it is opened.
gpu.* : reads into and writes from GPU memory
    ``gpu.batch_budget_bytes`` (256 MiB), ``gpu.pipeline_depth`` (4),
    ``gpu.nvcomp_decode`` (False), ``gpu.nvcomp_min_chunks`` (512), ``gpu.zstd_kernels``
    and ``gpu.deflate_kernels`` (``"auto"``: zarrkit's own GPU kernels where they beat the
    host's threads; ``"on"``/True, ``"off"``/False), ``gpu.gds_direct``,
    ``gpu.gds_mode`` (``"auto"``, ``"cufile"``, ``"compat"``), ...
cache.* : the decoded-chunk cache (off by default; docs/chunk-cache.md)
    ``cache.host_bytes``: decoded chunks the process keeps for later reads, one budget for
    every array (0: none); ``cache.array_bytes``: where not 0, arrays opened while it is set
    keep a cache of their own of that size; ``cache.device_bytes``: the same for reads into
    GPU memory, per GPU. :func:`cache_stats` and :func:`clear_cache` report and empty them.

The defaults are zarrkit's, with the ``ZARRKIT_*`` environment variables applied (read
once, when zarrkit first needs its settings); :func:`reset` restores them.

Examples
--------
>>> import zarrkit
>>> zarrkit.config.set(num_threads=4)            # from now on
>>> with zarrkit.config.set({"remote.concurrency": 16, "gpu.nvcomp_decode": True}):
...     pass                                    # only inside the block
>>> zarrkit.config.get("num_threads")
4

Like ``zarr.config.set``, :func:`set` takes a dict (dotted keys, or nested dicts such as
``{"gpu": {"pipeline_depth": 2}}``) and keyword arguments for the names without a dot.
Changes apply to the whole process, and each read or write uses the settings in force when
it starts.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from zarrkit import _zarrkit

__all__ = ["as_dict", "cache_stats", "clear_cache", "defaults", "enable_gpu", "get", "gpu_available", "reset", "set",
           "warm_up_gpu"]

_lock = threading.Lock()
_INT_MAX = 2**63 - 1

# Integer settings whose range is narrower than 0 .. 2**63-1: (least, most).
_RANGES: dict[str, tuple[int, int]] = {
    "num_threads": (0, 4096),  # kMaxNumThreads (src/core/settings_env.h)
    "remote.concurrency": (1, _INT_MAX),
    "remote.event_loops": (0, 64),
    "remote.max_attempts": (1, 100),
    "remote.coalesce_max_bytes": (1, _INT_MAX),
    "remote.s3_part_size_bytes": (1, _INT_MAX),
    "gpu.batch_budget_bytes": (1, _INT_MAX),
    "gpu.pipeline_depth": (1, 8),
    "gpu.devices_sharing_host": (1, 1024),
    "gpu.nvcomp_min_chunks": (1, _INT_MAX),
    "gpu.gds_threads": (1, 256),
    "gpu.gds_piece_bytes": (1, 1 << 30),
    "shard_read_window_bytes": (1, _INT_MAX),
    "max_chunk_bytes": (1, _INT_MAX),
    "max_request_bytes": (1, _INT_MAX),
}
# String settings with a fixed set of values.
_CHOICES: dict[str, tuple[str, ...]] = {
    "memory": ("host", "pinned", "device"),
    "gpu.gds_mode": ("auto", "cufile", "compat"),
}
# Settings that take "auto", "on" or "off", or True ("on") and False ("off").
_KERNEL_USES = ("gpu.zstd_kernels", "gpu.deflate_kernels")


def defaults() -> dict[str, Any]:
    """The defaults: zarrkit's, with the ``ZARRKIT_*`` environment variables applied."""
    return dict(_zarrkit.default_settings())


def _unknown(name: str) -> KeyError:
    return KeyError(f"unknown zarrkit setting {name!r}; known: {', '.join(sorted(defaults()))}")


def _check(name: str, value: Any) -> Any:
    known = defaults()
    if name not in known:
        raise _unknown(name)
    default = known[name]
    if name in _KERNEL_USES:
        if not isinstance(value, bool) and value not in ("auto", "on", "off"):
            raise ValueError(f"{name} must be 'auto', 'on', 'off', True or False, got {value!r}")
    elif isinstance(default, bool):
        if not isinstance(value, bool):
            raise ValueError(f"{name} must be True or False, got {value!r}")
    elif isinstance(default, int):
        least, most = _RANGES.get(name, (0, _INT_MAX))
        if isinstance(value, bool) or not isinstance(value, int) or not least <= value <= most:
            meaning = " (0: one per hardware thread)" if name == "num_threads" else ""
            raise ValueError(f"{name} must be an integer from {least} to {most}{meaning}, got {value!r}")
    elif name in _CHOICES:
        if value not in _CHOICES[name]:
            options = ", ".join(repr(c) for c in _CHOICES[name][:-1]) + f" or {_CHOICES[name][-1]!r}"
            raise ValueError(f"{name} must be {options}, got {value!r}")
    elif not isinstance(value, str):
        raise ValueError(f"{name} must be a string, got {value!r}")
    return value


def _flatten(settings: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in settings.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            flat.update(_flatten(value, name + "."))
        else:
            flat[name] = value
    return flat


def as_dict() -> dict[str, Any]:
    """All settings now in force, by their dotted names."""
    return dict(_zarrkit.get_settings())


def get(name: str) -> Any:
    """The value of one setting (``"num_threads"``, ``"remote.concurrency"``, ...)."""
    settings = as_dict()
    if name not in settings:
        raise _unknown(name)
    return settings[name]


class _Restore:
    """What :func:`set` returns: the settings already apply; leaving a ``with`` block
    restores the ones before."""

    def __init__(self, previous: dict[str, Any]) -> None:
        self._previous = previous

    def __enter__(self) -> _Restore:
        return self

    def __exit__(self, *exc: object) -> None:
        with _lock:
            _zarrkit.set_settings(self._previous)

    def __repr__(self) -> str:
        return f"<zarrkit.config.set: previous settings {self._previous}>"


# Named like zarr.config.set (it shadows the builtin inside this module only).
def set(settings: Mapping[str, Any] | None = None, /, **kwargs: Any) -> _Restore:  # noqa: A001
    """Changes settings now; as a context manager, restores the previous ones on exit.

    ``settings`` maps dotted names (``"gpu.nvcomp_decode"``) or groups
    (``{"gpu": {"nvcomp_decode": True}}``) to values; keyword arguments name settings
    without a dot (``num_threads=4``). Raises ``KeyError`` for an unknown name and
    ``ValueError`` for a bad value, before changing anything. ``memory="device"`` raises
    :class:`zarrkit.errors.UnsupportedError` when the build or the machine has no GPU.
    """
    changes = _flatten(settings or {})
    changes.update(kwargs)
    checked = {name: _check(name, value) for name, value in changes.items()}
    with _lock:
        previous = as_dict()
        _zarrkit.set_settings(checked)
    return _Restore(previous)


def reset() -> None:
    """Restores every default (see :func:`defaults`)."""
    with _lock:
        _zarrkit.set_settings(defaults())


def gpu_available() -> bool:
    """True when this build of zarrkit and this machine can put arrays in GPU memory."""
    return bool(_zarrkit.memory_available("device"))


def enable_gpu() -> _Restore:
    """Selects GPU (device) memory for reads, like ``zarr.config.enable_gpu()``.

    Raises :class:`zarrkit.errors.UnsupportedError` with the reason when this build has no
    CUDA support or the machine has no usable GPU. Usable as a context manager.
    """
    return set(memory="device")


def warm_up_gpu(array: Any, selection: Any = Ellipsis) -> None:
    """Makes ahead what reading ``selection`` of ``array`` (a :class:`zarrkit.Array`) into
    GPU memory needs (pinned staging, device memory, streams, the kernels), so that the
    first read costs what later ones do. ``UnsupportedError`` without a GPU."""
    array.warm_up_gpu(selection)


def cache_stats(device: int | None = None) -> dict[str, int]:
    """Counters of the process's decoded-chunk cache (``device``: of that GPU's): ``hits``,
    ``misses``, ``insertions``, ``evictions``, ``invalidations`` (chunks dropped because this
    process wrote them), ``dropped`` (values not kept because a write came while they were
    read), and what it holds now: ``entries``, ``bytes``, ``budget``."""
    return dict(_zarrkit.chunk_cache_stats(device))


def clear_cache() -> None:
    """Empties every decoded-chunk cache of the process (the counters stay)."""
    _zarrkit.clear_chunk_caches()


def __getattr__(name: str) -> Any:
    # zarrkit.config.num_threads and friends read the current value.
    if "." not in name and name in as_dict():
        return get(name)
    raise AttributeError(f"module 'zarrkit.config' has no attribute {name!r}")
