"""End-to-end tests of the zarrkit command-line tool.

The binary comes from the ZARRKIT_BIN environment variable. numpy is required; tests that
check interoperability with zarr-python run when zarr is importable.
"""

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

ZARRKIT = os.environ.get("ZARRKIT_BIN")
if not ZARRKIT:
    pytest.skip("ZARRKIT_BIN is not set (path of the zarrkit binary)", allow_module_level=True)


def zk(*args, expect=0):
    """Runs zarrkit; checks the exit code; returns the completed process."""
    proc = subprocess.run([ZARRKIT, *map(str, args)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == expect, f"zarrkit {args}: exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return proc


def error_line(proc):
    """The single 'zarrkit: error: ...' line a failing command prints."""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("zarrkit: error: "), proc.stderr
    return lines[0]


def roundtrip(tmp_path, array, *import_args):
    src = tmp_path / "in.npy"
    np.save(src, array)
    zk("import", src, tmp_path / "a.zarr", "--overwrite", *import_args)
    zk("export", tmp_path / "a.zarr", tmp_path / "out.npy")
    return np.load(tmp_path / "out.npy")


def sample(dtype, shape=(13, 7)):
    rng = np.random.default_rng(42)
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, shape).astype(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, shape, dtype=dtype.newbyteorder("="), endpoint=True).astype(dtype)
    if dtype.kind == "f":
        a = rng.standard_normal(shape).astype(dtype)
        a.flat[3] = np.nan
        return a
    if dtype.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    if dtype.kind in "Mm":
        return rng.integers(-(10**12), 10**12, shape).astype(dtype)
    if dtype.kind == "S":
        return np.array([[f"s{i}{j}".encode() for j in range(shape[1])] for i in range(shape[0])], dtype=dtype)
    if dtype.kind == "U":
        return np.array([[f"é{i}{j}" for j in range(shape[1])] for i in range(shape[0])], dtype=dtype)
    if dtype.kind == "V":
        return rng.integers(0, 256, shape + (dtype.itemsize,), dtype=np.uint8).view(dtype).reshape(shape)
    raise AssertionError(dtype)


CORE_DTYPES = ["|b1", "|i1", "<i2", "<i4", "<i8", "|u1", "<u2", "<u4", "<u8", "<f2", "<f4", "<f8", "<c8", "<c16"]
V2_ONLY_DTYPES = ["|S6", "<U4", "|V3", "<M8[ns]", "<m8[s]", ">i4", ">f8", ">c16"]


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("dtype", CORE_DTYPES)
def test_import_export_roundtrip(tmp_path, fmt, dtype):
    a = sample(dtype)
    b = roundtrip(tmp_path, a, "--zarr-format", fmt, "--chunks", "4,3")
    assert b.shape == a.shape
    assert b.dtype == a.dtype.newbyteorder("<") or b.dtype == a.dtype
    np.testing.assert_array_equal(b, a)


@pytest.mark.parametrize("dtype", V2_ONLY_DTYPES)
def test_import_export_roundtrip_other_dtypes(tmp_path, dtype):
    a = sample(dtype)
    b = roundtrip(tmp_path, a, "--zarr-format", "2", "--chunks", "5,5")
    assert b.dtype.kind == a.dtype.kind and b.dtype.itemsize == a.dtype.itemsize
    np.testing.assert_array_equal(b, a)


def test_structured_dtype_roundtrip_v2(tmp_path):
    dt = np.dtype([("a", "<i4"), ("b", "<f8", (2,)), ("c", "S3")])
    a = np.zeros(9, dtype=dt)
    a["a"] = np.arange(9)
    a["b"] = np.arange(18).reshape(9, 2) / 3
    a["c"] = b"xyz"
    b = roundtrip(tmp_path, a, "--zarr-format", "2", "--chunks", "4")
    assert b.dtype == dt
    np.testing.assert_array_equal(b, a)


@pytest.mark.parametrize("fmt", [2, 3])
def test_fortran_order_and_big_endian_input(tmp_path, fmt):
    a = np.asfortranarray(np.arange(2 * 3 * 5, dtype=">i8").reshape(2, 3, 5))
    b = roundtrip(tmp_path, a, "--zarr-format", fmt, "--chunks", "1,2,2", "--order", "F")
    np.testing.assert_array_equal(b, a)


def test_zero_dim_and_empty_arrays(tmp_path):
    np.testing.assert_array_equal(roundtrip(tmp_path, np.array(3.5)), np.array(3.5))
    empty = np.zeros((0, 4), dtype="<u2")
    assert roundtrip(tmp_path, empty).shape == (0, 4)


@pytest.mark.parametrize(
    "codec",
    [["zstd:level=3"], ["gzip:level=6"], ["blosc:cname=lz4,clevel=5,shuffle=shuffle"], ["zlib:level=1"], ["lz4"],
     ["bz2:level=9"], ["lzma"], ["none"], ["zstd:level=1", "crc32c"]],
)
@pytest.mark.parametrize("fmt", [2, 3])
def test_codecs(tmp_path, codec, fmt):
    if fmt == 2 and "crc32c" in codec:
        pytest.skip("v2 has no crc32c")
    a = sample("<f4", (40, 30))
    args = ["--zarr-format", fmt, "--chunks", "16,16"]
    for c in codec:
        args += ["--codec", c]
    np.testing.assert_array_equal(roundtrip(tmp_path, a, *args), a)


def test_fill_value_separator_and_empty_chunks(tmp_path):
    a = np.full((8, 8), 7, dtype="<i2")
    a[0, 0] = 1
    np.save(tmp_path / "in.npy", a)
    zk("import", tmp_path / "in.npy", tmp_path / "a.zarr", "--chunks", "4,4", "--fill-value", "7", "--separator", ".")
    meta = json.loads((tmp_path / "a.zarr" / "zarr.json").read_text())
    assert meta["fill_value"] == 7
    assert meta["chunk_key_encoding"]["configuration"]["separator"] == "."
    # Only the chunk holding the 1 differs from the fill value.
    assert sorted(p.name for p in (tmp_path / "a.zarr").iterdir()) == ["c.0.0", "zarr.json"]
    zk("import", tmp_path / "in.npy", tmp_path / "b.zarr", "--chunks", "4,4", "--fill-value", "7",
       "--write-empty-chunks")
    assert len(list((tmp_path / "b.zarr" / "c").rglob("*"))) == 2 + 4  # 2 dirs, 4 chunks
    zk("export", tmp_path / "a.zarr", tmp_path / "o.npy")
    np.testing.assert_array_equal(np.load(tmp_path / "o.npy"), a)


@pytest.mark.parametrize("select", ["1:5, ::2", "-1", "3", "...", "..., 2", "2, 4", ":", "-3:, 1::2", "::-3, 1:",
                                    "::-1, -2:0:-2", "[1, 5, 9], ::-1", "[-1, 0, 0, 3], 1", "::-2, [5, 0, 5]",
                                    "[True, False, True, False, False, False, False, False, False, True], ...", "[]"])
def test_export_select(tmp_path, select):
    a = np.arange(10 * 6, dtype="<i4").reshape(10, 6)
    np.save(tmp_path / "in.npy", a)
    zk("import", tmp_path / "in.npy", tmp_path / "a.zarr", "--chunks", "3,4")
    zk("export", tmp_path / "a.zarr", tmp_path / "o.npy", "--select", select)
    expected = eval(f"a[{select}]")  # the same NumPy syntax
    np.testing.assert_array_equal(np.load(tmp_path / "o.npy"), expected)


def test_info_array(tmp_path):
    a = np.arange(200 * 30, dtype="<f4").reshape(200, 30)
    np.save(tmp_path / "in.npy", a)
    zk("import", tmp_path / "in.npy", tmp_path / "a.zarr", "--chunks", "50,10", "--codec", "zstd:level=3",
       "--dimension-names", "y,x")
    out = zk("info", tmp_path / "a.zarr").stdout
    for text in ["array (zarr v3)", "(200, 30)", "float32", "(50, 10)", "(4, 3) = 12 chunks", "fill value",
                 "bytes", '"endian":"little"', "zstd", '"level":3', "(y, x)", "stored chunks   12 of 12",
                 "logical bytes", "24000 bytes", "ratio"]:
        assert text in out, f"{text!r} not in\n{out}"
    doc = json.loads(zk("info", tmp_path / "a.zarr", "--json").stdout)
    assert doc["zarr.json"]["shape"] == [200, 30]
    assert doc["zarr.json"]["dimension_names"] == ["y", "x"]


def make_hierarchy(root, fmt):
    """A group with attributes, an array, a subgroup with an array (metadata written by hand)."""
    def write_group(path, attrs):
        path.mkdir(parents=True, exist_ok=True)
        if fmt == 3:
            (path / "zarr.json").write_text(json.dumps(
                {"zarr_format": 3, "node_type": "group", "attributes": attrs}))
        else:
            (path / ".zgroup").write_text(json.dumps({"zarr_format": 2}))
            (path / ".zattrs").write_text(json.dumps(attrs))
    write_group(root, {"title": "test"})
    write_group(root / "sub", {"level": 1})
    arrays = {"a": np.arange(24, dtype="<i2").reshape(4, 6), "sub/b": np.linspace(0, 1, 10)}
    for name, data in arrays.items():
        np.save(root.parent / "tmp.npy", data)
        zk("import", root.parent / "tmp.npy", root / name, "--zarr-format", fmt, "--chunks",
           ",".join(["3"] * data.ndim))
    return arrays


def test_info_group(tmp_path):
    make_hierarchy(tmp_path / "g.zarr", 3)
    out = zk("info", tmp_path / "g.zarr").stdout
    for text in ["group (zarr v3)", "title", "2 arrays, 1 groups", "a ", "(4, 6) int16", "sub/", "b ",
                 "(10,) float64"]:
        assert text in out, f"{text!r} not in\n{out}"
    doc = json.loads(zk("info", tmp_path / "g.zarr", "--json").stdout)
    assert set(doc) == {"zarr.json", "a/zarr.json", "sub/zarr.json", "sub/b/zarr.json"}


def test_cp_v3_v2_v3(tmp_path):
    a = sample("<f8", (37, 23))
    np.save(tmp_path / "in.npy", a)
    zk("import", tmp_path / "in.npy", tmp_path / "v3.zarr", "--chunks", "10,10", "--codec", "gzip:level=4",
       "--fill-value", '"NaN"', "--order", "F", "--dimension-names", "y,x")
    zk("cp", tmp_path / "v3.zarr", tmp_path / "v2.zarr", "--zarr-format", "2", "--chunks", "8,5")
    zarray = json.loads((tmp_path / "v2.zarr" / ".zarray").read_text())
    assert zarray["chunks"] == [8, 5]
    assert zarray["compressor"] == {"id": "gzip", "level": 4}
    assert zarray["order"] == "F"
    assert zarray["fill_value"] == "NaN"
    assert json.loads((tmp_path / "v2.zarr" / ".zattrs").read_text())["_ARRAY_DIMENSIONS"] == ["y", "x"]
    zk("cp", tmp_path / "v2.zarr", tmp_path / "back.zarr", "--zarr-format", "3", "--codec", "blosc:cname=zstd")
    meta = json.loads((tmp_path / "back.zarr" / "zarr.json").read_text())
    assert meta["dimension_names"] == ["y", "x"]
    assert meta["chunk_grid"]["configuration"]["chunk_shape"] == [8, 5]
    assert [c["name"] for c in meta["codecs"]] == ["transpose", "bytes", "blosc"]
    for store in ["v2.zarr", "back.zarr"]:
        zk("export", tmp_path / store, tmp_path / "o.npy")
        np.testing.assert_array_equal(np.load(tmp_path / "o.npy"), a)


@pytest.mark.parametrize("fmt", [2, 3])
def test_cp_hierarchy(tmp_path, fmt):
    arrays = make_hierarchy(tmp_path / "g.zarr", 3)
    zk("cp", tmp_path / "g.zarr", tmp_path / "copy.zarr", "--zarr-format", fmt, "--chunks", "2", "--codec", "zlib")
    key = "zarr.json" if fmt == 3 else ".zgroup"
    assert (tmp_path / "copy.zarr" / key).exists() and (tmp_path / "copy.zarr" / "sub" / key).exists()
    out = zk("info", tmp_path / "copy.zarr").stdout
    assert "title" in out
    for name, data in arrays.items():
        info = zk("info", tmp_path / "copy.zarr" / name).stdout
        assert f"array (zarr v{fmt})" in info and "chunks          " + str((2,) * data.ndim) in info
        zk("export", tmp_path / "copy.zarr" / name, tmp_path / "o.npy")
        np.testing.assert_array_equal(np.load(tmp_path / "o.npy"), data)


def test_cp_hierarchy_keeps_source_chunks(tmp_path):
    arrays = make_hierarchy(tmp_path / "g.zarr", 2)
    zk("cp", tmp_path / "g.zarr", tmp_path / "copy.zarr", "--zarr-format", "3")
    for name, data in arrays.items():
        meta = json.loads((tmp_path / "copy.zarr" / name / "zarr.json").read_text())
        assert meta["chunk_grid"]["configuration"]["chunk_shape"] == [3] * data.ndim
        zk("export", tmp_path / "copy.zarr" / name, tmp_path / "o.npy")
        np.testing.assert_array_equal(np.load(tmp_path / "o.npy"), data)


def test_cp_to_v2_drops_crc32c_and_keeps_the_compressor(tmp_path):
    np.save(tmp_path / "in.npy", np.arange(10, dtype="<i4"))
    zk("import", tmp_path / "in.npy", tmp_path / "a.zarr", "--codec", "zstd", "--codec", "crc32c")
    zk("cp", tmp_path / "a.zarr", tmp_path / "b.zarr", "--zarr-format", "2")
    zarray = json.loads((tmp_path / "b.zarr" / ".zarray").read_text())
    assert zarray["compressor"]["id"] == "zstd"
    assert zarray["filters"] is None


def test_cp_to_v2_refuses_what_v2_cannot_express(tmp_path):
    np.save(tmp_path / "in.npy", np.arange(24, dtype="<i4").reshape(2, 3, 4))
    zk("import", tmp_path / "in.npy", tmp_path / "a.zarr")
    meta_path = tmp_path / "a.zarr" / "zarr.json"
    meta = json.loads(meta_path.read_text())
    # An axis order that is neither C nor F has no v2 form.
    meta["codecs"].insert(0, {"name": "transpose", "configuration": {"order": [0, 2, 1]}})
    meta_path.write_text(json.dumps(meta))
    line = error_line(zk("cp", tmp_path / "a.zarr", tmp_path / "b.zarr", "--zarr-format", "2", expect=1))
    assert "transpose" in line
    assert not (tmp_path / "b.zarr").exists()


def test_no_progress_output_when_stderr_is_not_a_terminal(tmp_path):
    np.save(tmp_path / "in.npy", np.zeros((100, 100)))
    assert zk("import", tmp_path / "in.npy", tmp_path / "a.zarr", "--chunks", "10,10").stderr == ""
    assert zk("cp", tmp_path / "a.zarr", tmp_path / "b.zarr", "--chunks", "20,20").stderr == ""


def test_error_missing_path(tmp_path):
    for args in (["info", tmp_path / "nope.zarr"], ["export", tmp_path / "nope.zarr", tmp_path / "o.npy"],
                 ["import", tmp_path / "nope.npy", tmp_path / "a.zarr"]):
        line = error_line(zk(*args, expect=1))
        assert "nope" in line


def test_error_corrupt_chunk(tmp_path):
    np.save(tmp_path / "in.npy", np.arange(100, dtype="<f8").reshape(10, 10))
    zk("import", tmp_path / "in.npy", tmp_path / "a.zarr", "--chunks", "5,5", "--codec", "zstd")
    (tmp_path / "a.zarr" / "c" / "1" / "0").write_bytes(b"this is not a zstd frame")
    line = error_line(zk("export", tmp_path / "a.zarr", tmp_path / "o.npy", expect=1))
    assert "c/1/0" in line and "a.zarr" in line
    # Only the corrupt chunk fails: a selection that avoids it still works.
    zk("export", tmp_path / "a.zarr", tmp_path / "o.npy", "--select", "0:5")


def test_error_bad_select_and_flags(tmp_path):
    np.save(tmp_path / "in.npy", np.arange(10, dtype="<i4"))
    zk("import", tmp_path / "in.npy", tmp_path / "a.zarr")
    for select in ["1:2:0", "abc", "0,0", "10", "...,...", "[1, 2", "[10]", "[True]", "[[1]]"]:
        line = error_line(zk("export", tmp_path / "a.zarr", tmp_path / "o.npy", "--select", select, expect=2))
        assert "--select" in line
    error_line(zk("import", tmp_path / "in.npy", tmp_path / "b.zarr", "--codec", "snappy", expect=2))
    error_line(zk("import", tmp_path / "in.npy", tmp_path / "b.zarr", "--zarr-format", "5", expect=2))
    error_line(zk("info", expect=2))
    assert not (tmp_path / "b.zarr").exists()


def test_error_bad_npy(tmp_path):
    (tmp_path / "bad.npy").write_bytes(b"\x93NUMPY\x01\x00\x20\x00{'descr': '<i4', 'shape': (3,)}     \n")
    line = error_line(zk("import", tmp_path / "bad.npy", tmp_path / "a.zarr", expect=1))
    assert "fortran_order" in line
    np.save(tmp_path / "short.npy", np.arange(100))
    data = (tmp_path / "short.npy").read_bytes()
    (tmp_path / "short.npy").write_bytes(data[:-8])
    assert "truncated" in error_line(zk("import", tmp_path / "short.npy", tmp_path / "a.zarr", expect=1))


# ---- Interoperability with zarr-python -----------------------------------------------------

@pytest.mark.parametrize("fmt", [2, 3])
def test_zarr_python_reads_what_zarrkit_writes(tmp_path, fmt):
    zarr = pytest.importorskip("zarr")
    a = sample("<i4", (20, 9))
    np.save(tmp_path / "in.npy", a)
    zk("import", tmp_path / "in.npy", tmp_path / "a.zarr", "--zarr-format", fmt, "--chunks", "6,4",
       "--codec", "blosc:cname=zstd,clevel=3,shuffle=bitshuffle", "--order", "F")
    np.testing.assert_array_equal(zarr.open_array(tmp_path / "a.zarr", mode="r")[...], a)


@pytest.mark.parametrize("fmt", [2, 3])
def test_zarrkit_reads_what_zarr_python_writes(tmp_path, fmt):
    zarr = pytest.importorskip("zarr")
    a = sample("<f4", (15, 11))
    z = zarr.create_array(tmp_path / "z.zarr", shape=a.shape, chunks=(4, 4), dtype=a.dtype, zarr_format=fmt)
    z[...] = a
    zk("export", tmp_path / "z.zarr", tmp_path / "o.npy", "--select", "2:, ::3")
    np.testing.assert_array_equal(np.load(tmp_path / "o.npy"), a[2:, ::3])


def test_sharded_array_from_zarr_python(tmp_path):
    zarr = pytest.importorskip("zarr")
    a = np.arange(100 * 60, dtype="<i4").reshape(100, 60)
    z = zarr.create_array(tmp_path / "sh.zarr", shape=a.shape, chunks=(10, 10), shards=(50, 30), dtype=a.dtype)
    z[...] = a
    out = zk("info", tmp_path / "sh.zarr").stdout
    assert "sharding_indexed" in out and "inner chunks    (10, 10)" in out
    # v2 has no shards: the inner chunks become the v2 chunks.
    zk("cp", tmp_path / "sh.zarr", tmp_path / "v2.zarr", "--zarr-format", "2")
    v2 = zarr.open_array(tmp_path / "v2.zarr", mode="r")
    assert v2.metadata.zarr_format == 2 and v2.chunks == (10, 10)
    np.testing.assert_array_equal(v2[...], a)
    # Re-sharded and re-compressed (inside the shards), still readable by zarr-python.
    zk("cp", tmp_path / "sh.zarr", tmp_path / "re.zarr", "--chunks", "20,60", "--codec", "gzip:level=2")
    np.testing.assert_array_equal(zarr.open_array(tmp_path / "re.zarr", mode="r")[...], a)


def test_threads_option_on_every_command_sizes_the_pool(tmp_path):
    """`--threads N` before or after the subcommand: the process runs N - 1 pool threads (the
    calling thread works too), seen in /proc while an export runs."""
    import glob
    import time

    data = np.random.default_rng(0).standard_normal((2000, 5000)).astype("f4")
    np.save(tmp_path / "big.npy", data)
    zk("import", tmp_path / "big.npy", tmp_path / "big.zarr", "--chunks", "100,1000", "--threads", "2")
    zk("--threads", "1", "info", tmp_path / "big.zarr")
    for n in (2, 4):
        proc = subprocess.Popen([ZARRKIT, "export", str(tmp_path / "big.zarr"), str(tmp_path / f"out{n}.npy"),
                                 "--threads", str(n)])
        most = 0
        while proc.poll() is None:
            names = []
            for comm in glob.glob(f"/proc/{proc.pid}/task/*/comm"):
                try:
                    names.append(open(comm).read().strip())
                except OSError:
                    pass
            most = max(most, names.count("zarrkit-pool"))
            time.sleep(0.001)
        assert proc.returncode == 0
        assert most == n - 1, f"--threads {n}: {most} pool threads seen"
        np.testing.assert_array_equal(np.load(tmp_path / f"out{n}.npy"), data)
    assert "Could not convert" in error_line(zk("export", tmp_path / "big.zarr", tmp_path / "x.npy", "--threads",
                                                 "many", expect=2))
    # A thread count past the limit is a usage error, before any pool is started (it once
    # started threads until the system refused one, then terminated).
    line = error_line(zk("--threads", "100000", "info", tmp_path / "big.zarr", expect=2))
    assert "--threads" in line and "4096" in line, line


def test_rectilinear_chunks_import_info_and_cp(tmp_path):
    """--chunks with sizes that vary per axis makes a v3 rectilinear grid (runs as zarr-python
    3.4 writes them); info shows it, cp keeps it or re-chunks it, and the values survive."""
    a = np.arange(30 * 7, dtype="<i4").reshape(30, 7)
    np.save(tmp_path / "in.npy", a)
    zk("import", tmp_path / "in.npy", tmp_path / "r.zarr", "--chunks", "10x2+5x2,4")
    grid = json.loads((tmp_path / "r.zarr" / "zarr.json").read_text())["chunk_grid"]
    assert grid == {"name": "rectilinear", "configuration": {"kind": "inline", "chunk_shapes": [[[10, 2], [5, 2]], 4]}}
    assert sorted(p.name for p in (tmp_path / "r.zarr" / "c").iterdir()) == ["0", "1", "2", "3"]
    out = zk("info", tmp_path / "r.zarr").stdout
    assert "rectilinear ([10 x2, 5 x2], 4), largest (10, 4)" in out, out
    assert "(4, 2) = 8 chunks" in out, out
    zk("export", tmp_path / "r.zarr", tmp_path / "o.npy", "--select", "3:29:4,::-2")
    np.testing.assert_array_equal(np.load(tmp_path / "o.npy"), a[3:29:4, ::-2])
    # cp keeps the grid; --chunks re-chunks to a regular grid or another rectilinear one.
    zk("cp", tmp_path / "r.zarr", tmp_path / "kept.zarr")
    assert json.loads((tmp_path / "kept.zarr" / "zarr.json").read_text())["chunk_grid"] == grid
    zk("cp", tmp_path / "r.zarr", tmp_path / "regular.zarr", "--chunks", "8,7")
    assert json.loads((tmp_path / "regular.zarr" / "zarr.json").read_text())["chunk_grid"] == {
        "name": "regular", "configuration": {"chunk_shape": [8, 7]}}
    zk("cp", tmp_path / "regular.zarr", tmp_path / "again.zarr", "--chunks", "1+29,3+3+1")
    assert json.loads((tmp_path / "again.zarr" / "zarr.json").read_text())["chunk_grid"]["configuration"][
        "chunk_shapes"] == [[1, 29], [[3, 2], 1]]
    # Shards of varying sizes around regular inner chunks.
    zk("cp", tmp_path / "r.zarr", tmp_path / "sharded.zarr", "--chunks", "5,7", "--shards", "20+10,7")
    meta = json.loads((tmp_path / "sharded.zarr" / "zarr.json").read_text())
    assert meta["chunk_grid"]["configuration"]["chunk_shapes"] == [[20, 10], 7]
    assert meta["codecs"][0]["name"] == "sharding_indexed"
    for store in ["kept.zarr", "regular.zarr", "again.zarr", "sharded.zarr"]:
        zk("export", tmp_path / store, tmp_path / "o.npy")
        np.testing.assert_array_equal(np.load(tmp_path / "o.npy"), a)


@pytest.mark.parametrize(
    "args,fragment",
    [
        (["--chunks", "10x2+5,4"], "sum to 25, less than the array's extent 30"),
        (["--chunks", "10x0+30,4"], "'0' is not a positive integer"),
        (["--chunks", "10+abc,4"], "'abc' is not a positive integer"),
        (["--chunks", "10x3"], "1 axes for an array of 2 dimensions"),
        (["--chunks", "10x3,7", "--zarr-format", "2"], "need zarr v3"),
        (["--chunks", "10x3,7", "--shards", "30,7"], "give varying sizes to --shards"),
        (["--chunks", "4,7", "--shards", "20+10,7"], "not a multiple of the chunk shape"),
    ],
)
def test_rectilinear_chunks_option_errors(tmp_path, args, fragment):
    np.save(tmp_path / "in.npy", np.zeros((30, 7), dtype="<i4"))
    proc = zk("import", tmp_path / "in.npy", tmp_path / "r.zarr", *args, expect=2)
    assert fragment in error_line(proc)


def test_cp_of_a_rectilinear_grid_to_v2_needs_chunks(tmp_path):
    np.save(tmp_path / "in.npy", np.arange(30, dtype="<i4"))
    zk("import", tmp_path / "in.npy", tmp_path / "r.zarr", "--chunks", "10+20")
    proc = zk("cp", tmp_path / "r.zarr", tmp_path / "v2.zarr", "--zarr-format", "2", expect=1)
    assert "rectilinear chunk grids are a Zarr v3 feature" in error_line(proc)
    zk("cp", tmp_path / "r.zarr", tmp_path / "v2.zarr", "--zarr-format", "2", "--chunks", "10")
    zk("export", tmp_path / "v2.zarr", tmp_path / "o.npy")
    np.testing.assert_array_equal(np.load(tmp_path / "o.npy"), np.arange(30))
