"""Shared helpers for the interop tests: running the zarrkit CLI, making test values, and
comparing arrays exactly.

The tests compare what zarrkit reads or writes with what the reference implementations
(zarr-python 3, tensorstore) read or write, value for value.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

# ---- the CLI ----------------------------------------------------------------------------------

CLI_TIMEOUT_S = 120


class Zarrkit:
    """The zarrkit binary under test (its commands: the CLI section of README.md)."""

    def __init__(self, binary: str, scratch: Path):
        self.binary = binary
        self.scratch = scratch
        self._exports = 0

    def run(self, *args, ok: bool = True) -> subprocess.CompletedProcess:
        """Runs `zarrkit ARGS`; with ok=True a non-zero exit fails the test with zarrkit's stderr."""
        command = [self.binary, *map(str, args)]
        result = subprocess.run(command, capture_output=True, text=True, timeout=CLI_TIMEOUT_S,
                                stdin=subprocess.DEVNULL)
        if ok and result.returncode != 0:
            pytest.fail(f"`zarrkit {' '.join(command[1:])}` exited {result.returncode}\n"
                        f"stderr: {result.stderr.strip()}\nstdout: {result.stdout.strip()[:2000]}",
                        pytrace=False)
        return result

    def export(self, array_path, select: str | None = None, astype: str | None = None) -> np.ndarray:
        """`zarrkit export ARRAY OUT.npy [--select EXPR] [--astype TYPE]`, loaded back with NumPy."""
        self.scratch.mkdir(parents=True, exist_ok=True)
        self._exports += 1
        out = self.scratch / f"export-{self._exports}.npy"
        args = ["export", array_path, out]
        if select is not None:
            args.append(f"--select={select}")  # with '=', since EXPR may start with '-'
        if astype is not None:
            args.append(f"--astype={astype}")
        self.run(*args)
        assert out.is_file(), f"zarrkit export exited 0 but wrote no {out}"
        return np.load(out, allow_pickle=False)

    def import_npy(self, values: np.ndarray, array_path, *options) -> None:
        """Saves VALUES as .npy and runs `zarrkit import IN.npy ARRAY OPTIONS...`."""
        npy = save_npy(self.scratch, values)
        self.run("import", npy, array_path, *options)

    def expect_error(self, *args, exit_code: int | None = None) -> str:
        """Runs a command that must fail: non-zero exit and one `zarrkit: error:` line on stderr."""
        result = self.run(*args, ok=False)
        assert result.returncode != 0, (
            f"`zarrkit {' '.join(map(str, args))}` should have failed, but exited 0\n"
            f"stdout: {result.stdout[:2000]}")
        if exit_code is not None:
            assert result.returncode == exit_code, (
                f"exit code {result.returncode}, expected {exit_code}; stderr: {result.stderr}")
        assert "zarrkit: error:" in result.stderr, f"no `zarrkit: error:` line: {result.stderr!r}"
        return result.stderr


def save_npy(directory: Path, values: np.ndarray) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    index = len(list(directory.glob("input-*.npy")))
    path = directory / f"input-{index}.npy"
    np.save(path, values, allow_pickle=False)
    return path


# ---- metadata on disk ----------------------------------------------------------------------------

def read_json(path) -> dict:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def v2_metadata(array_path) -> dict:
    return read_json(Path(array_path) / ".zarray")


def v3_metadata(array_path) -> dict:
    return read_json(Path(array_path) / "zarr.json")


def stored_chunk_keys(array_path) -> set[str]:
    """Every stored key of an array that is not metadata, as a '/'-separated relative path."""
    root = Path(array_path)
    return {p.relative_to(root).as_posix() for p in root.rglob("*")
            if p.is_file() and p.name not in (".zarray", ".zattrs", ".zgroup", "zarr.json")}


# ---- data types and values ----------------------------------------------------------------------

# Every fixed-size type that Zarr v3 defines (and v2 writes as '<' or '|' types).
CORE_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
               "float16", "float32", "float64", "complex64", "complex128"]

STRUCTURED = np.dtype([("id", "<i4"), ("weight", "<f8"), ("flag", "|b1")])

# Types that only Zarr v2 (as zarr-python writes it) has.
V2_ONLY_DTYPES = {
    "big-i4": np.dtype(">i4"),
    "big-f8": np.dtype(">f8"),
    "big-u2": np.dtype(">u2"),
    "big-c8": np.dtype(">c8"),
    "S7": np.dtype("S7"),
    "U5": np.dtype("<U5"),
    "M8[ns]": np.dtype("<M8[ns]"),
    "m8[s]": np.dtype("<m8[s]"),
    "structured": STRUCTURED,
}


