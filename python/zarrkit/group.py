"""zarrkit.Group: a Zarr group (v2 or v3) and its members."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from zarrkit import _zarrkit
from zarrkit.attributes import Attributes, _dumps
from zarrkit.errors import ReadOnlyError
from zarrkit.storage import Store

if TYPE_CHECKING:
    from zarrkit.array import Array

__all__ = ["Group", "TreeRepr"]


def _join(a: str, b: str) -> str:
    return "/".join(p for p in (a, b.strip("/")) if p)


class TreeRepr:
    """The text tree :meth:`Group.tree` returns (its ``repr`` prints the tree)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text

    __str__ = __repr__


class Group:
    """A Zarr group: a node that holds arrays and other groups, and attributes.

    Open or create groups with :func:`zarrkit.open_group`, :func:`zarrkit.create_group`
    or :func:`zarrkit.open`. ``group["a/b"]`` opens a member (KeyError when absent);
    ``for name in group`` lists the direct members' names.
    """

    __slots__ = ("_impl", "_read_only", "_store")

    def __init__(self, impl: Any, store: Store, *, read_only: bool = False) -> None:
        self._impl = impl
        self._store = store
        self._read_only = read_only or store.read_only

    # ---- Description ----------------------------------------------------------------------

    @property
    def store(self) -> Store:
        """The store holding the group."""
        return self._store

    @property
    def path(self) -> str:
        """The group's path inside the store ("" for the root)."""
        return str(self._impl.path)

    @property
    def name(self) -> str:
        """The path with a leading "/"."""
        return "/" + self.path

    @property
    def basename(self) -> str:
        """The last segment of the path ("" for the root)."""
        return self.path.rsplit("/", 1)[-1]

    @property
    def zarr_format(self) -> int:
        """2 or 3."""
        return int(self._impl.zarr_format)

    @property
    def read_only(self) -> bool:
        """True when writes are refused."""
        return self._read_only

    @property
    def attrs(self) -> Attributes:
        """User attributes: a dict-like view whose changes are written at once."""
        return Attributes(self._impl, self._read_only)

    @property
    def metadata(self) -> dict[str, Any]:
        """The group's metadata (zarr_format, node_type, attributes)."""
        return {
            "zarr_format": self.zarr_format,
            "node_type": "group",
            "attributes": json.loads(self._impl.attributes_json()),
        }

    @property
    def info(self) -> str:
        """A short summary."""
        return "\n".join(
            [
                f"Name        : {self.name}",
                "Type        : Group",
                f"Zarr format : {self.zarr_format}",
                f"Read-only   : {self.read_only}",
                f"Store type  : {type(self._store).__name__}",
                f"No. members : {len(self._impl.members())}",
            ]
        )

    def __repr__(self) -> str:
        return f"<zarrkit.Group {self._store.describe()}{self.name}>"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Group) and self._store == other._store and self.path == other.path

    def __hash__(self) -> int:
        return hash((self._store.describe(), self.path))

    def __reduce__(self) -> tuple[Any, ...]:
        return (_reopen_group, (self._store, self.path, self._read_only))

    # ---- Members ----------------------------------------------------------------------------

    def _node(self, path: str, kind: str) -> Array | Group:
        if kind == "array":
            from zarrkit.array import Array

            return Array(_zarrkit.open_array(self._store._handle, path), self._store, read_only=self._read_only)
        return Group(_zarrkit.open_group(self._store._handle, path), self._store, read_only=self._read_only)

    def members(self, max_depth: int | None = 0) -> tuple[tuple[str, Array | Group], ...]:
        """(name, node) pairs of the members, sorted by name.

        ``max_depth=0`` lists the direct members; ``None`` every node below, named by its
        path relative to this group; ``n`` goes ``n`` levels deeper than the direct ones.
        """
        if max_depth is not None and max_depth < 0:
            raise ValueError(f"max_depth must be None or >= 0, got {max_depth}")
        nodes = self._impl.members() if max_depth == 0 else self._impl.walk()
        prefix = self.path + "/" if self.path else ""
        out = []
        for _name, path, kind, _fmt in nodes:
            relative = path[len(prefix) :]
            if max_depth is not None and relative.count("/") > max_depth:
                continue
            out.append((relative, self._node(path, kind)))
        return tuple(out)

    def keys(self) -> list[str]:
        """Names of the direct members."""
        return [name for name, _path, _kind, _fmt in self._impl.members()]

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def __len__(self) -> int:
        return len(self._impl.members())

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        return _zarrkit.probe_node(self._store._handle, _join(self.path, name)) is not None

    def array_keys(self) -> list[str]:
        """Names of the direct members that are arrays."""
        return [name for name, _p, kind, _f in self._impl.members() if kind == "array"]

    def group_keys(self) -> list[str]:
        """Names of the direct members that are groups."""
        return [name for name, _p, kind, _f in self._impl.members() if kind == "group"]

    def arrays(self) -> list[tuple[str, Array]]:
        """(name, Array) for the direct members that are arrays."""
        return [(n, node) for n, node in self.members() if node.__class__.__name__ == "Array"]  # type: ignore[misc]

    def groups(self) -> list[tuple[str, Group]]:
        """(name, Group) for the direct members that are groups."""
        return [(n, node) for n, node in self.members() if isinstance(node, Group)]

    def __getitem__(self, name: str) -> Array | Group:
        path = _join(self.path, name)
        found = _zarrkit.probe_node(self._store._handle, path)
        if found is None:
            raise KeyError(name)
        return self._node(path, found[0])

    def get(self, name: str, default: Any = None) -> Any:
        """The member ``name``, or ``default`` when there is none."""
        try:
            return self[name]
        except KeyError:
            return default

    def tree(self, level: int | None = None) -> TreeRepr:
        """The hierarchy below this group as text (arrays with shape and dtype)."""
        lines = [self.name if self.path else "/"]
        prefix = self.path + "/" if self.path else ""
        for _name, path, kind, _fmt in self._impl.walk():
            relative = path[len(prefix) :]
            depth = relative.count("/")
            if level is not None and depth >= level:
                continue
            label = relative.rsplit("/", 1)[-1]
            if kind == "array":
                a = self._node(path, kind)
                label += f" {a.shape} {a.dtype}"
            lines.append("  " * (depth + 1) + label)
        return TreeRepr("\n".join(lines))

    # ---- Creating members -------------------------------------------------------------------

    def _check_writable(self) -> None:
        if self._read_only:
            raise ReadOnlyError(f"cannot create members in {self!r}: it was opened read-only")

    def create_group(self, name: str, *, overwrite: bool = False, attributes: dict[str, Any] | None = None) -> Group:
        """Creates the group ``name`` (and missing groups on its path) below this one."""
        self._check_writable()
        impl = _zarrkit.create_group(
            self._store._handle, _join(self.path, name), self.zarr_format, _dumps(attributes or {}), overwrite
        )
        return Group(impl, self._store)

    def require_group(self, name: str, *, overwrite: bool = False) -> Group:
        """The group ``name``, created when missing."""
        found = _zarrkit.probe_node(self._store._handle, _join(self.path, name))
        if found is not None and found[0] == "group" and not overwrite:
            return self._node(_join(self.path, name), "group")  # type: ignore[return-value]
        return self.create_group(name, overwrite=overwrite)

    def create_array(self, name: str, **kwargs: Any) -> Array:
        """Creates the array ``name`` below this group; takes the keyword arguments of
        :func:`zarrkit.create_array` (``zarr_format`` defaults to the group's)."""
        self._check_writable()
        from zarrkit.api import create_array

        kwargs.setdefault("zarr_format", self.zarr_format)
        return create_array(self._store, name=_join(self.path, name), **kwargs)

    def require_array(self, name: str, **kwargs: Any) -> Array:
        """The array ``name``, created with ``kwargs`` when missing."""
        found = _zarrkit.probe_node(self._store._handle, _join(self.path, name))
        if found is not None and found[0] == "array":
            return self._node(_join(self.path, name), "array")  # type: ignore[return-value]
        return self.create_array(name, **kwargs)

    def __delitem__(self, name: str) -> None:
        self._check_writable()
        path = _join(self.path, name)
        if _zarrkit.probe_node(self._store._handle, path) is None:
            raise KeyError(name)
        self._store.delete_dir(path)


def _reopen_group(store: Store, path: str, read_only: bool) -> Group:
    from zarrkit import api

    return api.open_group(store, path=path, mode="r" if read_only else "r+")
