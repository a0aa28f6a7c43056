"""zarrkit's codec pipeline inside zarr-python, against zarr-python's own pipeline.

Each case writes and reads the same data through zarr-python twice, once per pipeline,
and requires identical stored bytes and identical reads, and that zarrkit's codecs (not
the fallback) did the work where zarrkit supports the codecs.
"""

from __future__ import annotations

import numcodecs
import numpy as np
import pytest
import zarr
import zarr.codecs as zc

from zarrkit import zarr_pipeline

OURS = "zarrkit.zarr_pipeline.ZarrkitCodecPipeline"
DEFAULT = "zarr.core.codec_pipeline.BatchedCodecPipeline"
ZARR_34 = tuple(int(part) for part in zarr.__version__.split(".")[:2]) >= (3, 4)

V3_CODECS = {
    "default": {},
    "none": {"compressors": None},
    "gzip": {"compressors": zc.GzipCodec(level=4)},
    "blosc-lz4": {"compressors": zc.BloscCodec(cname="lz4", clevel=5, shuffle="bitshuffle")},
    "zstd-crc32c": {"compressors": [zc.ZstdCodec(level=3, checksum=True), zc.Crc32cCodec()]},
    "transpose-bigendian": {
        "filters": [zc.TransposeCodec(order=(1, 0))],
        "serializer": zc.BytesCodec(endian="big"),
    },
    "sharded": {"shards": (20, 24), "chunks": (5, 6)},
    "sharded-gzip": {"shards": (20, 24), "chunks": (10, 8), "compressors": zc.GzipCodec()},
}

V2_CODECS = {
    "default": {},
    "zlib": {"compressors": numcodecs.Zlib(level=2)},
    "blosc-shuffle": {"compressors": numcodecs.Blosc(cname="zstd", shuffle=numcodecs.Blosc.SHUFFLE)},
    "delta-F": {"filters": [numcodecs.Delta(dtype="<i4")], "order": "F"},
    "none": {"compressors": None},
}


def write_and_read(path, pipeline, zarr_format, dtype, kwargs):
    data = (np.arange(40 * 48).reshape(40, 48) % 251).astype(dtype)
    options = {"chunks": (10, 12), **kwargs}
    with zarr.config.set({"codec_pipeline.path": pipeline}):
        a = zarr.create_array(path, shape=data.shape, dtype=dtype, zarr_format=zarr_format, fill_value=0, **options)
        a[:] = data
        a[3:17, 5:40] = 1  # partial chunk writes: read-modify-write
        a[30:, :] = 0  # chunks that become empty are removed
        out = zarr.open_array(path, mode="r")[:]
        sub = zarr.open_array(path, mode="r")[7:33:3, ::5]
    return out, sub


def stored(path):
    return {
        p.relative_to(path).as_posix(): p.read_bytes()
        for p in sorted(path.rglob("*"))
        if p.is_file()
    }


@pytest.mark.parametrize("dtype", ["i4", "f8", "u1"])
@pytest.mark.parametrize("case", sorted(V3_CODECS))
def test_v3_parity(tmp_path, case, dtype):
    before = dict(zarr_pipeline.stats)
    ours = write_and_read(tmp_path / "ours.zarr", OURS, 3, dtype, V3_CODECS[case])
    assert zarr_pipeline.stats["encoded"] > before["encoded"]
    assert zarr_pipeline.stats["decoded"] > before["decoded"]
    assert zarr_pipeline.stats["fallback_encoded"] == before["fallback_encoded"]
    assert zarr_pipeline.stats["fallback_decoded"] == before["fallback_decoded"]
    theirs = write_and_read(tmp_path / "theirs.zarr", DEFAULT, 3, dtype, V3_CODECS[case])
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_array_equal(a, b)
        assert a.dtype == b.dtype
    ours_bytes, theirs_bytes = stored(tmp_path / "ours.zarr"), stored(tmp_path / "theirs.zarr")
    if "gzip" in case:
        # gzip headers carry a time stamp (zarr-python's the current time, zarrkit's 0):
        # the same keys and the same reads are all that can match.
        assert ours_bytes.keys() == theirs_bytes.keys()
        assert ours_bytes["zarr.json"] == theirs_bytes["zarr.json"]
    else:
        assert ours_bytes == theirs_bytes


