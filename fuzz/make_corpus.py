#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets that read raw outside bytes: fuzz/corpus/<target>/
for fuzz_http (HTTP responses), fuzz_npy (.npy files) and fuzz_cli (argument lists). Each file
is one input, real (as servers, NumPy and users make them) or malformed in one way; the names
say which. The files are committed, so the fuzz tests need no Python; re-run this after
changing it (needs numpy):

    python3 fuzz/make_corpus.py

Output is deterministic, so re-running gives the same bytes. Inputs that once broke something
are kept beside these as regression-<what>; this script never removes files it did not write.
"""

import io
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
written = []


def put(target, name, data):
    folder = HERE / "corpus" / target
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(data if isinstance(data, bytes) else data.encode("latin-1"))
    written.append(f"{target}/{name}")


# ---- fuzz_http: byte 0 picks the request(s), then responses separated by SEP ----------------
SEP = "\r\n=====\r\n"
GET, RANGE, SUFFIX, RANGES, SIZE, EXISTS, ARRAY = (chr(i) for i in range(7))
ZARR_JSON = ('{"zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "uint8", '
             '"chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4]}}, '
             '"chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}}, '
             '"fill_value": 0, "codecs": [{"name": "bytes"}]}')


def ok(body, extra=""):
    return f"HTTP/1.1 200 OK\r\nContent-Length: {len(body)}\r\n{extra}\r\n{body}"


def partial(first, last, total, body, extra=""):
    return f"HTTP/1.1 206 Partial Content\r\nContent-Range: bytes {first}-{last}/{total}\r\n" \
           f"Content-Length: {len(body)}\r\n{extra}\r\n{body}"


http = {
    "get-ok": GET + ok("0123456789abcdef", "Content-Type: application/octet-stream\r\nETag: \"e\"\r\n"),
    "get-404": GET + "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n",
    "get-410": GET + "HTTP/1.1 410 Gone\r\nContent-Length: 4\r\n\r\ngone",
    "get-403": GET + "HTTP/1.1 403 Forbidden\r\nContent-Length: 6\r\n\r\ndenied",
    "get-chunked": GET + "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nabcd\r\n2\r\nef\r\n0\r\n\r\n",
    "get-chunked-trailer": GET + "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\nX-T: 1\r\n\r\n",
    "get-http10-until-close": GET + "HTTP/1.0 200 OK\r\n\r\nbody until the connection closes",
    "get-503-then-ok": GET + "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 0\r\nContent-Length: 0\r\n\r\n"
                       + SEP + ok("after a retry"),
    "get-429-then-ok": GET + "HTTP/1.1 429 Too Many Requests\r\nContent-Length: 0\r\n\r\n" + SEP + ok("v"),
    "get-redirect": GET + "HTTP/1.1 302 Found\r\nLocation: http://127.0.0.1:$PORT/elsewhere\r\n"
                    "Content-Length: 0\r\n\r\n" + SEP + ok("moved"),
    "get-redirect-relative": GET + "HTTP/1.1 301 Moved Permanently\r\nLocation: /other/key\r\n"
                             "Content-Length: 0\r\n\r\n" + SEP + ok("here"),
    "get-100-continue": GET + "HTTP/1.1 100 Continue\r\n\r\n" + ok("after continue"),
    "range-206": RANGE + partial(3, 9, 16, "3456789"),
    "range-200-whole": RANGE + ok("0123456789abcdef"),
    "suffix-206": SUFFIX + partial(11, 15, 16, "bcdef"),
    "suffix-416": SUFFIX + "HTTP/1.1 416 Range Not Satisfiable\r\nContent-Range: bytes */0\r\nContent-Length: 0\r\n\r\n",
    "ranges-two": RANGES + partial(0, 3, 200, "0123") + SEP + partial(100, 119, 200, "x" * 20),
    "size-head": SIZE + "HTTP/1.1 200 OK\r\nContent-Length: 1234\r\nETag: \"abc\"\r\n\r\n",
    "exists-404": EXISTS + "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n",
    "array-ok": ARRAY + ok(ZARR_JSON) + SEP + ok("\x01\x02\x03\x04"),
    "array-chunk-absent": ARRAY + ok(ZARR_JSON) + SEP + "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n",
    # Malformed:
    "bad-status-code": GET + "HTTP/1.1 2000 OK\r\nContent-Length: 1\r\n\r\nx",
    "bad-no-status-line": GET + "Content-Length: 3\r\n\r\nabc",
    "bad-garbage": GET + "\x00\xff\xfe garbage \r\n\r\n\r\n",
    "bad-empty": GET,
    "bad-lf-only": GET + "HTTP/1.1 200 OK\nContent-Length: 2\n\nab",
    "bad-negative-length": GET + "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\nabc",
    "bad-huge-length": GET + "HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\nabc",
    "bad-length-too-long": GET + "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\nshort",
    "bad-length-too-short": GET + "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nlonger than announced",
    "bad-two-lengths": GET + "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 5\r\n\r\nabcde",
    "bad-chunk-size": GET + "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n",
    "bad-chunk-huge": GET + "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\nabc",
    "bad-chunked-and-length": GET + "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n"
                              "3\r\nabc\r\n0\r\n\r\n",
    "bad-header-no-colon": GET + "HTTP/1.1 200 OK\r\nthis is not a header\r\nContent-Length: 1\r\n\r\nx",
    "bad-header-nul": GET + "HTTP/1.1 200 OK\r\nX-A: a\x00b\r\nContent-Length: 1\r\n\r\nx",
    "bad-redirect-loop": GET + "HTTP/1.1 302 Found\r\nLocation: http://127.0.0.1:$PORT/loop\r\nContent-Length: 0\r\n\r\n",
    "bad-redirect-no-location": GET + "HTTP/1.1 302 Found\r\nContent-Length: 0\r\n\r\n",
    "bad-redirect-ftp": GET + "HTTP/1.1 302 Found\r\nLocation: ftp://127.0.0.1/x\r\nContent-Length: 0\r\n\r\n",
    "bad-redirect-garbage": GET + "HTTP/1.1 307 Temporary Redirect\r\nLocation: \x01\x02://\r\nContent-Length: 0\r\n\r\n",
    "bad-range-reversed": RANGE + partial(9, 3, 16, "3456789"),
    "bad-range-wrong-start": RANGE + partial(4, 10, 16, "3456789"),
    "bad-range-past-total": RANGE + partial(3, 9, 5, "3456789"),
    "bad-range-no-total": RANGE + "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 3-9/*\r\n"
                          "Content-Length: 7\r\n\r\n3456789",
    "bad-range-missing": RANGE + "HTTP/1.1 206 Partial Content\r\nContent-Length: 7\r\n\r\n3456789",
    "bad-range-units": RANGE + "HTTP/1.1 206 Partial Content\r\nContent-Range: items 3-9/16\r\n"
                       "Content-Length: 7\r\n\r\n3456789",
    "bad-range-body-short": RANGE + partial(3, 9, 16, "345"),
    "bad-range-overflow": RANGE + "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes "
                          "3-18446744073709551615/18446744073709551616\r\nContent-Length: 7\r\n\r\n3456789",
    "bad-suffix-too-long": SUFFIX + partial(0, 15, 16, "0123456789abcdef"),
    "bad-ranges-one-missing": RANGES + partial(0, 3, 200, "0123") + SEP + "HTTP/1.1 404 Not Found\r\n\r\n",
    "bad-size-no-length": SIZE + "HTTP/1.1 200 OK\r\n\r\n",
    "bad-size-huge": SIZE + "HTTP/1.1 200 OK\r\nContent-Length: 18446744073709551615\r\n\r\n",
    "bad-array-json-truncated": ARRAY + ok(ZARR_JSON[:40]),
    "bad-array-huge-shape": ARRAY + ok(ZARR_JSON.replace('"shape": [4]', '"shape": [4000000000000]')) + SEP
                            + ok("\x01\x02\x03\x04"),
    "bad-array-chunk-short": ARRAY + ok(ZARR_JSON) + SEP + ok("\x01\x02"),
    "bad-array-chunk-lying-length": ARRAY + ok(ZARR_JSON) + SEP
                                    + "HTTP/1.1 200 OK\r\nContent-Length: 4000000000\r\n\r\n\x01\x02\x03\x04",
}
for name, text in http.items():
    put("fuzz_http", name, text)


# ---- fuzz_npy: .npy files -------------------------------------------------------------------
def npy(array, version=None, fortran=False):
    out = io.BytesIO()
    if fortran:
        array = np.asfortranarray(array)
    np.lib.format.write_array(out, array, version=version, allow_pickle=False)
    return out.getvalue()


def handmade(header, data=b"", version=1):
    body = header.encode("utf-8" if version == 3 else "latin-1")
    preamble = 10 if version == 1 else 12
    body += b" " * ((64 - (preamble + len(body) + 1) % 64) % 64) + b"\n"
    length = len(body).to_bytes(2 if version == 1 else 4, "little")
    return b"\x93NUMPY" + bytes([version, 0]) + length + body + data


grid = np.arange(12, dtype="<f4").reshape(3, 4)
npys = {
    "f4-c.npy": npy(grid),
    "i8-big-endian-fortran.npy": npy(np.arange(6, dtype=">i8").reshape(2, 3), fortran=True),
    "bool-0d.npy": npy(np.array(True)),
    "u2-empty.npy": npy(np.zeros((0, 5), dtype="<u2")),
    "unicode.npy": npy(np.array(["ab", "c", "déf"], dtype="<U3")),
    "bytes.npy": npy(np.array([b"xy", b"z"], dtype="S2")),
    "complex.npy": npy(np.array([1 + 2j, 3 - 4j], dtype="<c16")),
    "datetime.npy": npy(np.array(["2024-01-01", "2025-06-30"], dtype="datetime64[D]")),
    "structured.npy": npy(np.zeros(3, dtype=[("a", "<i2"), ("b", ">f8", (2,)), ("c", "S3")])),
    "version-2.npy": npy(grid, version=(2, 0)),
    "version-3-unicode-field.npy": npy(np.zeros(2, dtype=[("é", "<u1")]), version=(3, 0)),
    "f2-4d.npy": npy(np.ones((2, 1, 3, 2), dtype="<f2")),
    # Malformed:
    "bad-magic.npy": b"\x93NUMPX\x01\x00" + npy(grid)[8:],
    "bad-version-4.npy": b"\x93NUMPY\x04\x00" + npy(grid)[8:],
    "bad-minor-version.npy": b"\x93NUMPY\x01\x01" + npy(grid)[8:],
    "bad-truncated-preamble.npy": b"\x93NUMPY\x02\x00\x10",
    "bad-truncated-header.npy": npy(grid)[:40],
    "bad-truncated-data.npy": npy(grid)[:-5],
    "bad-header-length-huge.npy": b"\x93NUMPY\x02\x00\xff\xff\xff\x7f{'descr': '<f4'}",
    "bad-not-a-dict.npy": handmade("['descr', '<f4']"),
    "bad-missing-shape.npy": handmade("{'descr': '<f4', 'fortran_order': False, }", b"\0" * 4),
    "bad-extra-key.npy": handmade("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1, }", b"\0" * 4),
    "bad-negative-shape.npy": handmade("{'descr': '<f4', 'fortran_order': False, 'shape': (-1, 2), }"),
    "bad-shape-overflow.npy": handmade("{'descr': '<f8', 'fortran_order': False, 'shape': "
                                       "(4294967296, 4294967296, 4294967296), }"),
    "bad-shape-float.npy": handmade("{'descr': '<f4', 'fortran_order': False, 'shape': (2.5,), }"),
    "bad-shape-too-many-dims.npy": handmade("{'descr': '|u1', 'fortran_order': False, 'shape': ("
                                            + "1, " * 100 + "), }", b"\0"),
    "bad-fortran-order-string.npy": handmade("{'descr': '<f4', 'fortran_order': 'yes', 'shape': (1,), }", b"\0" * 4),
    "bad-object-dtype.npy": handmade("{'descr': '|O', 'fortran_order': False, 'shape': (1,), }", b"\0" * 8),
    "bad-unknown-dtype.npy": handmade("{'descr': '<q9', 'fortran_order': False, 'shape': (1,), }", b"\0" * 8),
    "bad-zero-size-type-huge-shape.npy": handmade("{'descr': '|V0', 'fortran_order': True, 'shape': "
                                                  "(1000000000, 1000000000), }"),
    "bad-empty-bytes-huge-shape.npy": handmade("{'descr': '|S0', 'fortran_order': False, 'shape': "
                                               "(100000000000,), }"),
    "bad-deep-nesting.npy": handmade("{'descr': " + "[" * 200 + "]" * 200 + ", 'fortran_order': False, 'shape': (), }"),
    "bad-unterminated-string.npy": handmade("{'descr': '<f4, 'fortran_order': False, 'shape': (1,), }"),
    "bad-latin1-bytes.npy": handmade("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), '\xe9': 1}"),
    "bad-v3-invalid-utf8.npy": b"\x93NUMPY\x03\x00\x08\x00\x00\x00{'\xff\xfe'}",
    "bad-structured-overlap.npy": handmade("{'descr': [('a', '<i4'), ('a', '<i4')], 'fortran_order': False, "
                                           "'shape': (1,), }", b"\0" * 8),
}
for name, data in npys.items():
    put("fuzz_npy", name, data)


# ---- fuzz_cli: argument lists, NUL-separated -------------------------------------------------
def argv(*args):
    return "\0".join(args)


cli = {
    "info": argv("info", "a.zarr"),
    "info-json-group": argv("info", "g.zarr", "--json"),
    "info-zip-member": argv("info", "t.zip/c"),
    "export-select": argv("export", "a.zarr", "o.npy", "--select", "1:5,::2"),
    "export-negative-step": argv("export", "h.zarr/x", "o.npy", "--select", "::-1,3"),
    "export-ellipsis": argv("export", "g.zarr/sharded", "o.npy", "--select", "...,-1"),
    "import-codecs": argv("import", "x.npy", "n.zarr", "--codec", "zstd:level=3", "--codec", "crc32c"),
    "import-v2": argv("import", "x.npy", "n.zarr", "--zarr-format", "2", "--codec", "blosc:cname=zstd,shuffle=shuffle",
                      "--order", "F", "--separator", "/", "--fill-value", "-1"),
    "import-sharded": argv("import", "x.npy", "n.zarr", "--chunks", "2,2", "--shards", "4,4"),
    "import-overwrite-zip": argv("import", "x.npy", "t.zip", "--overwrite", "--durable"),
    "cp-group": argv("cp", "g.zarr", "c.zarr", "--consolidate"),
    "cp-rechunk": argv("cp", "a.zarr", "c.zarr", "--chunks", "1", "--codec", "gzip:level=9", "--write-empty-chunks"),
    "cp-to-zip": argv("cp", "g.zarr", "c.zip", "--zarr-format", "3"),
    "resize": argv("resize", "a.zarr", "2,30"),
    "append": argv("append", "a.zarr", "x.npy", "--axis", "0"),
    "consolidate": argv("consolidate", "g.zarr"),
    "migrate-dry": argv("migrate", "v3", "h.zarr", "--dry-run"),
    "migrate-array": argv("migrate", "v3", "h.zarr/x"),
    "threads-before": argv("--threads", "1", "info", "g.zarr"),
    "help": argv("--help"),
    "help-cp": argv("cp", "--help"),
    # Malformed:
    "bad-no-command": argv(),
    "bad-unknown-command": argv("frobnicate", "a.zarr"),
    "bad-unknown-option": argv("info", "a.zarr", "--bogus"),
    "bad-select": argv("export", "a.zarr", "o.npy", "--select", "1:2:0"),
    "bad-select-garbage": argv("export", "a.zarr", "o.npy", "--select", "[[[,,,:::"),
    "bad-codec": argv("import", "x.npy", "n.zarr", "--codec", "zstd:level=x,level=3,=,"),
    "bad-codec-unknown": argv("import", "x.npy", "n.zarr", "--codec", "pickle"),
    "bad-chunks": argv("import", "x.npy", "n.zarr", "--chunks", "0,-1"),
    "bad-shards-not-multiple": argv("import", "x.npy", "n.zarr", "--chunks", "3,3", "--shards", "4,4"),
    "bad-fill-value": argv("import", "x.npy", "n.zarr", "--fill-value", "{\"a\": [}"),
    "bad-zarr-format": argv("cp", "a.zarr", "n.zarr", "--zarr-format", "4"),
    "bad-same-node": argv("cp", "a.zarr", "a.zarr", "--overwrite"),
    "bad-missing-source": argv("cp", "nothing.zarr", "n.zarr"),
    "bad-resize-dims": argv("resize", "a.zarr", "1,2,3"),
    "bad-append-shape": argv("append", "h.zarr/x", "x.npy", "--axis", "1"),
    "bad-threads": argv("--threads", "-4", "info", "a.zarr"),
    "bad-empty-arguments": argv("", "", ""),
    "bad-nul-in-path": argv("info", "a.zarr\x01"),
    "bad-import-not-npy": argv("import", "a.zarr/zarr.json", "n.zarr"),
    "bad-export-over-array": argv("export", "a.zarr", "g.zarr"),
}
for name, text in cli.items():
    put("fuzz_cli", name, text)

print(f"wrote {len(written)} corpus files")
