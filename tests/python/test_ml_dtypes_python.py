"""The zarr-extensions ML data types (float8/float6/float4, int2/int4/uint2/uint4) through the
Python package, as ml_dtypes' NumPy dtypes.

Fill values are checked for every bit pattern of every type against ml_dtypes' own
conversions: the number zarrkit writes in zarr.json is ml_dtypes' value of the pattern, and
that number reads back as the same pattern.
"""

import base64
import json
import math

import numpy as np
import pytest

import zarrkit
from zarrkit.errors import InvalidArgumentError, UnsupportedError

ml_dtypes = pytest.importorskip("ml_dtypes")

MINIFLOATS = [
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
]
SUB_BYTE_INTEGERS = {"int2": (-2, 1), "int4": (-8, 7), "uint2": (0, 3), "uint4": (0, 15)}
ALL = MINIFLOATS + list(SUB_BYTE_INTEGERS)
VALUE_BITS = {"float6_e2m3fn": 6, "float6_e3m2fn": 6, "float4_e2m1fn": 4, "int2": 2, "uint2": 2, "int4": 4, "uint4": 4}


def patterns(name):
    return np.arange(1 << VALUE_BITS.get(name, 8), dtype=np.uint8)


def sample(name, shape, seed=0):
    """Every pattern of the type, then random ones, as an array of the ml_dtypes type."""
    rng = np.random.default_rng(seed)
    flat = np.concatenate([patterns(name), rng.choice(patterns(name), size=math.prod(shape))])
    return flat[: math.prod(shape)].reshape(shape).view(getattr(ml_dtypes, name))


@pytest.mark.parametrize("name", ALL)
def test_write_and_read_every_pattern(name):
    values = sample(name, (23, 17))
    store = zarrkit.storage.MemoryStore()
    a = zarrkit.create_array(store, shape=values.shape, chunks=(8, 8), dtype=getattr(ml_dtypes, name))
    assert a.dtype == np.dtype(getattr(ml_dtypes, name))
    assert a.metadata["data_type"] == name
    assert a.metadata["codecs"][0] == {"name": "bytes"}  # one byte per element: no endian
    a[...] = values
    back = zarrkit.open_array(store, mode="r")
    assert back.dtype == values.dtype
    np.testing.assert_array_equal(back[...].view(np.uint8), values.view(np.uint8))
    np.testing.assert_array_equal(back[3:20:3, ::2].view(np.uint8), values[3:20:3, ::2].view(np.uint8))
    # The dtype by name, as a string, gives the same array type (NumPy alone reads "int4" as int32).
    b = zarrkit.create_array(zarrkit.storage.MemoryStore(), shape=(3,), dtype=name)
    assert b.dtype == values.dtype


@pytest.mark.parametrize("name", ALL)
def test_fill_values_match_ml_dtypes_for_every_pattern(name):
    dtype = np.dtype(getattr(ml_dtypes, name))
    for pattern in patterns(name):
        scalar = np.array([pattern], dtype=np.uint8).view(dtype)[0]
        store = zarrkit.storage.MemoryStore()
        a = zarrkit.create_array(store, shape=(2,), chunks=(2,), dtype=dtype, fill_value=scalar)
        written = a.metadata["fill_value"]
        reference = float(scalar)
        if name in SUB_BYTE_INTEGERS:
            assert written == int(scalar)
        elif math.isnan(reference):
            assert written == "NaN" or written == f"0x{pattern:02x}", (name, pattern, written)
        elif math.isinf(reference):
            assert written == ("Infinity" if reference > 0 else "-Infinity")
        else:
            assert written == reference and math.copysign(1, written) == math.copysign(1, reference), (name, pattern)
        reopened = zarrkit.open_array(store, mode="r")
        assert reopened.fill_value.view(np.uint8) == pattern, (name, pattern)
        # Nothing written yet: every element reads as the fill value.
        np.testing.assert_array_equal(reopened[...].view(np.uint8), [pattern, pattern])


@pytest.mark.parametrize("name", MINIFLOATS)
def test_fill_value_numbers_round_like_ml_dtypes(name):
    """Numbers written by others (not a pattern's exact value) round half to even, as
    ml_dtypes converts; numbers past the finite range of a type without infinities are
    refused."""
    dtype = np.dtype(getattr(ml_dtypes, name))
    finite = [float(v) for v in patterns(name).view(dtype) if np.isfinite(float(v))]
    largest = max(finite)
    rng = np.random.default_rng(7)
    candidates = rng.uniform(-largest, largest, 200)
    if name == "float8_e8m0fnu":
        candidates = np.exp2(rng.uniform(-120, 120, 200))
    # Midpoints between neighbours: the ties.
    ordered = sorted(set(finite))
    candidates = list(candidates) + [(x + y) / 2 for x, y in zip(ordered, ordered[1:]) if x > 0 and name != "float8_e8m0fnu"]
    for value in candidates:
        store = zarrkit.storage.MemoryStore()
        zarrkit.create_array(store, shape=(1,), dtype=dtype)
        metadata = json.loads(store.get("zarr.json"))
        metadata["fill_value"] = float(value)
        store.set("zarr.json", json.dumps(metadata).encode())
        got = zarrkit.open_array(store, mode="r").fill_value
        expected = np.array([value]).astype(dtype)[0]
        assert got.view(np.uint8) == expected.view(np.uint8), (name, value, float(got), float(expected))


