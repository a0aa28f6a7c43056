"""Codec arguments of create_array (filters=, serializer=, compressors=) in metadata form.

A codec may be given as a zarr-python codec object (``zarr.codecs.ZstdCodec()``), a
numcodecs object (``numcodecs.Blosc()``), a v3 dict (``{"name": "zstd",
"configuration": {"level": 3}}``), a numcodecs dict (``{"id": "zlib", "level": 1}``) or
a bare v3 name (``"zstd"``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from zarrkit import _zarrkit
from zarrkit.errors import InvalidArgumentError

# Array->bytes codecs: they split a v3 chain into filters, serializer and compressors.
ARRAY_TO_BYTES = {"bytes", "sharding_indexed", "vlen-utf8", "vlen-bytes", "numcodecs.zfpy", "numcodecs.pcodec"}


def _drop_none(config: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in config.items() if v is not None}


def as_json(codec: Any) -> dict[str, Any]:
    """A codec in either metadata form: {"name", "configuration"} or {"id", ...}."""
    if isinstance(codec, str):
        return {"name": codec}
    if isinstance(codec, Mapping):
        return dict(codec)
    if hasattr(codec, "to_dict") and not hasattr(codec, "get_config"):
        d = dict(codec.to_dict())
        if "configuration" in d:
            d["configuration"] = _drop_none(d["configuration"])
        return d
    if hasattr(codec, "get_config"):
        return dict(codec.get_config())
    raise InvalidArgumentError(f"not a codec: {codec!r}")


def v3_entry(codec: Any) -> dict[str, Any]:
    """The v3 form; numcodecs objects become their ``numcodecs.<id>`` codecs."""
    d = as_json(codec)
    if "id" in d:
        config = {k: v for k, v in d.items() if k != "id"}
        return {"name": f"numcodecs.{d['id']}", "configuration": config}
    if "name" not in d:
        raise InvalidArgumentError(f"codec {d!r} has neither 'name' (v3) nor 'id' (numcodecs)")
    return d


def v2_entry(codec: Any, dtype_spec: Mapping[str, Any]) -> dict[str, Any]:
    """The numcodecs form, for Zarr v2 metadata."""
    d = as_json(codec)
    if "id" in d:
        return d
    name = str(d.get("name", ""))
    if name.startswith("numcodecs."):
        return {"id": name.removeprefix("numcodecs."), **d.get("configuration", {})}
    return json.loads(_zarrkit.codec_v2_form(json.dumps(d), json.dumps(dtype_spec)))


def as_list(value: Any) -> list[Any]:
    """None -> [], one codec -> [codec], an iterable of codecs -> list."""
    if value is None:
        return []
    if isinstance(value, (str, Mapping)) or not isinstance(value, Iterable):
        return [value]
    return list(value)


def split_v3_chain(codecs: list[dict[str, Any]]) -> tuple[list[Any], Any, list[Any]]:
    """(filters, serializer, compressors) of a v3 "codecs" list."""
    for i, c in enumerate(codecs):
        name = c if isinstance(c, str) else c.get("name")
        if name in ARRAY_TO_BYTES:
            return codecs[:i], codecs[i], codecs[i + 1 :]
    return [], None, list(codecs)