# The Delta filter is configured for <i4, so it is tested with that dtype only.
V2_CASES = [(case, dtype) for case in sorted(V2_CODECS) for dtype in ("<i4", ">f8") if case != "delta-F" or dtype == "<i4"]


@pytest.mark.parametrize(("case", "dtype"), V2_CASES)
def test_v2_parity(tmp_path, case, dtype):
    before = dict(zarr_pipeline.stats)
    ours = write_and_read(tmp_path / "ours.zarr", OURS, 2, dtype, V2_CODECS[case])
    assert zarr_pipeline.stats["decoded"] > before["decoded"]
    assert zarr_pipeline.stats["fallback_decoded"] == before["fallback_decoded"]
    theirs = write_and_read(tmp_path / "theirs.zarr", DEFAULT, 2, dtype, V2_CODECS[case])
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_array_equal(a, b)
        assert a.dtype == b.dtype
    ours_bytes, theirs_bytes = stored(tmp_path / "ours.zarr"), stored(tmp_path / "theirs.zarr")
    assert ours_bytes.keys() == theirs_bytes.keys()
    # Compressed bytes may differ between library versions; what they decode to may not.
    for key in ours_bytes:
        if key.endswith((".zarray", ".zattrs", ".zgroup")):
            assert ours_bytes[key] == theirs_bytes[key]


# NumPy casts datetime64/timedelta64 of the generic unit between byte orders without
# swapping the bytes, and cannot print a structured value holding one: zarr-python 3.4.2's
# test_generic_time_array_roundtrip failed with zarrkit's pipeline on both (wrong values
# for big-endian arrays, ValueError for structured ones).
@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize("structured", [False, True], ids=["plain", "structured"])
@pytest.mark.parametrize("kind", ["M8", "m8"])
@pytest.mark.parametrize("byteorder", ["<", ">"], ids=["little", "big"])
def test_generic_time_units_in_either_byte_order(tmp_path, zarr_format, structured, kind, byteorder):
    if not ZARR_34 and (zarr_format == 2 or kind == "M8"):
        pytest.skip("zarr-python < 3.4 cannot create or open these arrays itself (its fill value "
                    "parser fails on a scaled generic unit)")
    leaf = np.dtype(f"{byteorder}{kind}[3generic]")
    dtype = np.dtype([("time", leaf)]) if structured else leaf
    counts = np.array([0, 1, -2, 100, 7], dtype=f"{byteorder}i8")
    data = counts.view(dtype)
    reads = {}
    for name, pipeline in (("ours", OURS), ("theirs", DEFAULT)):
        before = dict(zarr_pipeline.stats)
        with zarr.config.set({"codec_pipeline.path": pipeline}):
            a = zarr.create_array(tmp_path / f"{name}.zarr", data=data, chunks=2,
                                  zarr_format=zarr_format, compressors=None)
            a[1:3] = data[3:5]  # a partial write: read, merge, encode
            out = np.asarray(zarr.open_array(tmp_path / f"{name}.zarr", mode="r")[:])
        if pipeline == OURS:
            # v2 too: zarrkit reads the unit zarr-python 3.4 writes as "[3generic]".
            assert zarr_pipeline.stats["encoded"] > before["encoded"]
            assert zarr_pipeline.stats["decoded"] > before["decoded"]
            assert zarr_pipeline.stats["fallback_encoded"] == before["fallback_encoded"]
        values = out["time"] if structured else out
        reads[name] = values.view(values.dtype.str[0] + "i8").astype("i8")
    expected = counts.astype("i8")
    expected[1:3] = counts[3:5]
    np.testing.assert_array_equal(reads["ours"], expected)
    if ZARR_34:
        # zarr-python 3.1's own pipeline writes and reads big-endian ones wrong (the cast
        # above), so only 3.4's is a reference.
        np.testing.assert_array_equal(reads["ours"], reads["theirs"])
        assert stored(tmp_path / "ours.zarr") == stored(tmp_path / "theirs.zarr")


def test_fallback_for_variable_length_strings(tmp_path):
    data = np.array(["a", "bb", "", "dddd"], dtype=object)
    before = dict(zarr_pipeline.stats)
    with zarr.config.set({"codec_pipeline.path": OURS}):
        a = zarr.create_array(tmp_path / "s.zarr", shape=(4,), dtype=str, chunks=(2,))
        a[:] = data
        np.testing.assert_array_equal(a[:], data.astype(str))
    assert zarr_pipeline.stats["fallback_encoded"] > before["fallback_encoded"]
    assert zarr_pipeline.stats["encoded"] == before["encoded"]


