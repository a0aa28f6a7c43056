#!/usr/bin/env python3
"""Writes the malicious-input corpus: tests/malicious/cases/<name>/ and manifest.json.

Each case is a small Zarr store (a directory holding zarr.json or .zarray, and maybe chunks)
that is wrong in one way, and a manifest entry saying what zarrkit must do with it and which
typed error it must raise. tests/malicious_test.cpp replays every entry. The generated files
are committed, so the test needs no Python; re-run this script after changing it:

    python3 tests/malicious/make_cases.py      (needs numpy and numcodecs)

Output is deterministic (no timestamps, fixed data), so re-running gives the same bytes.

Manifest actions:
  open_array       Array::open on the store root must fail.
  read_array       Array::open must succeed (the metadata is valid) and reading the whole
                   array must fail (the stored bytes are bad).
  open_or_read     Array::open, then a whole-array read: one of the two must fail (for sizes
                   that may be refused when parsed or only when used).
  open_group       Group::open on the store root must fail.
  store_get        LocalStore::get(key) on the store must fail (key given in "key").
  open_array_path  Array::open(store, path) must fail (path given in "path").
"""

import gzip
import json
import shutil
import struct
import zlib
from pathlib import Path

import numcodecs
import numpy as np

HERE = Path(__file__).resolve().parent
CASES = HERE / "cases"

manifest = []


def add(name, action, expect, why, files, **extra):
    """Writes one case directory and records it in the manifest."""
    directory = CASES / name
    directory.mkdir(parents=True)
    for relative, content in files.items():
        path = directory / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content.encode() if isinstance(content, str) else content)
    entry = {"case": name, "action": action, "expect": expect, "why": why}
    entry.update(extra)
    manifest.append(entry)


def dump(document):
    return json.dumps(document, indent=2) + "\n"


# ---- The valid arrays the cases start from --------------------------------------------------

# int32[64] in one chunk: 256 bytes, varied enough that compressors emit real streams.
DATA = ((np.arange(64, dtype=np.int64) * 2654435761) % 1000).astype("<i4")
RAW = DATA.tobytes()


def v3_array(**overrides):
    document = {
        "zarr_format": 3,
        "node_type": "array",
        "shape": [64],
        "data_type": "int32",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [64]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": 0,
        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
        "attributes": {},
    }
    document.update(overrides)
    return document


def v3_chunks(chunk_shape):
    return {"name": "regular", "configuration": {"chunk_shape": chunk_shape}}


def v2_array(**overrides):
    document = {
        "zarr_format": 2,
        "shape": [64],
        "chunks": [64],
        "dtype": "<i4",
        "fill_value": 0,
        "order": "C",
        "compressor": None,
        "filters": None,
    }
    document.update(overrides)
    return document


BYTES_LE = {"name": "bytes", "configuration": {"endian": "little"}}


def v3_with(codecs_after_bytes, **overrides):
    return v3_array(codecs=[BYTES_LE] + codecs_after_bytes, **overrides)


# ---- Helpers for corrupt chunks ---------------------------------------------------------------


def fails_to_decode(decode, data):
    """True if decoding `data` raises or yields something other than the original bytes' size."""
    try:
        out = decode(data)
    except Exception:  # noqa: BLE001 - any failure is what we want
        return True
    return len(bytes(out)) != len(RAW)


def corrupt(encoded, decode, start=None):
    """Flips one byte (xor 0x5a) at the first position from `start` (default: the middle) at
    which `decode` fails, so that the case is a corruption a decoder can detect, not one
    that silently yields other values of the right size."""
    n = len(encoded)
    first = n // 2 if start is None else start
    for k in list(range(first, n)) + list(range(0, first)):
        candidate = bytearray(encoded)
        candidate[k] ^= 0x5A
        if fails_to_decode(decode, bytes(candidate)):
            return bytes(candidate)
    raise RuntimeError("no detectable single-byte corruption found")


def gzip_bytes(data):
    return gzip.compress(data, compresslevel=6, mtime=0)


def gzip_decode(data):
    return gzip.decompress(data)


def crc32c(data):
    return bytes(numcodecs.CRC32C().encode(data))  # data + 4-byte little-endian CRC-32C


BLOSC_V2 = {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0}
BLOSC_V3 = {
    "name": "blosc",
    "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 4, "blocksize": 0},
}


def blosc_bytes(data):
    return bytes(numcodecs.Blosc(cname="lz4", clevel=5, shuffle=numcodecs.Blosc.SHUFFLE).encode(data))


def blosc_decode(data):
    return numcodecs.Blosc().decode(data)


def blosc_with_header(encoded, nbytes=None, cbytes=None):
    """Rewrites the c-blosc header: bytes 4..8 nbytes, 12..16 cbytes (little-endian)."""
    header = bytearray(encoded)
    if nbytes is not None:
        header[4:8] = struct.pack("<I", nbytes)
    if cbytes is not None:
        header[12:16] = struct.pack("<I", cbytes)
    return bytes(header)


def lz4_bytes(data):
    return bytes(numcodecs.LZ4().encode(data))  # 4-byte LE decoded size + an LZ4 block


def lz4_decode(data):
    return numcodecs.LZ4().decode(data)


def zstd_bytes(data):
    return bytes(numcodecs.Zstd(level=1).encode(data))


def zstd_decode(data):
    return numcodecs.Zstd().decode(data)


ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def zstd_raw_frame(payload, content_size=None):
    """A zstd frame holding `payload` in one raw block. With `content_size`, the header
    declares that size (which may lie); without, the frame has no content size."""
    if content_size is None:
        header = bytes([0x00, 0x38])  # no content size, not single-segment; window 2^17
    else:
        header = bytes([0xE0]) + struct.pack("<Q", content_size)  # 8-byte size, single segment
    block = struct.pack("<I", (len(payload) << 3) | 1)[:3]  # last block, type raw
    return ZSTD_MAGIC + header + block + payload