def sample_values(dtype, shape, seed: int = 0) -> np.ndarray:
    """Values that exercise the whole range of DTYPE: extremes, signs, special floats."""
    dtype = np.dtype(dtype)
    rng = np.random.default_rng(seed)
    count = int(np.prod(shape, dtype=np.int64))
    if dtype.fields is not None:
        out = np.empty(count, dtype=dtype)
        for i, name in enumerate(dtype.names):
            out[name] = sample_values(dtype.fields[name][0], (count,), seed + 1 + i)
        return out.reshape(shape)
    kind = dtype.kind
    if kind == "b":
        flat = rng.integers(0, 2, count).astype(bool)
    elif kind in "iu":
        info = np.iinfo(dtype)
        flat = rng.integers(info.min, info.max, count, dtype=dtype.newbyteorder("="),
                            endpoint=True)
        extremes = np.array([info.min, info.max, 0, 1], dtype=dtype.newbyteorder("="))
        flat[: min(count, 4)] = extremes[: min(count, 4)]
    elif kind == "f":
        flat = (rng.standard_normal(count) * 1000).astype(dtype.newbyteorder("="))
        specials = np.array([np.nan, np.inf, -np.inf, -0.0, np.finfo(dtype).max,
                             np.finfo(dtype).tiny], dtype=dtype.newbyteorder("="))
        flat[-min(count, len(specials)):] = specials[: min(count, len(specials))]
    elif kind == "c":
        part = np.dtype(f"f{dtype.itemsize // 2}")
        flat = np.empty(count, dtype=dtype.newbyteorder("="))
        flat.real = sample_values(part, (count,), seed)
        flat.imag = sample_values(part, (count,), seed + 1)[::-1]
    elif kind == "S":
        alphabet = np.frombuffer(b"abcXYZ019 \x01\xff", dtype="S1")
        lengths = rng.integers(0, dtype.itemsize + 1, count)
        flat = np.array([b"".join(rng.choice(alphabet, n)) for n in lengths], dtype=dtype)
    elif kind == "U":
        alphabet = list("abcXYZ019 é水\U0001F600")
        chars = dtype.itemsize // 4
        lengths = rng.integers(0, chars + 1, count)
        flat = np.array(["".join(rng.choice(alphabet, n)) for n in lengths], dtype=dtype)
    elif kind in "mM":
        flat = rng.integers(-(2**62), 2**62, count).astype("<i8")
        flat[: min(count, 1)] = np.iinfo(np.int64).min  # NaT
        flat = flat.view(dtype.newbyteorder("<"))
    else:
        raise AssertionError(f"no sample values for {dtype}")
    return flat.astype(dtype).reshape(shape)


def smooth_values(dtype, shape) -> np.ndarray:
    """Compressible values (runs and ramps), so that compressors really compress."""
    ramp = (np.arange(int(np.prod(shape, dtype=np.int64))) // 3) % 11
    return ramp.astype(dtype).reshape(shape)


def nonzero_fill(dtype):
    """A fill value other than zero for DTYPE, as zarr-python accepts it."""
    dtype = np.dtype(dtype)
    if dtype.fields is not None:
        return np.array((-3, 2.5, True), dtype=dtype)[()]
    if dtype.kind == "M":
        return np.datetime64("2001-02-03T04:05:06.000000007", "ns").astype(dtype)
    if dtype.kind == "m":
        return np.timedelta64(-5, "s").astype(dtype)
    return {"b": True, "i": -3, "u": 42, "f": -1.5, "c": complex(1.5, -2.0), "S": b"fill",
            "U": "fé"}[dtype.kind]


# ---- exact comparison ---------------------------------------------------------------------------

def assert_same_array(actual: np.ndarray, expected: np.ndarray, what: str = "") -> None:
    """ACTUAL has the same shape, the same type (byte order aside) and the same values as
    EXPECTED; NaN equals NaN, NaT equals NaT. Structured and string values compare as bytes."""
    label = f"{what}: " if what else ""
    assert actual.shape == expected.shape, f"{label}shape {actual.shape} != {expected.shape}"
    if _generic_time(actual.dtype) and _generic_time(expected.dtype) and actual.dtype.kind == expected.dtype.kind:
        # NumPy arrays drop a generic unit's multiplier ("M8[3generic]" becomes "M8"), so one
        # side may keep it where the other lost it: the counts themselves must be equal.
        actual, expected = (a.view(a.dtype.str[0] + "i8").astype("i8") for a in (actual, expected))
    native = expected.dtype.newbyteorder("=") if expected.dtype.fields is None else expected.dtype
    assert actual.dtype in (expected.dtype, native, expected.dtype.newbyteorder("<"),
                            expected.dtype.newbyteorder(">")), (
        f"{label}dtype {actual.dtype.str} ({actual.dtype}) != {expected.dtype.str} ({expected.dtype})")
    actual = actual.astype(expected.dtype, copy=False)
    kind = expected.dtype.kind
    if kind in "fc":
        equal = np.array_equal(actual, expected, equal_nan=True)
    elif kind in "mM":
        equal = np.array_equal(actual.view("i8"), expected.view("i8"))
    elif expected.dtype.fields is not None:
        equal = actual.tobytes() == expected.tobytes()
    else:
        equal = np.array_equal(actual, expected)
    if not equal:
        diff = np.argwhere(~_elementwise_equal(actual, expected))
        first = tuple(int(i) for i in diff[0]) if len(diff) else ()
        pytest.fail(f"{label}{len(diff)} of {expected.size} values differ; first at {first}: "
                    f"got {actual[first]!r}, expected {expected[first]!r}\n"
                    f"got:\n{actual}\nexpected:\n{expected}", pytrace=False)


def _generic_time(dtype: np.dtype) -> bool:
    return dtype.kind in "mM" and np.datetime_data(dtype)[0] == "generic"


def _elementwise_equal(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if b.dtype.fields is not None or b.ndim == 0:
        flat_a = a.reshape(-1)
        flat_b = b.reshape(-1)
        return np.array([x.tobytes() == y.tobytes() for x, y in zip(flat_a, flat_b)]).reshape(b.shape)
    if b.dtype.kind in "fc":
        return (a == b) | (np.isnan(a) & np.isnan(b))
    if b.dtype.kind in "mM":
        return a.view("i8") == b.view("i8")
    return a == b