def test_corrupt_chunk_raises_zarr_pythons_error(tmp_path):
    with zarr.config.set({"codec_pipeline.path": OURS}):
        a = zarr.create_array(tmp_path / "c.zarr", shape=(8,), chunks=(4,), dtype="i4",
                              compressors=[zc.Crc32cCodec()])
        a[:] = np.arange(8)
        chunk = tmp_path / "c.zarr" / "c" / "0"
        raw = bytearray(chunk.read_bytes())
        raw[0] ^= 0xFF
        chunk.write_bytes(bytes(raw))
        with zarr.config.set({"codec_pipeline.path": DEFAULT}):
            with pytest.raises(Exception) as expected:
                zarr.open_array(tmp_path / "c.zarr", mode="r")[:]
        with pytest.raises(type(expected.value)):
            zarr.open_array(tmp_path / "c.zarr", mode="r")[:]
        np.testing.assert_array_equal(zarr.open_array(tmp_path / "c.zarr", mode="r")[4:], np.arange(4, 8))


def test_pipeline_is_found_by_its_path():
    from zarr.registry import get_pipeline_class

    with zarr.config.set({"codec_pipeline.path": OURS}):
        assert get_pipeline_class() is zarr_pipeline.ZarrkitCodecPipeline


@pytest.mark.parametrize("shards", [None, (16, 16, 16)])
def test_uncompressed_chunks_outlive_their_input(shards):
    # Without compressors the bytes codec returns the chunk's own memory; the encoded
    # chunk must not point into the temporary array zarr-python hands over (it once did,
    # and the stored chunks were garbage once that memory was reused).
    data = np.arange(16**3, dtype="uint16").reshape(16, 16, 16)
    with zarr.config.set({"codec_pipeline.path": OURS}):
        a = zarr.create_array(
            zarr.storage.MemoryStore(), shape=data.shape, chunks=(1, 16, 16), shards=shards,
            dtype=data.dtype, fill_value=0, compressors=None,
        )
        a[:] = np.asfortranarray(data)
        garbage = [np.full(4096, 0xABCD, dtype="uint16") for _ in range(64)]  # reuse freed memory
        for x in range(16):
            np.testing.assert_array_equal(a[x], data[x])
    del garbage


def test_a_users_codec_implementation_runs(tmp_path):
    # zarr.config's "codecs.<name>" may name a user's class for a codec: zarr-python must
    # run it, so chains that hold one are not taken over by zarrkit.
    calls = []

    class CountingGzip(zc.GzipCodec):
        async def _encode_single(self, chunk_bytes, chunk_spec):
            calls.append(1)
            return await super()._encode_single(chunk_bytes, chunk_spec)

    zarr.registry.register_codec("gzip", CountingGzip)
    counting = zarr.registry.fully_qualified_name(CountingGzip)
    with zarr.config.set({"codec_pipeline.path": OURS, "codecs.gzip": counting}):
        a = zarr.create_array(tmp_path / "a.zarr", shape=(20,), chunks=(5,), dtype="i4",
                              compressors=[{"name": "gzip", "configuration": {"level": 1}}])
        a[:] = np.arange(20)
        np.testing.assert_array_equal(a[:], np.arange(20))
    assert len(calls) == 4


# ---- The GPU read path's logic, run in host memory ---------------------------------------------
# tests/python/test_zarr_pipeline_gpu.py runs it on a GPU; here the same code (fetch, stacked
# array, scatter with zarr-python's indexing) runs with host buffers, so that every machine
# checks the stacking of chunks, their keys, fill values and selections.

GPU_PATH_SELECTIONS = {
    "all": lambda a: a[...],
    "slices": lambda a: a[3:37:2, 5:],
    "int-axis": lambda a: a[7, :],
    "oindex": lambda a: a.oindex[[0, 5, 39], [1, 2, 47]],
    "vindex": lambda a: a.vindex[[0, 5, 39], [1, 2, 47]],
    "mask": lambda a: a.vindex[(np.arange(40 * 48).reshape(40, 48) % 7) == 0],
}
GPU_PATH_CASES = [(3, n, k) for n, k in V3_CODECS.items()] + [(2, n, k) for n, k in V2_CODECS.items()]


