"""User attributes of arrays and groups: a dict that writes through to the store."""

from __future__ import annotations

import json
from collections.abc import Iterator, MutableMapping
from typing import Any

from zarrkit.errors import InvalidArgumentError, ReadOnlyError


def _dumps(value: Any) -> str:
    try:
        return json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as e:
        raise InvalidArgumentError(f"attributes must be JSON (no NaN or infinity): {e}") from None


class Attributes(MutableMapping[str, Any]):
    """The attributes of an array or group.

    Reads come from the metadata loaded when the node was opened; every change rewrites
    the metadata document (``zarr.json``, or ``.zattrs`` for Zarr v2) at once. Values
    must be JSON: str, int, float (finite), bool, None, lists and dicts of them.
    """

    def __init__(self, node: Any, read_only: bool) -> None:
        self._node = node
        self._read_only = read_only

    def _current(self) -> dict[str, Any]:
        return json.loads(self._node.attributes_json())

    def _write(self, attributes: dict[str, Any]) -> None:
        if self._read_only:
            raise ReadOnlyError("cannot change attributes: opened read-only")
        self._node.set_attributes(_dumps(attributes))

    def __getitem__(self, key: str) -> Any:
        return self._current()[key]

    def __setitem__(self, key: str, value: Any) -> None:
        attributes = self._current()
        attributes[key] = value
        self._write(attributes)

    def __delitem__(self, key: str) -> None:
        attributes = self._current()
        del attributes[key]
        self._write(attributes)

    def __iter__(self) -> Iterator[str]:
        return iter(self._current())

    def __len__(self) -> int:
        return len(self._current())

    def update(self, *args: Any, **kwargs: Any) -> None:  # type: ignore[override]
        """Adds or replaces several attributes with one write."""
        attributes = self._current()
        attributes.update(*args, **kwargs)
        self._write(attributes)

    def put(self, attributes: dict[str, Any]) -> None:
        """Replaces all attributes with ``attributes`` (one write)."""
        self._write(dict(attributes))

    def asdict(self) -> dict[str, Any]:
        """A copy as a plain dict."""
        return self._current()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Attributes):
            return self._current() == other._current()
        return self._current() == other

    def __repr__(self) -> str:
        return repr(self._current())
