"""Selections, resize and append against NumPy and zarr-python.

- `zarrkit export --select` on arrays that zarr-python wrote (v2, v3, sharded) gives what
  NumPy indexing gives on the same values: hand-picked expressions, then a few hundred random
  ones with negative steps and integer and boolean lists. Lists select along their own axis
  (zarr's oindex), so with several lists the reference is NumPy's `a[np.ix_(...)]`.
- `zarrkit resize` and `zarrkit append` on arrays zarrkit wrote leave arrays that zarr-python
  reads with the expected shape and values, with the chunks outside the shape gone.
"""

from __future__ import annotations

import numpy as np
import pytest

zarr = pytest.importorskip("zarr")

from zk_interop import assert_same_array, sample_values, save_npy, stored_chunk_keys  # noqa: E402


# ---- a reference for orthogonal selections ------------------------------------------------------

def parse_entry(entry: str):
    """One comma-separated entry of a selection expression, as a Python index object."""
    entry = entry.strip()
    if entry == "...":
        return Ellipsis
    if entry.startswith("["):
        items = [x.strip() for x in entry[1:-1].split(",") if x.strip()]
        if items and items[0] in ("True", "False"):
            return np.array([x == "True" for x in items], dtype=bool)
        return np.array([int(x) for x in items], dtype=np.intp)
    if ":" in entry:
        parts = [int(p) if p.strip() else None for p in entry.split(":")]
        return slice(*parts)
    return int(entry)


def split_entries(expression: str) -> list[str]:
    entries, depth, current = [], 0, ""
    for ch in expression:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        if ch == "," and depth == 0:
            entries.append(current)
            current = ""
        else:
            current += ch
    if current.strip():
        entries.append(current)
    return entries


def orthogonal(values: np.ndarray, expression: str) -> np.ndarray:
    """values[expression] where every list selects along its own axis (zarr's oindex)."""
    entries = [parse_entry(e) for e in split_entries(expression)]
    at = next((i for i, e in enumerate(entries) if e is Ellipsis), None)
    if at is not None:
        entries[at:at + 1] = [slice(None)] * (values.ndim - (len(entries) - 1))
    entries += [slice(None)] * (values.ndim - len(entries))
    per_axis, dropped = [], []
    for axis, entry in enumerate(entries):
        n = values.shape[axis]
        if isinstance(entry, int):
            per_axis.append(np.array([entry % n]))
            dropped.append(axis)
        elif isinstance(entry, slice):
            per_axis.append(np.arange(n)[entry])
        elif entry.dtype == bool:
            per_axis.append(np.nonzero(entry)[0])
        else:
            per_axis.append(entry)
    picked = values[np.ix_(*per_axis)] if per_axis else values[()]
    return picked.reshape([len(ix) for axis, ix in enumerate(per_axis) if axis not in dropped])


def test_the_reference_is_numpy_where_numpy_is_orthogonal():
    a = np.arange(60).reshape(3, 4, 5)
    for expression in ["[2, 0, 0], ::-1", "..., [4, -1]", "1, [3, 1], 2:0:-1", "[True, False, True], -1"]:
        np.testing.assert_array_equal(orthogonal(a, expression), eval(f"a[{expression}]"))
    np.testing.assert_array_equal(orthogonal(a, "[0, 2], :, [1, 4]"), a[np.ix_([0, 2], range(4), [1, 4])])


# ---- zarr-python writes, zarrkit selects ----------------------------------------------------------

SHAPE = (11, 7, 6)

LAYOUTS = {
    "v3": dict(zarr_format=3, chunks=(4, 3, 6)),
    "v2": dict(zarr_format=2, chunks=(4, 3, 6)),
    "v2-F": dict(zarr_format=2, chunks=(5, 2, 4), order="F"),
    "v3-sharded": dict(zarr_format=3, chunks=(2, 3, 2), shards=(4, 6, 4)),
}

EXPRESSIONS = [
    "[1,5,9],:,::-1",
    "::-1",
    "::-3, 1:, -1::-2",
    "10:2:-4, [6, 0, 6], [True, False, True, False, False, True]",
    "[-1, -11, 3, 3], ..., [5]",
    "..., 4:1:-1",
    "2, ::-2, []",
    "[0, 10], [1, 2], [3, 4]",
    "-1:-12:-1, -7::3, 0",
]


@pytest.fixture(params=sorted(LAYOUTS))
def written(request, tmp_path):
    """An array zarr-python wrote (partly: the last chunks stay missing), and its values."""
    layout = LAYOUTS[request.param]
    values = sample_values("int32", SHAPE, seed=5)
    array = zarr.create_array(store=str(tmp_path / "a"), shape=SHAPE, dtype="int32", fill_value=-7, **layout)
    array[:9, :, :5] = values[:9, :, :5]
    return tmp_path / "a", array[...]


@pytest.mark.parametrize("expression", EXPRESSIONS)
def test_export_select_matches_numpy(written, zarrkit, expression):
    path, values = written
    assert_same_array(zarrkit.export(path, select=expression), orthogonal(values, expression), expression)


