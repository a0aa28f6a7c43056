"""NumPy dtypes <-> the engine's data types."""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from zarrkit.errors import InvalidArgumentError, UnsupportedError


# The types NumPy gets from ml_dtypes, by their Zarr v3 names (which are ml_dtypes' names):
# bfloat16 and the zarr-extensions float8/float6/float4 and 2/4-bit integer types.
ML_DTYPE_NAMES = frozenset(
    {
        "bfloat16",
        "float8_e3m4",
        "float8_e4m3",
        "float8_e4m3fn",
        "float8_e4m3fnuz",
        "float8_e4m3b11fnuz",
        "float8_e5m2",
        "float8_e5m2fnuz",
        "float8_e8m0fnu",
        "float6_e2m3fn",
        "float6_e3m2fn",
        "float4_e2m1fn",
        "int2",
        "int4",
        "uint2",
        "uint4",
    }
)


def _ml_dtype(name: str) -> np.dtype:
    try:
        import ml_dtypes
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise UnsupportedError(f"{name} arrays need the ml_dtypes package (pip install ml_dtypes)") from e
    try:
        return np.dtype(getattr(ml_dtypes, name))
    except AttributeError:  # pragma: no cover - an ml_dtypes older than the type
        raise UnsupportedError(
            f"{name} arrays need an ml_dtypes release that has the type (this one is {ml_dtypes.__version__})"
        ) from None


def numpy_dtype(descr_json: str) -> np.dtype:
    """The NumPy dtype for the engine's descriptor (native byte order)."""
    descr = json.loads(descr_json)
    if isinstance(descr, str) and descr in ML_DTYPE_NAMES:
        return _ml_dtype(descr)
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
    if descr in ML_DTYPE_NAMES:
        return _ml_dtype(descr)
    return descr


def dtype_spec(dtype: Any) -> tuple[dict[str, Any], np.dtype]:
    """The engine's form of a user's dtype, and the NumPy dtype arrays will have."""
    if dtype is str or (isinstance(dtype, str) and dtype in ("str", "string")):
        return {"v3": "string"}, np.dtypes.StringDType()
    # By name first: NumPy reads "int4" as its 4-byte integer.
    if isinstance(dtype, str) and dtype in ML_DTYPE_NAMES:
        return {"v3": dtype}, _ml_dtype(dtype)
    try:
        dt = np.dtype(dtype)
    except TypeError as e:
        raise InvalidArgumentError(f"not a NumPy data type: {dtype!r} ({e})") from None
    if not dt.fields and dt.name in ML_DTYPE_NAMES:
        return {"v3": dt.name}, dt
    if dt.fields:
        return {"v2": _fields_list(dt)}, dt
    if dt.kind == "O":
        raise UnsupportedError("object arrays are not supported; use a fixed-size dtype")
    if dt.kind == "T":
        return {"v3": "string"}, dt
    return {"v2": dt.str}, dt


def _fields_list(dt: np.dtype) -> list[list[Any]]:
    """A structured dtype in the v2 list form; the ml_dtypes types of fields by name (their
    descr is only raw bytes, |V1), as tensorstore writes them."""
    out: list[list[Any]] = []
    offset = 0
    for name in dt.names:
        field, field_offset = dt.fields[name][:2]
        if field_offset != offset:
            raise UnsupportedError("structured dtypes with padding (aligned=True) are not supported")
        shape = list(field.shape) if field.subdtype is not None else None
        base = field.base if field.subdtype is not None else field
        if base.fields:
            typ: Any = _fields_list(base)
        elif base.name in ML_DTYPE_NAMES:
            typ = base.name
        else:
            typ = base.str
        out.append([name, typ] + ([shape] if shape is not None else []))
        offset += field.itemsize
    if offset != dt.itemsize:
        raise UnsupportedError("structured dtypes with padding (aligned=True) are not supported")
    return out
