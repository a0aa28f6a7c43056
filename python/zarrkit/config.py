"""Runtime settings of zarrkit: process-wide, or for a ``with`` block.

Settings
--------
num_threads : int
    Worker threads that fetch, decode and encode chunks; 0 (the default) means one per
    hardware thread.
write_empty_chunks : bool
    Store chunks that hold only the fill value (default False: such chunks are not
    written, and an existing one is removed, as zarr-python does).
memory : str
    Where reads land: ``"host"`` (NumPy, the default), ``"pinned"`` or ``"device"``
    (GPU memory; see :func:`enable_gpu`).

Examples
--------
>>> import zarrkit
>>> zarrkit.config.set(num_threads=4)            # from now on
>>> with zarrkit.config.set(num_threads=1):     # only inside the block
...     pass
>>> zarrkit.config.get("num_threads")
4

Changes apply to the whole process (like ``zarr.config.set``), and each read or write
uses the settings in force when it starts.
"""

from __future__ import annotations

import threading
from typing import Any

from zarrkit import _zarrkit

__all__ = ["as_dict", "enable_gpu", "get", "gpu_available", "reset", "set"]

_DEFAULTS: dict[str, Any] = {"num_threads": 0, "write_empty_chunks": False, "memory": "host"}
_lock = threading.Lock()


def _apply(settings: dict[str, Any]) -> None:
    _zarrkit.set_settings(
        num_threads=settings["num_threads"],
        write_empty_chunks=settings["write_empty_chunks"],
        memory=settings["memory"],
    )


def _check(name: str, value: Any) -> Any:
    if name not in _DEFAULTS:
        raise KeyError(f"unknown zarrkit setting {name!r}; known: {', '.join(sorted(_DEFAULTS))}")
    if name == "num_threads":
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"num_threads must be an integer >= 0 (0: one per hardware thread), got {value!r}")
    elif name == "write_empty_chunks":
        if not isinstance(value, bool):
            raise ValueError(f"write_empty_chunks must be True or False, got {value!r}")
    elif name == "memory":
        if value not in ("host", "pinned", "device"):
            raise ValueError(f"memory must be 'host', 'pinned' or 'device', got {value!r}")
    return value


def as_dict() -> dict[str, Any]:
    """All settings now in force."""
    return dict(_zarrkit.get_settings())


def get(name: str) -> Any:
    """The value of one setting."""
    settings = as_dict()
    if name not in settings:
        raise KeyError(f"unknown zarrkit setting {name!r}; known: {', '.join(sorted(settings))}")
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
            _apply(self._previous)

    def __repr__(self) -> str:
        return f"<zarrkit.config.set: previous settings {self._previous}>"


def set(**settings: Any) -> _Restore:  # noqa: A001 - mirrors zarr.config.set
    """Changes settings now; as a context manager, restores the previous ones on exit.

    Raises ``KeyError`` for an unknown name and ``ValueError`` for a bad value, before
    changing anything. ``memory="device"`` raises :class:`zarrkit.errors.UnsupportedError`
    when the build or the machine has no GPU.
    """
    with _lock:
        previous = as_dict()
        updated = dict(previous)
        for name, value in settings.items():
            updated[name] = _check(name, value)
        _apply(updated)
    return _Restore(previous)


def reset() -> None:
    """Restores every default."""
    with _lock:
        _apply(dict(_DEFAULTS))


def gpu_available() -> bool:
    """True when this build of zarrkit and this machine can put arrays in GPU memory."""
    return bool(_zarrkit.memory_available("device"))


def enable_gpu() -> _Restore:
    """Selects GPU (device) memory for reads, like ``zarr.config.enable_gpu()``.

    Raises :class:`zarrkit.errors.UnsupportedError` with the reason when this build has no
    CUDA support or the machine has no usable GPU. Usable as a context manager.
    """
    return set(memory="device")


def __getattr__(name: str) -> Any:
    # zarrkit.config.num_threads and friends read the current value.
    if name in _DEFAULTS:
        return get(name)
    raise AttributeError(f"module 'zarrkit.config' has no attribute {name!r}")
