"""NumPy dtypes <-> the engine's data types."""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from zarrkit.errors import InvalidArgumentError, UnsupportedError


def _bfloat16() -> np.dtype:
    try:
        import ml_dtypes
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise UnsupportedError(
            "bfloat16 arrays need the ml_dtypes package (pip install ml_dtypes)"
        ) from e
    return np.dtype(ml_dtypes.bfloat16)


def numpy_dtype(descr_json: str) -> np.dtype:
    """The NumPy dtype for the engine's descriptor (native byte order)."""
    descr = json.loads(descr_json)
    if descr == "bfloat16":
        return _bfloat16()
    if descr == "string":
        return np.dtypes.StringDType()
    if descr == "bytes":
        return np.dtype(object)
    if isinstance(descr, list):
        descr = [tuple(field[:2]) + ((tuple(field[2]),) if len(field) > 2 else ()) for field in descr]
        descr = [(f[0], _nested(f[1])) + f[2:] for f in descr]
    return np.dtype(descr).newbyteorder("=")


def _nested(descr: Any) -> Any:
    if isinstance(descr, list):
        return [(f[0], _nested(f[1])) + ((tuple(f[2]),) if len(f) > 2 else ()) for f in descr]
    return descr


def dtype_spec(dtype: Any) -> tuple[dict[str, Any], np.dtype]:
    """The engine's form of a user's dtype, and the NumPy dtype arrays will have."""
    if dtype is str or (isinstance(dtype, str) and dtype in ("str", "string")):
        return {"v3": "string"}, np.dtypes.StringDType()
    if isinstance(dtype, str) and dtype == "bfloat16":
        return {"v3": "bfloat16"}, _bfloat16()
    try:
        dt = np.dtype(dtype)
    except TypeError as e:
        raise InvalidArgumentError(f"not a NumPy data type: {dtype!r} ({e})") from None
    if dt.name == "bfloat16":
        return {"v3": "bfloat16"}, dt
    if dt.fields:
        return {"v2": _descr_list(dt.descr)}, dt
    if dt.kind == "O":
        raise UnsupportedError("object arrays are not supported; use a fixed-size dtype")
    if dt.kind == "T":
        return {"v3": "string"}, dt
    return {"v2": dt.str}, dt


def _descr_list(descr: list[tuple[Any, ...]]) -> list[list[Any]]:
    out = []
    for field in descr:
        name, typ = field[0], field[1]
        if name == "":
            raise UnsupportedError("structured dtypes with padding (aligned=True) are not supported")
        entry: list[Any] = [name, _descr_list(typ) if isinstance(typ, list) else typ]
        if len(field) > 2:
            entry.append(list(field[2]))
        out.append(entry)
    return out