@pytest.mark.parametrize("zarr_format,name,kwargs", GPU_PATH_CASES, ids=[f"v{f}-{n}" for f, n, _ in GPU_PATH_CASES])
@pytest.mark.parametrize("selection", sorted(GPU_PATH_SELECTIONS))
@pytest.mark.parametrize("where", ["local", "zarr-memory"])
def test_device_read_path_in_host_memory(tmp_path, monkeypatch, zarr_format, name, kwargs, selection, where):
    # "local": zarrkit reads the chunk files itself; "zarr-memory": a store zarrkit cannot
    # open, whose chunks come through zarr-python. Host memory stands for the device here.
    from zarrkit import _zarr_gpu_read

    path = tmp_path / "a.zarr" if where == "local" else zarr.storage.MemoryStore()
    data = (np.arange(40 * 48).reshape(40, 48) % 251).astype("i4") - 100
    a = zarr.create_array(path, shape=data.shape, dtype="i4", zarr_format=zarr_format, fill_value=-1,
                          **{"chunks": (10, 12), **kwargs})
    a[:] = data
    a[30:, :] = -1  # not stored: read as the fill value
    data[30:, :] = -1
    pick = GPU_PATH_SELECTIONS[selection]
    expected = pick(zarr.open_array(path, mode="r"))  # zarr-python's own pipeline
    monkeypatch.setattr(_zarr_gpu_read, "wanted", lambda out: True)
    before = dict(zarr_pipeline.stats)
    with zarr.config.set({"codec_pipeline.path": OURS}):
        got = pick(zarr.open_array(path, mode="r"))
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(zarr.open_array(path, mode="r")[...], data)
    assert zarr_pipeline.stats["gpu_decoded"] > before["gpu_decoded"]
    assert zarr_pipeline.stats["fallback_decoded"] == before["fallback_decoded"]


# ---- What `read` returns ------------------------------------------------------------------------
# zarr-python 3.4's pipelines return one {"status": "present" | "missing"} per chunk of a read
# (the array raises for missing chunks from them when array.read_missing_chunks is off); 3.1's
# return None. zarrkit's pipeline returns what zarr-python's own returns, and from the device
# path one status per chunk of the batch, in its order.


def read_results(monkeypatch, pipeline_class, path, selection):
    """The values `pipeline_class.read` returned during `array[selection]`."""
    results = []
    original = pipeline_class.read

    async def recording(self, batch_info, out, drop_axes=()):
        result = await original(self, batch_info, out, drop_axes)
        results.append(result)
        return result

    monkeypatch.setattr(pipeline_class, "read", recording)
    path_name = zarr.registry.fully_qualified_name(pipeline_class)
    with zarr.config.set({"codec_pipeline.path": path_name}):
        zarr.open_array(path, mode="r")[selection]
    monkeypatch.setattr(pipeline_class, "read", original)
    return results


def four_chunks_two_stored(path):
    a = zarr.create_array(path, shape=(8,), chunks=(2,), dtype="i4", fill_value=0)
    a[2:6] = [1, 2, 3, 4]  # chunks 1 and 2 stored, 0 and 3 not
    return a


def test_read_returns_what_zarr_pythons_pipeline_returns(tmp_path, monkeypatch):
    from zarr.core.codec_pipeline import BatchedCodecPipeline

    four_chunks_two_stored(tmp_path / "a.zarr")
    theirs = read_results(monkeypatch, BatchedCodecPipeline, tmp_path / "a.zarr", slice(None))
    ours = read_results(monkeypatch, zarr_pipeline.ZarrkitCodecPipeline, tmp_path / "a.zarr", slice(None))
    assert ours == theirs
    assert len(ours) == 1


@pytest.mark.parametrize("where", ["local", "zarr-memory"])
def test_device_read_path_returns_a_status_per_chunk(tmp_path, monkeypatch, where):
    # Host memory stands for the device, as in test_device_read_path_in_host_memory; "local":
    # zarrkit reads the chunk files itself, "zarr-memory": the chunks come through zarr-python.
    from zarrkit import _zarr_gpu_read

    path = tmp_path / "a.zarr" if where == "local" else zarr.storage.MemoryStore()
    four_chunks_two_stored(path)
    monkeypatch.setattr(_zarr_gpu_read, "wanted", lambda out: True)
    results = read_results(monkeypatch, zarr_pipeline.ZarrkitCodecPipeline, path, slice(1, 8))
    statuses = [r["status"] for result in results for r in result]
    assert statuses == ["missing", "present", "present", "missing"]
