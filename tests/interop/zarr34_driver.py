"""Runs inside the zarr-python 3.4 venv (.venv-zarr34, Python >= 3.12), as a subprocess of
tests/interop/test_zarr_python_34.py: the test venv pins zarr-python 3.1 on Python 3.11.

  python zarr34_driver.py write DIR    every case written by zarr-python 3.4 under DIR/<case>,
                                       and what zarr-python reads back, DIR/<case>.npy
  python zarr34_driver.py read SRC OUT each case under SRC (written by zarrkit) read by
                                       zarr-python 3.4, saved as OUT/<case>.npy

It prints the cases it handled as JSON: {"zarr": version, "cases": {name: array path}}.
One process does every case, so the interpreter and zarr start once per direction.
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

import numcodecs
import numpy as np
import zarr
import zarr.codecs.numcodecs as numcodecs_v3
from zarr.codecs import (BloscCodec, BytesCodec, CastValue, Crc32cCodec, GzipCodec, ScaleOffset, ShardingCodec,
                         TransposeCodec, ZstdCodec)

warnings.filterwarnings("ignore")  # numcodecs.* and v2-only dtypes "not in the v3 spec"
# Rectilinear chunk grids are experimental in zarr-python 3.4: writing and reading them
# needs this flag.
zarr.config.set({"array.rectilinear_chunks": True})

SHAPE = (7, 5)
CHUNKS = (3, 2)
PARTIAL = (slice(1, 5), slice(0, 3))  # leaves chunk row 2 and column 2 missing
STRUCT = np.dtype([("id", "<i4"), ("weight", "<f8"), ("flag", "|b1")])


def values_for(dtype: np.dtype, seed: int) -> np.ndarray:
    """Values over the whole range of DTYPE (extremes, special floats), SHAPE elements."""
    rng = np.random.default_rng(seed)
    count = SHAPE[0] * SHAPE[1]
    if dtype.fields is not None:
        out = np.empty(count, dtype=dtype)
        for i, name in enumerate(dtype.names):
            out[name] = values_for(dtype.fields[name][0], seed + 1 + i).reshape(-1)
        return out.reshape(SHAPE)
    native = dtype.newbyteorder("=") if dtype.kind not in "SUbT" else dtype
    if dtype.kind == "b":
        flat = rng.integers(0, 2, count).astype(bool)
    elif dtype.kind in "iu":
        info = np.iinfo(dtype)
        flat = rng.integers(info.min, info.max, count, dtype=native, endpoint=True)
        flat[:2] = [info.min, info.max]
    elif dtype.kind == "f":
        flat = (rng.standard_normal(count) * 1000).astype(native)
        flat[-4:] = [np.nan, np.inf, -np.inf, -0.0]
    elif dtype.kind == "c":
        flat = (rng.standard_normal(count) + 1j * rng.standard_normal(count)).astype(native)
        flat[-1] = complex(np.nan, -0.0)
    elif dtype.kind in "mM":
        flat = rng.integers(-(2**62), 2**62, count).astype("<i8")
        flat[0] = np.iinfo(np.int64).min  # NaT
        flat = flat.view(dtype.newbyteorder("<"))
    elif dtype.kind == "S":
        flat = np.array([bytes(rng.integers(1, 255, int(n), dtype=np.uint8)) for n in rng.integers(0, 8, count)],
                        dtype=dtype)
    elif dtype.kind in "UT":
        alphabet = list("abcXYZ019 é水\U0001F600")
        flat = np.array(["".join(rng.choice(alphabet, int(n))) for n in rng.integers(0, 6, count)], dtype=dtype)
    else:
        raise AssertionError(f"no values for {dtype}")
    return flat.astype(dtype).reshape(SHAPE)


def fill_for(dtype: np.dtype):
    if dtype.fields is not None:
        return np.array((-3, 2.5, True), dtype=dtype)[()]
    if dtype.kind == "M":
        return np.datetime64("2001-02-03T04:05:06.000000007", "ns").astype(dtype)
    if dtype.kind == "m":
        return np.timedelta64(-5, "s").astype(dtype)
    return {"b": True, "i": -3, "u": 42, "f": -1.5, "c": complex(1.5, -2.0), "S": b"fill", "U": "fé",
            "T": "fé"}[dtype.kind]


CORE = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32",
        "float64", "complex64", "complex128"]


def cases() -> dict[str, dict]:
    """name -> how zarr-python 3.4 creates it (the factories build codecs only when run)."""
    out: dict[str, dict] = {}
    for name in CORE:
        out[f"v3-{name}"] = {"dtype": name}
    out["v3-float64-big-endian"] = {"dtype": "float64", "serializer": lambda: BytesCodec(endian="big")}
    out["v3-int16-gzip"] = {"dtype": "int16", "compressors": lambda: [GzipCodec(level=5)]}
    out["v3-int32-zstd-crc32c"] = {"dtype": "int32", "compressors": lambda: [ZstdCodec(level=3, checksum=True),
                                                                             Crc32cCodec()]}
    out["v3-float32-blosc-lz4"] = {"dtype": "float32",
                                   "compressors": lambda: [BloscCodec(cname="lz4", clevel=5, shuffle="shuffle")]}
    out["v3-uint16-blosc-zstd-bitshuffle"] = {
        "dtype": "uint16", "compressors": lambda: [BloscCodec(cname="zstd", clevel=3, shuffle="bitshuffle")]}
    out["v3-int64-numcodecs.zlib"] = {"dtype": "int64", "compressors": lambda: [numcodecs_v3.Zlib(level=1)]}
    out["v3-float32-none"] = {"dtype": "float32", "compressors": None}
    out["v3-int32-transpose"] = {"dtype": "int32", "filters": lambda: [TransposeCodec(order=(1, 0))]}
    out["v3-float32-sharded"] = {"dtype": "float32", "shards": (6, 4)}
    out["v3-int16-sharded-index-start"] = {
        "dtype": "int16", "chunks": (6, 4),
        "serializer": lambda: ShardingCodec(chunk_shape=(3, 2), codecs=[BytesCodec(), ZstdCodec(level=1)],
                                            index_location="start")}
    out["v3-datetime64"] = {"dtype": "<M8[ns]"}
    out["v3-timedelta64"] = {"dtype": "<m8[s]"}
    out["v3-fixed-U5"] = {"dtype": "<U5"}
    out["v3-fixed-S7"] = {"dtype": "S7"}
    out["v3-string"] = {"dtype": str}
    out["v3-struct"] = {"dtype": STRUCT}
    out["v3-struct-sharded"] = {"dtype": STRUCT, "shards": (6, 4)}
    # Rectilinear grids: listed sizes (runs written as [size, count]) and bare sizes per axis,
    # and shards of varying sizes around regular inner chunks.
    out["v3-int32-rectilinear"] = {"dtype": "int32", "chunks": [[3, 1, 3], 2]}
    out["v3-float64-rectilinear-runs"] = {"dtype": "float64", "chunks": [[2, 2, 2, 1], [1, 4]]}
    out["v3-uint16-rectilinear-sharded"] = {"dtype": "uint16", "chunks": (1, 1), "shards": [[4, 2, 1], [2, 3]]}
    for name in ["bool", "int8", "int32", "uint64", "float16", "float64", "complex128"]:
        out[f"v2-{name}"] = {"dtype": name, "zarr_format": 2}
    out["v2-big-endian-i4"] = {"dtype": ">i4", "zarr_format": 2}
    out["v2-U5"] = {"dtype": "<U5", "zarr_format": 2}
    out["v2-S7"] = {"dtype": "S7", "zarr_format": 2}
    out["v2-datetime64"] = {"dtype": "<M8[ns]", "zarr_format": 2}
    # A generic unit with a multiplier: zarr-python 3.4 writes "<M8[3generic]" in .zarray.
    out["v2-datetime64-scaled-generic"] = {"dtype": "<M8[3generic]", "zarr_format": 2, "fill_value": None}
    out["v2-timedelta64-scaled-generic"] = {"dtype": "<m8[2generic]", "zarr_format": 2, "fill_value": None}
    out["v2-structured"] = {"dtype": STRUCT, "zarr_format": 2}
    out["v2-string"] = {"dtype": str, "zarr_format": 2}
    out["v2-blosc"] = {"dtype": "float32", "zarr_format": 2,
                       "compressors": lambda: numcodecs.Blosc(cname="lz4", clevel=5, shuffle=1)}
    out["v2-zlib"] = {"dtype": "int32", "zarr_format": 2, "compressors": lambda: numcodecs.Zlib(level=1)}
    out["v2-no-compressor"] = {"dtype": "uint16", "zarr_format": 2, "compressors": None}
    out["v2-order-F"] = {"dtype": "int16", "zarr_format": 2, "order": "F"}
    out["v2-delta-filter"] = {"dtype": "int32", "zarr_format": 2,
                              "filters": lambda: [numcodecs.Delta(dtype="<i4")]}
    out["v2-nested-keys"] = {"dtype": "float64", "zarr_format": 2,
                             "chunk_key_encoding": {"name": "v2", "separator": "/"}}
    out["v2-fill-none"] = {"dtype": "float64", "zarr_format": 2, "fill_value": None}
    out.update(value_codec_cases())
    return out


def measured(seed: int, low: float, high: float, dtype: str, specials=()) -> np.ndarray:
    """Values in [low, high) with fractions that need rounding, and SPECIALS among those written."""
    values = np.random.default_rng(seed).uniform(low, high, SHAPE).astype(dtype)
    written = values[PARTIAL]  # a view: the specials land where the partial write stores them
    written.flat[:len(specials)] = list(specials)
    return values


def value_codec_cases() -> dict[str, dict]:
    """The cast_value and scale_offset codecs: each with values its conversion accepts."""
    out: dict[str, dict] = {}
    out["v3-float64-scale_offset-cast_value-uint16"] = {
        "dtype": "float64", "fill_value": -1.5, "values": lambda: measured(1, -10, 600, "float64", [-10.05, 650.0]),
        "compressors": None,
        "filters": lambda: [ScaleOffset(offset=-10, scale=100),
                            CastValue(data_type="uint16", rounding="nearest-even", out_of_range="clamp")]}
    out["v3-float32-scale_offset-cast_value-int8-wrap"] = {
        "dtype": "float32", "fill_value": 0.25, "values": lambda: measured(2, -40, 40, "float32", [-0.5, 0.5, 1.5]),
        "compressors": None,
        "filters": lambda: [ScaleOffset(offset=0.5, scale=4),
                            CastValue(data_type="int8", rounding="nearest-away", out_of_range="wrap")]}
    out["v3-float64-cast_value-float16-towards-zero"] = {
        "dtype": "float64", "fill_value": 1e6, "compressors": None,
        "values": lambda: measured(3, -70000, 70000, "float64", [np.nan, np.inf, -np.inf, -0.0, 65519.5, 1e-9]),
        "filters": lambda: [CastValue(data_type="float16", rounding="towards-zero", out_of_range="clamp")]}
    out["v3-float32-cast_value-uint8-scalar-map"] = {
        "dtype": "float32", "fill_value": np.nan, "compressors": None,
        "values": lambda: measured(4, -1, 254, "float32", [np.nan, 255.0, -3.0, 2.5]),
        "filters": lambda: [CastValue(data_type="uint8", rounding="towards-positive", out_of_range="clamp",
                                      scalar_map={"encode": [("NaN", 255)], "decode": [(255, "NaN")]})]}
    out["v3-int32-scale_offset"] = {
        "dtype": "int32", "fill_value": 9, "compressors": None,
        "values": lambda: np.random.default_rng(5).integers(-1000, 1000, SHAPE).astype("int32"),
        "filters": lambda: [ScaleOffset(offset=7, scale=3)]}
    out["v3-int64-cast_value-int16-clamp"] = {
        "dtype": "int64", "fill_value": -40000, "compressors": None,
        "values": lambda: np.random.default_rng(6).integers(-50000, 50000, SHAPE).astype("int64"),
        "filters": lambda: [CastValue(data_type="int16", out_of_range="clamp")]}
    out["v3-uint8-cast_value-float32"] = {
        "dtype": "uint8", "fill_value": 200, "compressors": None, "serializer": lambda: BytesCodec(),
        "values": lambda: np.random.default_rng(7).integers(0, 256, SHAPE).astype("uint8"),
        "filters": lambda: [CastValue(data_type="float32")]}
    out["v3-float32-scale_offset-cast_value-sharded"] = {
        "dtype": "float32", "fill_value": 3.0, "shards": (6, 4), "compressors": None,
        "values": lambda: measured(8, 0, 60, "float32", [3.0, 3.01]),
        # zarr-python checks the inner chain with a fill value of 0, so 0 must encode too.
        "filters": lambda: [ScaleOffset(offset=-3, scale=10),
                            CastValue(data_type="uint16", rounding="towards-negative")]}
    return out


def create_args(spec: dict) -> dict:
    args = {k: (v() if callable(v) and k != "dtype" else v) for k, v in spec.items()}
    args.setdefault("chunks", CHUNKS)
    return args


def as_saveable(values: np.ndarray) -> np.ndarray:
    """NumPy's variable-width strings cannot go into .npy: fixed-width, as wide as the longest."""
    if values.dtype.kind == "T" or values.dtype == object:
        return np.array(values.tolist(), dtype=str).reshape(values.shape)
    return values