def test_refused_fill_values():
    for name, fill in [("float8_e4m3fn", "Infinity"), ("float4_e2m1fn", "NaN"), ("float4_e2m1fn", 7.0),
                       ("float8_e4m3fn", 1e4), ("int4", 8), ("uint2", -1), ("float8_e8m0fnu", 0.0),
                       ("float6_e2m3fn", "0x40"), ("int4", 1.5)]:
        store = zarrkit.storage.MemoryStore()
        zarrkit.create_array(store, shape=(1,), dtype=name)
        metadata = json.loads(store.get("zarr.json"))
        metadata["fill_value"] = fill
        store.set("zarr.json", json.dumps(metadata).encode())
        with pytest.raises(InvalidArgumentError, match=name):
            zarrkit.open_array(store, mode="r")


def test_unknown_names_are_refused():
    store = zarrkit.storage.MemoryStore()
    zarrkit.create_array(store, shape=(1,), dtype="int4")
    metadata = json.loads(store.get("zarr.json"))
    for wrong in ["float8_e4m3FN", "int3", "float4", "uint1"]:
        metadata["data_type"] = wrong
        store.set("zarr.json", json.dumps(metadata).encode())
        with pytest.raises(UnsupportedError, match=wrong):
            zarrkit.open_array(store, mode="r")


@pytest.mark.parametrize("name", ["float8_e5m2", "float4_e2m1fn", "int4", "bfloat16"])
def test_v2_names_the_type_as_tensorstore_does(name):
    """NumPy has no type string for these: v2 metadata names them (tensorstore's v2 form)."""
    values = np.arange(-3, 6).astype(np.float32).astype(getattr(ml_dtypes, name))
    store = zarrkit.storage.MemoryStore()
    a = zarrkit.create_array(store, data=values, chunks=(4,), zarr_format=2, fill_value=values[4])
    document = json.loads(store.get(".zarray"))
    assert document["dtype"] == name
    if name == "float4_e2m1fn":  # tensorstore's v2 form: Base64 of the byte
        assert document["fill_value"] == base64.b64encode(values[4].tobytes()).decode()
    else:
        assert document["fill_value"] == (int(values[4]) if name == "int4" else float(values[4]))
    back = zarrkit.open_array(store, mode="r")
    assert back.dtype == values.dtype
    np.testing.assert_array_equal(back[...].view(np.uint8 if name != "bfloat16" else np.uint16),
                                  values.view(np.uint8 if name != "bfloat16" else np.uint16))
    assert a.fill_value.tobytes() == values[4].tobytes()


def test_stored_high_bits_are_ignored():
    """A chunk written by another writer with the spare bits set reads as the low bits."""
    store = zarrkit.storage.MemoryStore()
    a = zarrkit.create_array(store, shape=(4,), chunks=(4,), dtype="int4", compressors=None)
    store.set("c/0", bytes([0xF8, 0x17, 0xA0, 0x0F]))
    np.testing.assert_array_equal(a[...].astype(np.int8), [-8, 7, 0, -1])
    a[...] = np.array([-8, 7, 0, -1], dtype=ml_dtypes.int4)
    assert store.get("c/0") == bytes([0x08, 0x07, 0x00, 0x0F])


def test_sharded_and_compressed():
    values = sample("float8_e4m3fn", (40, 30), seed=3)
    store = zarrkit.storage.MemoryStore()
    a = zarrkit.create_array(store, shape=values.shape, chunks=(5, 5), shards=(20, 15), dtype=values.dtype,
                             fill_value=float("nan"))
    a[...] = values
    np.testing.assert_array_equal(zarrkit.open_array(store, mode="r")[...].view(np.uint8), values.view(np.uint8))
    assert a.metadata["fill_value"] == "NaN"


# ---- struct (zarr-extensions "struct") --------------------------------------------------------

RECORD = np.dtype([("x", "<f4"), ("n", "<i2"), ("q", ml_dtypes.float8_e5m2), ("tag", "S2")])


def test_struct_from_numpy_structured_dtype():
    values = np.zeros((5, 3), dtype=RECORD)
    values["x"] = np.arange(15).reshape(5, 3) / 4
    values["n"] = -np.arange(15).reshape(5, 3)
    values["q"] = np.linspace(-2, 2, 15).reshape(5, 3).astype(ml_dtypes.float8_e5m2)
    values["tag"] = b"ab"
    fill = np.array((np.nan, 3, 1.5, b"z"), dtype=RECORD)[()]
    store = zarrkit.storage.MemoryStore()
    a = zarrkit.create_array(store, shape=values.shape, chunks=(2, 2), dtype=RECORD, fill_value=fill)
    assert a.metadata["data_type"] == {
        "name": "struct",
        "configuration": {"fields": [{"name": "x", "data_type": "float32"}, {"name": "n", "data_type": "int16"},
                                     {"name": "q", "data_type": "float8_e5m2"}, {"name": "tag", "data_type": {
                                         "name": "null_terminated_bytes", "configuration": {"length_bytes": 2}}}]},
    }
    assert a.metadata["fill_value"] == {"x": "NaN", "n": 3, "q": 1.5, "tag": "eg=="}
    assert a.metadata["codecs"][0] == {"name": "bytes", "configuration": {"endian": "little"}}
    a[1:4, :2] = values[1:4, :2]
    back = zarrkit.open_array(store, mode="r")
    assert back.dtype == RECORD
    got = back[...]
    np.testing.assert_array_equal(got[1:4, :2], values[1:4, :2])
    assert got[0, 0].tobytes() == fill.tobytes()  # missing chunks: the fill value
    assert back.fill_value.tobytes() == fill.tobytes()


def test_struct_refusals():
    with pytest.raises(UnsupportedError, match="sub-array"):
        zarrkit.create_array(zarrkit.storage.MemoryStore(), shape=(2,), dtype=[("a", "<i4", (2,))])
    with pytest.raises(UnsupportedError, match="sub-byte"):
        zarrkit.create_array(zarrkit.storage.MemoryStore(), shape=(2,), dtype=[("a", ml_dtypes.int4)])