def zstd_rle_bomb(blocks, block_size=1 << 17):
    """A frame without a content size made of `blocks` RLE blocks of `block_size` zeros each:
    a few bytes per block, 128 KiB of output each."""
    out = bytearray(ZSTD_MAGIC + bytes([0x00, 0x38]))
    for i in range(blocks):
        last = 1 if i == blocks - 1 else 0
        out += struct.pack("<I", (block_size << 3) | (1 << 1) | last)[:3] + b"\x00"
    return bytes(out)


# ---- JSON pathologies (zarr.json) -------------------------------------------------------------


def json_cases():
    good = dump(v3_array())
    add("json_truncated", "open_array", "InvalidArgument", "zarr.json cut off in the middle",
        {"zarr.json": good[: len(good) // 2]})
    add("json_empty", "open_array", "InvalidArgument", "zarr.json is empty", {"zarr.json": ""})
    add("json_not_an_object", "open_array", "InvalidArgument", "zarr.json is a JSON array",
        {"zarr.json": "[3, \"array\"]\n"})
    add("json_trailing_garbage", "open_array", "InvalidArgument", "text after the JSON object",
        {"zarr.json": good + "}{\n"})
    add("json_bad_utf8", "open_array", "InvalidArgument", "an attribute string holds invalid UTF-8",
        {"zarr.json": good.replace('"attributes": {}', '"attributes": {"name": "\xff\xfe"}')
            .encode("latin-1")})
    add("json_duplicate_key", "open_array", "InvalidArgument", "\"shape\" appears twice",
        {"zarr.json": good.replace('"shape": [\n    64\n  ],', '"shape": [64], "shape": [65],')})
    add("json_number_overflow", "open_array", "InvalidArgument", "fill_value 1e400 is not a double",
        {"zarr.json": good.replace('"fill_value": 0', '"fill_value": 1e400')})
    add("json_bare_nan", "open_array", "InvalidArgument", "bare NaN token (not JSON)",
        {"zarr.json": dump(v3_array(data_type="float32")).replace('"fill_value": 0', '"fill_value": NaN')})
    depth = 10000
    add("json_deep_nesting", "open_array", "ResourceExhausted",
        f"attributes nested {depth} arrays deep (limit 64)",
        {"zarr.json": good.replace('"attributes": {}', '"attributes": {"x": ' + "[" * depth + "]" * depth + "}")})
    add("json_shape_beyond_uint64", "open_array", "InvalidArgument", "shape [2^64] does not fit uint64",
        {"zarr.json": good.replace('"shape": [\n    64\n  ]', '"shape": [18446744073709551616]')})


# ---- Wrong field types and values (v3) --------------------------------------------------------


def v3_field_cases():
    def bad(name, why, expect="InvalidArgument", **overrides):
        add("v3_" + name, "open_array", expect, why, {"zarr.json": dump(v3_array(**overrides))})

    bad("zarr_format_string", "zarr_format is the string \"3\"", zarr_format="3")
    bad("node_type_unknown", "node_type is \"table\"", node_type="table")
    bad("shape_not_a_list", "shape is a number", shape=64)
    bad("shape_string_entry", "shape holds a string", shape=["64"])
    bad("shape_null", "shape is null", shape=None)
    bad("chunk_grid_not_object", "chunk_grid is a string", chunk_grid="regular")
    bad("chunk_shape_missing", "chunk_grid has no chunk_shape",
        chunk_grid={"name": "regular", "configuration": {}})
    bad("ndim_mismatch", "chunk_shape has 2 entries for a 1-d shape", chunk_grid=v3_chunks([8, 8]))
    bad("codecs_empty", "codecs is an empty list", codecs=[])
    bad("codecs_not_list", "codecs is an object", codecs=BYTES_LE)
    bad("codecs_two_array_to_bytes", "two array->bytes codecs", codecs=[BYTES_LE, BYTES_LE])
    bad("codecs_no_array_to_bytes", "only a bytes->bytes codec",
        codecs=[{"name": "gzip", "configuration": {"level": 1}}])
    bad("codecs_wrong_order", "gzip before bytes",
        codecs=[{"name": "gzip", "configuration": {"level": 1}}, BYTES_LE])
    bad("codec_entry_number", "a codec entry is a number", codecs=[BYTES_LE, 7])
    bad("bytes_endian_bad", "bytes endian \"middle\"",
        codecs=[{"name": "bytes", "configuration": {"endian": "middle"}}])
    bad("gzip_level_out_of_range", "gzip level 42",
        codecs=[BYTES_LE, {"name": "gzip", "configuration": {"level": 42}}])
    bad("zstd_level_not_integer", "zstd level \"fast\"",
        codecs=[BYTES_LE, {"name": "zstd", "configuration": {"level": "fast"}}])
    bad("blosc_shuffle_unknown", "blosc shuffle \"sideways\"",
        codecs=[BYTES_LE, {"name": "blosc", "configuration": {
            "cname": "lz4", "clevel": 5, "shuffle": "sideways", "typesize": 4, "blocksize": 0}}])
    bad("blosc_cname_unknown", "blosc cname \"snappy2\"",
        codecs=[BYTES_LE, {"name": "blosc", "configuration": {
            "cname": "snappy2", "clevel": 5, "shuffle": "shuffle", "typesize": 4, "blocksize": 0}}])
    bad("transpose_not_permutation", "transpose order [0, 0]", shape=[4, 4],
        chunk_grid=v3_chunks([4, 4]),
        codecs=[{"name": "transpose", "configuration": {"order": [0, 0]}}, BYTES_LE])
    bad("transpose_out_of_range", "transpose order [0, 5]", shape=[4, 4],
        chunk_grid=v3_chunks([4, 4]),
        codecs=[{"name": "transpose", "configuration": {"order": [0, 5]}}, BYTES_LE])
    bad("key_separator_bad", "chunk key separator \"-\"",
        chunk_key_encoding={"name": "default", "configuration": {"separator": "-"}})
    bad("key_separator_escape", "chunk key separator \"/../\"",
        chunk_key_encoding={"name": "default", "configuration": {"separator": "/../"}})
    bad("dimension_names_wrong_length", "2 dimension names for 1 dimension", dimension_names=["x", "y"])
    bad("dimension_names_number", "a dimension name is a number", dimension_names=[1])
    bad("attributes_not_object", "attributes is a list", attributes=[1, 2])


def value_codec_cases():
    """cast_value and scale_offset: bad configurations, and stored values that cannot be decoded."""
    def bad(name, why, codecs, expect="InvalidArgument", **overrides):
        add("v3_" + name, "open_array", expect, why, {"zarr.json": dump(v3_array(codecs=codecs, **overrides))})

    def cast(**config):
        return {"name": "cast_value", "configuration": config}

    def scale_offset(**config):
        return {"name": "scale_offset", "configuration": config}

    bad("cast_value_no_data_type", "cast_value without data_type", [cast(rounding="towards-zero"), BYTES_LE])
    bad("cast_value_unknown_key", "cast_value with a key the spec reserves",
        [cast(data_type="int16", mode="fast"), BYTES_LE])
    bad("cast_value_rounding_unknown", "cast_value rounding \"up\"", [cast(data_type="int16", rounding="up"), BYTES_LE])
    bad("cast_value_out_of_range_unknown", "cast_value out_of_range \"saturate\"",
        [cast(data_type="int16", out_of_range="saturate"), BYTES_LE])
    bad("cast_value_wrap_to_float", "out_of_range \"wrap\" into float32",
        [cast(data_type="float32", out_of_range="wrap"), BYTES_LE])
    bad("cast_value_to_bool", "cast_value to bool", [cast(data_type="bool"), BYTES_LE])
    bad("cast_value_to_bfloat16", "cast_value to bfloat16 (allowed by the spec, not cast here)",
        [cast(data_type="bfloat16"), BYTES_LE], expect="Unsupported")
    bad("cast_value_scalar_map_not_pairs", "scalar_map entries are not [from, to] pairs",
        [cast(data_type="int16", scalar_map={"encode": [[1, 2, 3]]}), BYTES_LE])
    bad("cast_value_scalar_map_out_of_range", "scalar_map maps to 70000, no int16",
        [cast(data_type="int16", scalar_map={"encode": [[1, 70000]]}), BYTES_LE])
    bad("cast_value_nan_fill_to_int", "a NaN fill value into int16 without a scalar_map entry",
        [cast(data_type="int16"), BYTES_LE], data_type="float32", fill_value="NaN")
    bad("scale_offset_scale_zero", "scale_offset scale 0", [scale_offset(offset=1, scale=0), BYTES_LE])
    bad("scale_offset_fractional_offset", "scale_offset offset 0.5 on int32 data",
        [scale_offset(offset=0.5, scale=2), BYTES_LE])
    bad("scale_offset_unknown_key", "scale_offset with a key the spec reserves",
        [scale_offset(offset=1, scale=2, dtype="int32"), BYTES_LE])
    bad("scale_offset_on_strings", "scale_offset on string data",
        [scale_offset(offset=1, scale=2), {"name": "vlen-utf8"}], data_type="string", fill_value="")

    # Valid metadata, stored values that do not decode.
    chunk_key = "c/0"
    add("v3_scale_offset_remainder", "read_array", "DataLoss", "a stored int32 not a multiple of the scale",
        {"zarr.json": dump(v3_array(codecs=[scale_offset(scale=4), BYTES_LE])), chunk_key: RAW})
    add("v3_cast_value_decode_out_of_range", "read_array", "DataLoss",
        "stored int64 values beyond the int32 array type",
        {"zarr.json": dump(v3_array(codecs=[cast(data_type="int64"), BYTES_LE])),
         chunk_key: (DATA.astype("<i8") * (1 << 40)).tobytes()})


# ---- Sizes: zero, negative, fractional, huge --------------------------------------------------


def dims_cases():
    def bad(name, why, expect="InvalidArgument", action="open_array", **overrides):
        add("dims_" + name, action, expect, why, {"zarr.json": dump(v3_array(**overrides))})

    bad("chunk_zero", "chunk_shape [0]", chunk_grid=v3_chunks([0]))
    bad("chunk_negative", "chunk_shape [-8]", chunk_grid=v3_chunks([-8]))
    bad("chunk_fractional", "chunk_shape [2.5]", chunk_grid=v3_chunks([2.5]))
    bad("shape_negative", "shape [-1]", shape=[-1])
    bad("shape_fractional", "shape [3.5]", shape=[3.5])
    bad("chunk_elements_overflow", "chunk [2^32, 2^32, 2^32] of int32: 2^98 bytes",
        shape=[2**32, 2**32, 2**32], chunk_grid=v3_chunks([2**32, 2**32, 2**32]))
    bad("chunk_over_limit", "one chunk of 2^60 bytes (limit 64 GiB)", expect="ResourceExhausted",
        shape=[2**20, 2**20, 2**20], chunk_grid=v3_chunks([2**20, 2**20, 2**20]), data_type="uint8")
    bad("shape_elements_overflow", "shape [2^40, 2^40] chunks [1, 1]: 2^80 elements",
        action="open_or_read", shape=[2**40, 2**40], chunk_grid=v3_chunks([1, 1]))
    bad("shape_uint64_max", "shape [2^64-1] of uint8: reading it all cannot be allocated",
        action="open_or_read", expect="ResourceExhausted", shape=[2**64 - 1],
        chunk_grid=v3_chunks([1024]), data_type="uint8")
    ndim = 1000
    bad("huge_ndim", f"{ndim} dimensions (limit 64)", expect="ResourceExhausted",
        shape=[1] * ndim, chunk_grid=v3_chunks([1] * ndim))

    def bad_v2(name, why, expect="InvalidArgument", **overrides):
        add("dims_v2_" + name, "open_array", expect, why, {".zarray": dump(v2_array(**overrides))})

    bad_v2("chunk_zero", "chunks [0]", chunks=[0])
    bad_v2("chunk_negative", "chunks [-1]", chunks=[-1])
    bad_v2("chunk_fractional", "chunks [0.5]", chunks=[0.5])
    bad_v2("shape_negative", "shape [-64]", shape=[-64])
    bad_v2("chunk_elements_overflow", "chunks [2^62, 8] of <i4", shape=[2**62, 8], chunks=[2**62, 8])
    bad_v2("huge_ndim", "1000 dimensions (limit 64)", expect="ResourceExhausted",
           shape=[1] * 1000, chunks=[1] * 1000)


# ---- Rectilinear chunk grids (chunk sizes listed per axis, runs as [size, count]) -------------


def rectilinear(chunk_shapes, kind="inline"):
    return {"name": "rectilinear", "configuration": {"kind": kind, "chunk_shapes": chunk_shapes}}


def rectilinear_cases():
    def bad(name, why, expect="InvalidArgument", action="open_array", **overrides):
        add("rect_" + name, action, expect, why, {"zarr.json": dump(v3_array(**overrides))})

    bad("short_of_shape", "chunk sizes 30 + 30 cover 60 of the 64 elements",
        chunk_grid=rectilinear([[30, 30]]))
    bad("zero_size", "a chunk size of 0", chunk_grid=rectilinear([[32, 0, 32]]))
    bad("negative_size", "a chunk size of -8", chunk_grid=rectilinear([[72, -8]]))
    bad("bare_zero", "an axis of chunks of 0", chunk_grid=rectilinear([0]))
    bad("fractional_size", "a chunk size of 2.5", chunk_grid=rectilinear([[2.5, 61.5]]))
    bad("zero_run", "a run of 0 chunks", chunk_grid=rectilinear([[[8, 0], 64]]))
    bad("negative_run", "a run of -1 chunks", chunk_grid=rectilinear([[[8, -1], 64]]))
    bad("run_of_three", "a run of three entries", chunk_grid=rectilinear([[[8, 8, 1]]]))
    bad("absurd_run", "a run of 2^64-1 chunks of 2: the sizes sum past 64 bits",
        chunk_grid=rectilinear([[[2, 2**64 - 1]]]))
    bad("runs_overflow_sum", "two runs of 2^32-1 chunks of 2^32: the sum passes 64 bits",
        chunk_grid=rectilinear([[[2**32, 2**32 - 1], [2**32, 2**32 - 1]]]))
    bad("run_beyond_uint64", "a run count of 2^64", chunk_grid=rectilinear([[[1, 2**64]]]))
    bad("empty_axis", "an axis listing no chunks", chunk_grid=rectilinear([[]]))
    bad("wrong_rank", "two axes of chunk sizes for a 1-d shape", chunk_grid=rectilinear([[64], [64]]))
    bad("no_kind", "no kind", chunk_grid={"name": "rectilinear", "configuration": {"chunk_shapes": [[64]]}})
    bad("other_kind", "kind \"external\"", expect="Unsupported", chunk_grid=rectilinear([[64]], kind="external"))
    bad("chunk_over_limit", "one chunk of 2^40 x 2^20 uint8 (limit 64 GiB)", expect="ResourceExhausted",
        shape=[2**40, 2**20], chunk_grid=rectilinear([[2**40], 2**20]), data_type="uint8")
    # Valid metadata, and a chunk stored at a size other than the grid gives it (64 elements
    # where the first chunk holds 16): the read must fail, not copy past the chunk.
    document = v3_array(chunk_grid=rectilinear([[16, 48]]))
    add("rect_chunk_of_the_wrong_size", "read_array", "DataLoss",
        "chunk c/0 holds 64 elements, the grid gives it 16",
        {"zarr.json": dump(document), "c/0": RAW})
    # 2^64-1 chunks of 1 listed in one run: parsing costs one entry, and the grid covers the
    # shape; reading the array is refused as too large to allocate.
    add("rect_huge_run_cheap", "open_or_read", "ResourceExhausted",
        "2^64-1 chunks of 1 in one run over 2^64-1 uint8 elements",
        {"zarr.json": dump(v3_array(shape=[2**64 - 1], data_type="uint8",
                                    chunk_grid=rectilinear([[[1, 2**64 - 1]]])))})


# ---- Zarr v2 metadata ---------------------------------------------------------------------------


def v2_cases():
    def bad(name, why, expect="InvalidArgument", **overrides):
        add("v2_" + name, "open_array", expect, why, {".zarray": dump(v2_array(**overrides))})

    bad("zarr_format_wrong", "zarr_format 3 in a .zarray", zarr_format=3)
    bad("dtype_garbage", "dtype \"<x9\"", dtype="<x9")
    bad("dtype_number", "dtype is a number", dtype=4)
    bad("dtype_no_byte_order_size", "dtype \"<i3\"", dtype="<i3")
    bad("order_bad", "order \"Z\"", order="Z")
    bad("compressor_not_object", "compressor is a string", compressor="blosc")
    bad("compressor_no_id", "compressor without id", compressor={"level": 1})
    bad("compressor_unknown", "compressor id \"nosuchcodec\"", expect="Unsupported",
        compressor={"id": "nosuchcodec"})
    bad("pickle_filter", "the pickle codec (unsafe deserialization) is never supported",
        expect="Unsupported", filters=[{"id": "pickle"}])
    bad("filters_not_list", "filters is an object", filters={"id": "zlib"})
    bad("fill_value_string_for_int", "fill_value \"abc\" for <i4", fill_value="abc")
    bad("fill_value_fraction_for_int", "fill_value 1.5 for <i4", fill_value=1.5)
    bad("dimension_separator_bad", "dimension_separator \"|\"", dimension_separator="|")
    bad("dimension_separator_escape", "dimension_separator \"/../\"", dimension_separator="/../")
    bad("blosc_clevel_bad", "blosc clevel \"high\"",
        compressor={"id": "blosc", "cname": "lz4", "clevel": "high", "shuffle": 1})
    good = dump(v2_array())
    add("v2_zattrs_malformed", "open_array", "InvalidArgument", ".zattrs is not valid JSON",
        {".zarray": good, ".zattrs": "{\"a\": 1"})
    add("v2_zattrs_not_object", "open_array", "InvalidArgument", ".zattrs is a JSON list",
        {".zarray": good, ".zattrs": "[1, 2]"})
    add("v2_json_deep_nesting", "open_array", "ResourceExhausted", ".zarray nested 10000 deep",
        {".zarray": good.replace('"filters": null', '"filters": ' + "[" * 10000 + "]" * 10000)})
    add("v2_zgroup_malformed", "open_group", "InvalidArgument", ".zgroup is not valid JSON",
        {".zgroup": "{\"zarr_format\": 2,"})
    add("v2_zgroup_bad_format", "open_group", "InvalidArgument", ".zgroup with zarr_format \"2\"",
        {".zgroup": dump({"zarr_format": "2"})})
    add("v3_group_bad_node_type", "open_group", "InvalidArgument", "group zarr.json with node_type 7",
        {"zarr.json": dump({"zarr_format": 3, "node_type": 7, "attributes": {}})})


# ---- Bad fill values (v3) -------------------------------------------------------------------


def fill_cases():
    def bad(name, why, data_type, fill_value):
        add("fill_" + name, "open_array", "InvalidArgument", why,
            {"zarr.json": dump(v3_array(data_type=data_type, fill_value=fill_value))})

    bad("uint8_256", "256 for uint8", "uint8", 256)
    bad("int8_negative_129", "-129 for int8", "int8", -129)
    bad("int32_fraction", "1.5 for int32", "int32", 1.5)
    bad("int32_fraction_zero", "1000.0 for int32 (no fraction allowed)", "int32", 1000.0)
    add("fill_int32_exponent", "open_array", "InvalidArgument", "1e3 for int32 (no exponent allowed)",
        {"zarr.json": dump(v3_array(fill_value=12345)).replace("12345", "1e3")})
    bad("int32_string", "\"7\" for int32", "int32", "7")
    bad("uint64_beyond", "2^64 for uint64", "uint64", 2**64)
    bad("bool_number", "1 for bool", "bool", 1)
    bad("float_lowercase_nan", "\"nan\" for float32", "float32", "nan")
    bad("float_hex_short", "\"0x7fc0\" for float32 (needs 8 hex digits)", "float32", "0x7fc0")
    bad("float_hex_not_hex", "\"0xZZZZZZZZ\" for float32", "float32", "0xZZZZZZZZ")
    bad("float_null", "null for float32 (not allowed in v3)", "float32", None)
    bad("float_object", "an object for float64", "float64", {"value": 1})
    bad("complex_one_part", "[1.0] for complex64", "complex64", [1.0])
    bad("raw_bits_wrong_length", "[0] for r16 (needs 2 bytes)", "r16", [0])
    bad("raw_bits_byte_range", "[0, 300] for r16", "r16", [0, 300])


# ---- Codecs and must_understand ---------------------------------------------------------------


def must_understand_cases():
    def bad(name, why, expect, document):
        add("mu_" + name, "open_array", expect, why, {"zarr.json": dump(document)})

    bad("unknown_codec", "codec \"nosuchcodec\"", "Unsupported",
        v3_with([{"name": "nosuchcodec", "configuration": {}}]))
    bad("unknown_codec_must_understand_true", "codec \"nosuchcodec\" with must_understand true",
        "Unsupported", v3_with([{"name": "nosuchcodec", "must_understand": True}]))
    bad("unknown_top_level_field", "unknown top-level field (must_understand defaults to true)",
        "Unsupported", v3_array(future_feature={"enabled": True}))
    bad("unknown_field_must_understand_true", "unknown field with must_understand true",
        "Unsupported", v3_array(future_feature={"must_understand": True}))
    bad("unknown_data_type", "data_type \"float128\"", "Unsupported", v3_array(data_type="float128"))
    bad("data_type_must_understand_false", "must_understand false is not allowed on a data type",
        "InvalidArgument", v3_array(data_type={"name": "float128", "must_understand": False}))
    bad("unknown_chunk_grid", "chunk_grid \"irregular\"", "Unsupported",
        v3_array(chunk_grid={"name": "irregular", "configuration": {"chunk_shapes": [[64]]}}))
    bad("chunk_grid_must_understand_false", "must_understand false is not allowed on a chunk grid",
        "InvalidArgument",
        v3_array(chunk_grid={"name": "rectilinear", "must_understand": False,
                             "configuration": {"chunk_shapes": [[64]]}}))
    bad("unknown_key_encoding", "chunk_key_encoding \"hilbert\"", "Unsupported",
        v3_array(chunk_key_encoding={"name": "hilbert"}))
    bad("unknown_storage_transformer", "storage transformer \"encrypt\"", "Unsupported",
        v3_array(storage_transformers=[{"name": "encrypt", "configuration": {}}]))


# ---- Corrupt, truncated and oversized chunks ---------------------------------------------------


def chunk_cases():
    def read_v3(name, why, codecs, chunk, expect="DataLoss", **overrides):
        add("chunk_" + name, "read_array", expect, why,
            {"zarr.json": dump(v3_array(codecs=codecs, **overrides)), "c/0": chunk})

    def read_v2(name, why, compressor, chunk, expect="DataLoss", **overrides):
        add("chunk_" + name, "read_array", expect, why,
            {".zarray": dump(v2_array(compressor=compressor, **overrides)), "0": chunk})

    gzip_codecs = [BYTES_LE, {"name": "gzip", "configuration": {"level": 6}}]
    encoded = gzip_bytes(RAW)
    read_v3("gzip_truncated", "gzip stream cut in half", gzip_codecs, encoded[: len(encoded) // 2])
    read_v3("gzip_bitflip", "one byte of the deflate payload flipped (CRC/stream error)", gzip_codecs,
            corrupt(encoded, gzip_decode))
    read_v3("gzip_trailer_crc", "the gzip trailer's CRC-32 is wrong", gzip_codecs,
            encoded[:-8] + bytes(b ^ 0xFF for b in encoded[-8:-4]) + encoded[-4:])
    read_v3("gzip_bomb", "gzip of 16 MiB of zeros for a 256-byte chunk", gzip_codecs,
            gzip_bytes(bytes(16 << 20)))
    read_v3("gzip_too_short_output", "valid gzip of 128 bytes for a 256-byte chunk", gzip_codecs,
            gzip_bytes(RAW[:128]))

    zstd_codecs = [BYTES_LE, {"name": "zstd", "configuration": {"level": 1, "checksum": False}}]
    encoded = zstd_bytes(RAW)
    read_v3("zstd_truncated", "zstd frame cut in half", zstd_codecs, encoded[: len(encoded) // 2])
    read_v3("zstd_bitflip", "one byte of the zstd frame flipped", zstd_codecs, corrupt(encoded, zstd_decode))
    read_v3("zstd_bad_magic", "the zstd magic number is wrong", zstd_codecs, b"\x00" + encoded[1:])
    read_v3("zstd_huge_content_size", "frame header declares 2^40 bytes for a 256-byte chunk",
            zstd_codecs, zstd_raw_frame(RAW, content_size=1 << 40))
    read_v3("zstd_content_size_short", "a valid frame of 128 bytes for a 256-byte chunk", zstd_codecs,
            zstd_raw_frame(RAW[:128], content_size=128))
    read_v3("zstd_bomb_no_content_size", "frame without content size expanding to 256 MiB",
            zstd_codecs, zstd_rle_bomb(2048))
    read_v3("zstd_empty", "an empty chunk file", zstd_codecs, b"")

    encoded = blosc_bytes(RAW)
    read_v2("blosc_truncated", "blosc chunk cut in half", BLOSC_V2, encoded[: len(encoded) // 2])
    read_v2("blosc_bitflip", "one byte of the blosc payload flipped", BLOSC_V2,
            corrupt(encoded, blosc_decode, start=16))
    read_v2("blosc_cbytes_exceeds_chunk", "header cbytes larger than the chunk file", BLOSC_V2,
            blosc_with_header(encoded, cbytes=len(encoded) + 1000))
    read_v2("blosc_nbytes_huge", "header nbytes 2 GiB for a 256-byte chunk", BLOSC_V2,
            blosc_with_header(encoded, nbytes=0x7FFFFFF0))
    read_v2("blosc_nbytes_smaller", "header nbytes 128 for a 256-byte chunk", BLOSC_V2,
            blosc_bytes(RAW[:128]))
    read_v2("blosc_header_only", "a 16-byte header claiming 256 bytes and nothing else", BLOSC_V2,
            blosc_with_header(encoded[:16], cbytes=16))
    read_v2("blosc_short_header", "10 bytes, shorter than a blosc header", BLOSC_V2, encoded[:10])
    read_v3("blosc_v3_bitflip", "v3 blosc: one byte of the payload flipped", [BYTES_LE, BLOSC_V3],
            corrupt(encoded, blosc_decode, start=16))
    read_v3("blosc_v3_nbytes_mismatch", "v3 blosc: header nbytes 4096 for a 256-byte chunk",
            [BYTES_LE, BLOSC_V3], blosc_bytes(bytes(4096)))

    lz4 = {"id": "lz4", "acceleration": 1}
    encoded = lz4_bytes(RAW)
    read_v2("lz4_truncated", "lz4 block cut in half", lz4, encoded[: len(encoded) // 2])
    read_v2("lz4_bitflip", "one byte of the lz4 block flipped", lz4, corrupt(encoded, lz4_decode, start=4))
    read_v2("lz4_size_huge", "lz4 size prefix 2 GiB for a 256-byte chunk", lz4,
            struct.pack("<I", 0x7FFFFFF0) + encoded[4:])
    read_v2("lz4_bomb", "a block that expands past the 256 bytes its prefix claims", lz4,
            struct.pack("<I", len(RAW)) + lz4_bytes(bytes(1 << 20))[4:])
    read_v2("lz4_short_prefix", "3 bytes: not even the size prefix", lz4, encoded[:3])

    read_v2("zlib_truncated", "zlib stream cut in half", {"id": "zlib", "level": 1},
            zlib.compress(RAW)[:20])
    read_v2("bz2_truncated", "bz2 stream cut in half", {"id": "bz2", "level": 9},
            bytes(numcodecs.BZ2(level=9).encode(RAW))[:40])

    crc_codecs = [BYTES_LE, {"name": "crc32c"}]
    encoded = crc32c(RAW)
    read_v3("crc32c_mismatch", "one data byte changed under the crc32c", crc_codecs,
            bytes([encoded[0] ^ 1]) + encoded[1:])
    read_v3("crc32c_wrong_checksum", "the stored checksum is wrong", crc_codecs,
            encoded[:-4] + bytes(b ^ 0xFF for b in encoded[-4:]))
    read_v3("crc32c_short_input", "3 bytes: shorter than the 4-byte checksum", crc_codecs, encoded[:3])
    read_v3("crc32c_empty", "an empty chunk under crc32c", crc_codecs, b"")
    read_v3("crc32c_checksum_only", "only a (valid) checksum of nothing: 0 of 256 bytes", crc_codecs,
            crc32c(b""))

    read_v3("raw_short", "uncompressed chunk of 255 bytes for 256", [BYTES_LE], RAW[:-1])
    read_v3("raw_long", "uncompressed chunk of 257 bytes for 256", [BYTES_LE], RAW + b"\x00")
    read_v2("v2_raw_short", "v2 uncompressed chunk of 100 bytes for 256", None, RAW[:100])


# ---- Sharding: geometry and shard index entries ----------------------------------------------------

SHARD_INNER = 16  # int32[64] in one shard of 4 inner chunks of 16 elements (64 bytes each)


def sharding_codec(chunk_shape=None, index_location="end", index_codecs=None, codecs=None):
    return {"name": "sharding_indexed", "configuration": {
        "chunk_shape": chunk_shape or [SHARD_INNER],
        "codecs": [BYTES_LE] if codecs is None else codecs,
        "index_codecs": index_codecs or [BYTES_LE, {"name": "crc32c"}],
        "index_location": index_location,
    }}


def shard_bytes(entries=None, payload=RAW, corrupt_crc=False):
    """A shard with the index at the end: `payload` then (offset, nbytes) per inner chunk as
    little-endian uint64, then the CRC-32C of the index. `entries` overrides the index."""
    if entries is None:
        entries = [(i * SHARD_INNER * 4, SHARD_INNER * 4) for i in range(len(RAW) // (SHARD_INNER * 4))]
    index = b"".join(struct.pack("<QQ", offset, nbytes) for offset, nbytes in entries)
    checked = crc32c(index)
    if corrupt_crc:
        checked = checked[:-4] + bytes(b ^ 0xFF for b in checked[-4:])
    return payload + checked


def shard_cases():
    def read(name, why, shard, expect="DataLoss", **codec):
        add("shard_" + name, "read_array", expect, why,
            {"zarr.json": dump(v3_array(codecs=[sharding_codec(**codec)])), "c/0": shard})

    def bad(name, why, expect="InvalidArgument", **codec):
        add("shard_" + name, "open_array", expect, why,
            {"zarr.json": dump(v3_array(codecs=[sharding_codec(**codec)]))})

    n = len(RAW) // (SHARD_INNER * 4)
    read("index_crc_mismatch", "the shard index checksum is wrong", shard_bytes(corrupt_crc=True))
    read("truncated_index", "shard shorter than its 68-byte index", shard_bytes()[-40:])
    read("entry_past_end", "an inner chunk's offset + nbytes runs past the shard",
         shard_bytes(entries=[(0, 64), (64, 64), (128, 64), (192, 4096)]))
    read("entry_offset_overflow", "offset 2^64-16 + nbytes 64 overflows 64 bits",
         shard_bytes(entries=[(0, 64), (2**64 - 16, 64), (128, 64), (192, 64)]))
    read("entry_nbytes_huge", "nbytes 2^40 for a 64-byte inner chunk",
         shard_bytes(entries=[(0, 64), (64, 2**40), (128, 64), (192, 64)]))
    read("entry_half_empty", "offset 2^64-1 (empty) with a real nbytes",
         shard_bytes(entries=[(0, 64), (2**64 - 1, 64), (128, 64), (192, 64)]))
    read("entry_half_empty_nbytes", "nbytes 2^64-1 (empty) with a real offset",
         shard_bytes(entries=[(0, 64), (64, 2**64 - 1), (128, 64), (192, 64)]))
    read("truncated_index_start", "index at the start, shard of 40 bytes for a 68-byte index",
         shard_bytes()[:40], index_location="start")
    start_entries = [(68, 64), (132, 64), (196, 64), (260, 4096)]  # offsets count the index
    read("start_entry_past_end", "index at the start, the last inner chunk runs past the shard",
         crc32c(b"".join(struct.pack("<QQ", o, b) for o, b in start_entries)) + RAW, index_location="start")
    read("entry_wrong_size", "a raw inner chunk of 32 bytes where 64 are needed",
         shard_bytes(entries=[(0, 64), (64, 32), (128, 64), (192, 64)]))
    read("empty_file", "an empty shard file", b"")
    assert n == 4
    bad("inner_not_dividing", "inner chunk [24] does not divide the shard [64]", chunk_shape=[24])
    bad("inner_zero", "inner chunk_shape [0]", chunk_shape=[0])
    bad("inner_ndim_mismatch", "inner chunk_shape [4, 4] for a 1-d array", chunk_shape=[4, 4])
    bad("index_location_bad", "index_location \"middle\"", index_location="middle")
    bad("index_codecs_compressed", "index_codecs must be fixed-size (gzip is not)",
        index_codecs=[BYTES_LE, {"name": "gzip", "configuration": {"level": 1}}])
    bad("inner_codecs_empty", "inner codecs list is empty", codecs=[])
    nested = [BYTES_LE]
    for _ in range(20):
        nested = [sharding_codec(chunk_shape=[SHARD_INNER], codecs=nested)]
    add("shard_nesting_too_deep", "open_array", "ResourceExhausted", "sharding nested 20 levels deep",
        {"zarr.json": dump(v3_array(codecs=nested))})


# ---- Variable-length strings and bytes (vlen-utf8, vlen-bytes) ---------------------------------


def vlen_items(items):
    """numcodecs' framing: a uint32 count, then a uint32 length and the bytes of each item."""
    return struct.pack("<I", len(items)) + b"".join(struct.pack("<I", len(i)) + i for i in items)


def vlen_cases():
    strings = dict(data_type="string", fill_value="", shape=[4], chunk_grid=v3_chunks([4]),
                   codecs=[{"name": "vlen-utf8", "configuration": {}}])

    def read(name, why, chunk, expect="DataLoss", **overrides):
        add("vlen_" + name, "read_array", expect, why,
            {"zarr.json": dump(v3_array(**{**strings, **overrides})), "c/0": chunk})

    good = vlen_items([b"a", b"bb", b"", "é".encode()])
    assert numcodecs.VLenUTF8().decode(good).tolist() == ["a", "bb", "", "é"]
    read("count_absurd", "item count 2^32-1 for a 4-element chunk", b"\xff\xff\xff\xff" + good[4:])
    read("count_small", "item count 3 for a 4-element chunk", struct.pack("<I", 3) + good[4:])
    read("count_without_items", "the right count of 4 and nothing after it", struct.pack("<I", 4))
    read("length_absurd", "item 0 claims 2^32-16 bytes", good[:4] + struct.pack("<I", 0xFFFFFFF0) + good[8:])
    read("truncated", "the last item cut short", good[:-1])
    read("header_truncated", "2 bytes: not even the item count", good[:2])
    read("empty", "an empty chunk file", b"")
    read("trailing_bytes", "a byte after the last item", good + b"\x00")
    read("invalid_utf8", "vlen-utf8 item that is not UTF-8", vlen_items([b"a", b"\xff\xfe", b"", b""]))
    read("zstd_bomb", "zstd frame of 8 MiB (no content size) for 4 short strings",
         zstd_rle_bomb(64), codecs=strings["codecs"] + [{"name": "zstd", "configuration": {"level": 0}}])
    read("bytes_count_absurd", "vlen-bytes item count 2^31 for a 4-element chunk",
         struct.pack("<I", 1 << 31) + good[4:], data_type="variable_length_bytes",
         codecs=[{"name": "vlen-bytes", "configuration": {}}])
    add("vlen_v2_count_absurd", "read_array", "DataLoss", "v2 object array: item count 2^32-1",
        {".zarray": dump(v2_array(dtype="|O", fill_value="", shape=[4], chunks=[4],
                                  filters=[{"id": "vlen-utf8"}])),
         "0": b"\xff\xff\xff\xff" + good[4:]})
    add("vlen_chunk_elements_huge", "open_or_read", "ResourceExhausted",
        "string chunks of 2^40 elements (no fixed size bounds them when parsed)",
        {"zarr.json": dump(v3_array(**{**strings, "shape": [1 << 40], "chunk_grid": v3_chunks([1 << 40])}))})

    def bad(name, why, expect="InvalidArgument", **overrides):
        add("vlen_" + name, "open_array", expect, why, {"zarr.json": dump(v3_array(**{**strings, **overrides}))})

    bad("string_with_bytes_codec", "a string array serialised by the bytes codec", expect="Unsupported",
        codecs=[BYTES_LE])
    bad("int_with_vlen_codec", "an int32 array serialised by vlen-utf8", data_type="int32", fill_value=0)
    bad("utf8_codec_for_bytes", "a bytes array serialised by vlen-utf8", data_type="variable_length_bytes")
    bad("fill_number", "fill_value 5 for a string array", fill_value=5)
    bad("bytes_fill_not_base64", "fill_value \"not base64!\" for variable_length_bytes",
        data_type="variable_length_bytes", fill_value="not base64!",
        codecs=[{"name": "vlen-bytes", "configuration": {}}])

    def bad_v2(name, why, expect="InvalidArgument", **overrides):
        add("vlen_v2_" + name, "open_array", expect, why,
            {".zarray": dump(v2_array(**{"dtype": "|O", "fill_value": "", **overrides}))})

    bad_v2("object_without_filters", "dtype \"|O\" with no object codec")
    bad_v2("object_json2", "dtype \"|O\" with the json2 object codec", expect="Unsupported",
           filters=[{"id": "json2"}])
    bad_v2("object_pickle", "dtype \"|O\" with pickle (never supported)", expect="Unsupported",
           filters=[{"id": "pickle"}])
    bad_v2("object_codec_not_first", "vlen-utf8 after another filter", expect="Unsupported",
           filters=[{"id": "zlib", "level": 1}, {"id": "vlen-utf8"}])
    bad_v2("vlen_for_numbers", "vlen-utf8 as a filter of an <i4 array", expect="Unsupported", dtype="<i4",
           fill_value=0, filters=[{"id": "vlen-utf8"}])


# ---- Keys and paths that try to leave the store --------------------------------------------------


def key_cases():
    store = {"zarr.json": dump(v3_array()), "c/0": RAW}
    add("store_keys", "store_get", "InvalidArgument", "parent directory: ../", store,
        key="../manifest.json", id="store_keys_parent")
    for suffix, key, why in [
        ("nested_parent", "c/../../manifest.json", "a .. segment inside the key"),
        ("absolute", "/etc/passwd", "an absolute key"),
        ("backslash", "c\\0", "a backslash (a Windows separator)"),
        ("backslash_parent", "..\\manifest.json", "backslash parent escape"),
        ("nul", "c/0\u0000.txt", "a NUL byte inside the key"),
        ("empty", "", "the empty key"),
        ("dot", "c/./0", "a . segment"),
        ("empty_segment", "c//0", "an empty segment"),
        ("trailing_slash", "c/0/", "a trailing slash"),
    ]:
        manifest.append({"case": "store_keys", "action": "store_get", "expect": "InvalidArgument",
                         "why": why, "key": key, "id": "store_keys_" + suffix})
    for suffix, path, why in [
        ("parent", "../store_keys", "array path leaving the store"),
        ("absolute_parent", "/../store_keys", "absolute array path leaving the store"),
        ("nul", "a\u0000b", "NUL in the array path"),
        ("backslash", "..\\x", "backslash in the array path"),
    ]:
        manifest.append({"case": "store_keys", "action": "open_array_path", "expect": "InvalidArgument",
                         "why": why, "path": path, "id": "open_path_" + suffix})
    # A leading '/' names the store root, as in zarr-python: it stays inside the store.
    manifest.append({"case": "store_keys", "action": "open_array_path", "expect": "NotFound",
                     "why": "an absolute node path is relative to the store root; nothing there",
                     "path": "/tmp", "id": "open_path_absolute"})


def main():
    if CASES.exists():
        shutil.rmtree(CASES)
    CASES.mkdir()
    json_cases()
    v3_field_cases()
    value_codec_cases()
    dims_cases()
    rectilinear_cases()
    v2_cases()
    fill_cases()
    must_understand_cases()
    chunk_cases()
    shard_cases()
    vlen_cases()
    key_cases()
    for entry in manifest:
        entry.setdefault("id", entry["case"])
    ids = [entry["id"] for entry in manifest]
    assert len(ids) == len(set(ids)), "duplicate case ids"
    (HERE / "manifest.json").write_text(json.dumps({"cases": manifest}, indent=1) + "\n")
    print(f"wrote {len(manifest)} cases in {len(list(CASES.iterdir()))} directories")


if __name__ == "__main__":
    main()