def write(root: Path) -> dict[str, str]:
    written = {}
    for index, (name, spec) in enumerate(cases().items()):
        make_values = spec.pop("values", None)
        args = create_args(spec)
        requested = args.pop("dtype")
        dtype = np.dtypes.StringDType() if requested is str else np.dtype(requested)
        values = make_values() if make_values else values_for(dtype, seed=index)
        args.setdefault("fill_value", fill_for(dtype))
        array = zarr.create_array(store=str(root / name), shape=SHAPE, dtype=dtype, **args)
        array[PARTIAL] = values[PARTIAL]
        np.save(root / f"{name}.npy", as_saveable(array[...]), allow_pickle=False)
        written[name] = name
    # A hierarchy with consolidated metadata: the array inside it.
    group = zarr.open_group(str(root / "v3-group-consolidated"), mode="w")
    inner = group.create_array("inner", shape=SHAPE, chunks=CHUNKS, dtype="int32", fill_value=7)
    inner[PARTIAL] = values_for(np.dtype("int32"), seed=99)[PARTIAL]
    group.attrs["title"] = "zarr-python 3.4"
    zarr.consolidate_metadata(str(root / "v3-group-consolidated"))
    np.save(root / "v3-group-consolidated.npy", inner[...])
    written["v3-group-consolidated"] = "v3-group-consolidated/inner"
    return written


def read(source: Path, out: Path) -> dict[str, str]:
    out.mkdir(parents=True, exist_ok=True)
    done = {}
    for name in sorted(p.name for p in source.iterdir() if p.is_dir()):
        path = source / name
        array_path = path / "inner" if (path / "inner").is_dir() else path
        array = zarr.open_array(str(array_path), mode="r")
        np.save(out / f"{name}.npy", as_saveable(array[...]), allow_pickle=False)
        done[name] = str(array_path.relative_to(source))
    return done


def main() -> None:
    command = sys.argv[1]
    if command == "write":
        handled = write(Path(sys.argv[2]))
    elif command == "read":
        handled = read(Path(sys.argv[2]), Path(sys.argv[3]))
    else:
        raise SystemExit(f"unknown command {command!r}")
    print(json.dumps({"zarr": zarr.__version__, "cases": handled}))


if __name__ == "__main__":
    main()