def random_expression(rng: np.random.Generator, shape) -> str:
    entries = []
    for n in shape:
        kind = rng.integers(0, 6)
        if kind == 0:
            entries.append(str(int(rng.integers(-n, n))))
        elif kind == 1:
            picks = rng.integers(-n, n, rng.integers(0, 6))
            entries.append("[" + ", ".join(str(int(i)) for i in picks) + "]")
        elif kind == 2:
            entries.append("[" + ", ".join("True" if b else "False" for b in rng.integers(0, 2, n)) + "]")
        else:
            def bound():
                return "" if rng.integers(0, 3) == 0 else str(int(rng.integers(-n - 2, n + 3)))
            step = int(rng.integers(1, 4)) * (-1 if rng.integers(0, 2) else 1)
            entries.append(f"{bound()}:{bound()}:{step}")
    if rng.integers(0, 4) == 0:
        entries = entries[: int(rng.integers(0, len(entries)))] + ["..."]
    return ", ".join(entries)


def test_export_random_selections_match_numpy(written, zarrkit):
    path, values = written
    rng = np.random.default_rng(2026)
    for _ in range(60):
        expression = random_expression(rng, SHAPE)
        assert_same_array(zarrkit.export(path, select=expression), orthogonal(values, expression), expression)


def test_export_select_refuses_bad_lists(written, zarrkit):
    path, _ = written
    for expression in ["[11]", "[-12], :", "[True, False]", "[1, [2]]", "[1, 2"]:
        error = zarrkit.expect_error("export", path, zarrkit.scratch / "x.npy", f"--select={expression}", exit_code=2)
        assert "--select" in error


# ---- zarrkit resizes and appends, zarr-python reads -----------------------------------------------

def save(zarrkit, values: np.ndarray):
    return save_npy(zarrkit.scratch, values)


def zarrkit_array(zarrkit, path, values, zarr_format, chunks, *extra):
    zarrkit.import_npy(values, path, "--zarr-format", str(zarr_format), "--chunks", ",".join(map(str, chunks)),
                       "--fill-value=-1", *extra)


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_resize_shrink_then_grow(tmp_path, zarrkit, zarr_format):
    values = sample_values("int16", (10, 9), seed=3)
    path = tmp_path / "a"
    zarrkit_array(zarrkit, path, values, zarr_format, (4, 4))
    zarrkit.run("resize", path, "6,5")
    shrunk = zarr.open_array(str(path), mode="r")
    assert shrunk.shape == (6, 5)
    assert_same_array(shrunk[...], values[:6, :5], "after shrinking")
    # Only chunks inside the 2x2 grid of the new shape remain.
    keys = stored_chunk_keys(path)
    sep = "/" if zarr_format == 3 else "."
    prefix = "c/" if zarr_format == 3 else ""
    assert keys == {f"{prefix}{i}{sep}{j}" for i in range(2) for j in range(2)}
    # Growing again: the old data beyond the shrunk shape must not come back.
    zarrkit.run("resize", path, "12,10")
    grown = zarr.open_array(str(path), mode="r")
    expected = np.full((12, 10), -1, dtype="int16")
    expected[:6, :5] = values[:6, :5]
    assert_same_array(grown[...], expected, "after growing")
    assert_same_array(zarrkit.export(path), expected, "zarrkit after growing")


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_append_along_each_axis(tmp_path, zarrkit, zarr_format):
    values = sample_values("float64", (5, 3), seed=4)
    path = tmp_path / "a"
    zarrkit_array(zarrkit, path, values, zarr_format, (2, 2))
    more_rows = sample_values("float64", (4, 3), seed=5)
    zarrkit.run("append", path, save(zarrkit, more_rows))
    more_cols = sample_values("float64", (9, 2), seed=6)
    zarrkit.run("append", path, save(zarrkit, more_cols), "--axis", "1")
    expected = np.concatenate([np.concatenate([values, more_rows]), more_cols], axis=1)
    array = zarr.open_array(str(path), mode="r")
    assert array.shape == (9, 5)
    assert_same_array(array[...], expected)
    # zarr-python appending to what zarrkit appended to agrees too.
    writable = zarr.open_array(str(path), mode="r+")
    writable.append(expected[:1])
    assert_same_array(zarrkit.export(path), np.concatenate([expected, expected[:1]]))


def test_append_to_a_sharded_array(tmp_path, zarrkit):
    values = sample_values("int8", (6, 4), seed=7)
    path = tmp_path / "a"
    zarrkit_array(zarrkit, path, values, 3, (4, 4), "--shards", "8,4")
    extra = sample_values("int8", (5, 4), seed=8)
    zarrkit.run("append", path, save(zarrkit, extra))
    assert_same_array(zarr.open_array(str(path), mode="r")[...], np.concatenate([values, extra]))
    zarrkit.run("resize", path, "3,4")
    assert stored_chunk_keys(path) == {"c/0/0"}
    assert_same_array(zarr.open_array(str(path), mode="r")[...], values[:3])


def test_resize_and_append_errors(tmp_path, zarrkit):
    path = tmp_path / "a"
    zarrkit_array(zarrkit, path, np.zeros((4, 4), dtype="int32"), 3, (2, 2))
    zarrkit.expect_error("resize", path, "4", exit_code=2)
    zarrkit.expect_error("resize", path, "4,x", exit_code=2)
    assert "axis 1" in zarrkit.expect_error("append", path, save(zarrkit, np.zeros((2, 3), dtype="int32")))
    assert "int64" in zarrkit.expect_error("append", path, save(zarrkit, np.zeros((2, 4), dtype="int64")))
    zarrkit.expect_error("resize", tmp_path / "missing", "4,4")
    assert zarr.open_array(str(path), mode="r").shape == (4, 4)
