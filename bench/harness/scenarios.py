"""The scenarios of docs BENCHMARKS.md (S1-S5, S8, S10), at two sizes.

`quick` fits the 2-core development machine (a few seconds a scenario); `full` is the size
BENCHMARKS.md names, for the 16-core GPU machine. Both keep the ratios that matter: chunk to
array, inner chunk to shard, the codecs and the access patterns. Every peer reads the same
files, written once from the same values (data.py), with the same thread count.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

# ---- Codec descriptions (Zarr v3 JSON and numcodecs v2 JSON) ---------------------------------


def bytes_codec() -> dict:
    return {"name": "bytes", "configuration": {"endian": "little"}}


def zstd(level: int) -> dict:
    return {"name": "zstd", "configuration": {"level": level, "checksum": False}}


def gzip(level: int) -> dict:
    return {"name": "gzip", "configuration": {"level": level}}


def blosc(cname: str, clevel: int, shuffle: str, typesize: int) -> dict:
    return {"name": "blosc", "configuration": {"cname": cname, "clevel": clevel, "shuffle": shuffle,
                                               "typesize": typesize, "blocksize": 0}}


def sharding(inner: tuple[int, ...], codecs: list[dict]) -> dict:
    return {"name": "sharding_indexed", "configuration": {
        "chunk_shape": list(inner), "codecs": codecs,
        "index_codecs": [bytes_codec(), {"name": "crc32c"}], "index_location": "end"}}


V3_DTYPE = {"uint8": "uint8", "uint16": "uint16", "float32": "float32"}
V2_DTYPE = {"uint8": "|u1", "uint16": "<u2", "float32": "<f4"}


def v3_metadata(shape, dtype: str, chunks, codecs: list[dict]) -> dict:
    return {"zarr_format": 3, "node_type": "array", "shape": list(shape), "data_type": V3_DTYPE[dtype],
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(chunks)}},
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
            "fill_value": 0, "codecs": codecs, "attributes": {}}


def v2_metadata(shape, dtype: str, chunks, compressor: dict | None) -> dict:
    return {"zarr_format": 2, "shape": list(shape), "chunks": list(chunks), "dtype": V2_DTYPE[dtype],
            "compressor": compressor, "fill_value": 0, "order": "C", "filters": None,
            "dimension_separator": "."}


# ---- Data sets, variants (one stored form each), cases (one access pattern) -----------------


@dataclasses.dataclass(frozen=True)
class Dataset:
    name: str
    shape: tuple[int, ...]
    dtype: str
    family: str  # P (smooth polynomial), N (smooth field + noise), R (uniform random)
    seed: int

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape)) * np.dtype(self.dtype).itemsize


@dataclasses.dataclass(frozen=True)
class Variant:
    name: str              # unique within the data set: the directory name of the array
    dataset: Dataset
    label: str             # what the tables show: codec and chunking
    zarr: dict             # zarr.json (v3) or .zarray (v2)
    h5: dict | None = None  # h5py create_dataset arguments for the HDF5 twin, if any

    @property
    def chunk_shape(self) -> tuple[int, ...]:
        if self.zarr["zarr_format"] == 2:
            return tuple(self.zarr["chunks"])
        return tuple(self.zarr["chunk_grid"]["configuration"]["chunk_shape"])


@dataclasses.dataclass
class Case:
    scenario: str
    name: str               # access pattern: read_all, chunks, crops, frame, column, ...
    variant: Variant
    op: str                 # read_all | selections | write_all | roundtrip
    peers: list[str]
    selections: list[Any] | None = None  # per axis: int or [start, stop]
    group: int = 1          # selections per timed unit (a batch)
    in_flight: str | int = 1  # "threads": as many in flight as threads
    whole_process: bool = False  # also time whole processes
    cold: bool = False      # also time with a dropped page cache
    note: str = ""

    @property
    def key(self) -> str:
        return f"{self.scenario}/{self.variant.dataset.name}/{self.variant.name}/{self.name}"


def chunk_regions(shape, chunks) -> list[list[list[int]]]:
    grid = [range(0, s, c) for s, c in zip(shape, chunks)]
    regions = []
    for origin in np.ndindex(*[len(g) for g in grid]):
        starts = [grid[a][i] for a, i in enumerate(origin)]
        regions.append([[b, min(b + c, s)] for b, c, s in zip(starts, chunks, shape)])
    return regions


def random_boxes(shape, box, count: int, seed: int) -> list[list[list[int]]]:
    rng = np.random.default_rng(seed)
    boxes = []
    for _ in range(count):
        starts = [int(rng.integers(0, s - b + 1)) for s, b in zip(shape, box)]
        boxes.append([[b, b + e] for b, e in zip(starts, box)])
    return boxes


def random_grid_cells(shape, cell, count: int, seed: int) -> list[list[list[int]]]:
    rng = np.random.default_rng(seed)
    cells = []
    for _ in range(count):
        index = [int(rng.integers(0, s // c)) for s, c in zip(shape, cell)]
        cells.append([[i * c, (i + 1) * c] for i, c in zip(index, cell)])
    return cells


SIZES = ("quick", "full")
READ_PEERS = ["zarrkit", "tensorstore", "zarr", "zarrs"]
# Plus the floor of zarrkit's codecs alone (bench/README.md), for whole chunks of unsharded arrays.
FLOOR_PEERS = READ_PEERS + ["codecs"]


def build(size: str) -> list[Case]:
    if size not in SIZES:
        raise ValueError(f"size must be one of {SIZES}")
    full = size == "full"
    cases: list[Case] = []

    # S1: the zarrs-benchmark replica.
    n, c, inner = (1024, 256, 64) if full else (256, 128, 32)
    s1 = {}
    for family, seed in (("P", 11), ("N", 12)):
        ds = Dataset(f"s1_{family}", (n, n, n), "uint16", family, seed)
        s1[family] = {
            "none": Variant("none", ds, f"none, {c}^3", v3_metadata(ds.shape, "uint16", (c,) * 3, [bytes_codec()])),
            "zstd": Variant("zstd", ds, f"zstd 0, {c}^3", v3_metadata(ds.shape, "uint16", (c,) * 3, [bytes_codec(), zstd(0)])),
            "sharded": Variant("sharded_zstd", ds, f"sharded zstd 0, {c}^3 / {inner}^3",
                               v3_metadata(ds.shape, "uint16", (c,) * 3,
                                           [sharding((inner,) * 3, [bytes_codec(), zstd(0)])])),
        }
        for v in (s1[family]["zstd"], s1[family]["sharded"], s1[family]["none"]):
            peers = READ_PEERS if v is s1[family]["sharded"] else FLOOR_PEERS
            # Whole processes for the N family only (the anchors' codecs), to keep the run short.
            cases.append(Case("S1", "read all", v, "read_all", peers, whole_process=family == "N", cold=True))
            cases.append(Case("S1", "chunk by chunk", v, "selections", peers,
                              selections=chunk_regions(ds.shape, v.chunk_shape), in_flight="threads",
                              note="one chunk (shard) per read, as many in flight as threads"))

    # S2: v2 blosc parity.
    shape, c = ((1024, 1024, 512), 256) if full else ((256, 256, 128), 64)
    ds = Dataset("s2_N", shape, "uint16", "N", 21)
    s2 = {
        "lz4": Variant("blosc_lz4", ds, f"v2 blosc lz4 5 shuffle, {c}^3",
                       v2_metadata(shape, "uint16", (c,) * 3,
                                   {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0})),
        "zstd": Variant("blosc_zstd", ds, f"v2 blosc zstd 5 bitshuffle, {c}^3",
                        v2_metadata(shape, "uint16", (c,) * 3,
                                    {"id": "blosc", "cname": "zstd", "clevel": 5, "shuffle": 2, "blocksize": 0})),
    }
    for v in s2.values():
        cases.append(Case("S2", "read all", v, "read_all", FLOOR_PEERS, cold=True))
        cases.append(Case("S2", "write all", v, "write_all", FLOOR_PEERS))

    # S3: format overhead, uncompressed float32 random values.
    shape = (512, 1024, 1024) if full else (128, 512, 512)
    chunks = (64, 256, 256)
    ds = Dataset("s3_R", shape, "float32", "R", 31)
    v = Variant("none", ds, "none, 64x256x256", v3_metadata(shape, "float32", chunks, [bytes_codec()]),
                h5={"chunks": chunks})
    s3_peers = READ_PEERS + ["memmap", "h5py"]
    cases.append(Case("S3", "read all", v, "read_all", s3_peers, cold=True))
    crops = 10000 if full else 200
    cases.append(Case("S3", f"{crops} random 32^3 crops", v, "selections", s3_peers,
                      selections=random_boxes(shape, (32, 32, 32), crops, seed=32),
                      note="one crop at a time"))

    # S4: deflate, against HDF5's gzip filter (with and without its shuffle filter). Zarr has no
    # shuffle filter that every peer reads, so "shuffle" on the Zarr side is blosc(zlib, shuffle).
    shape = (256, 2048, 2048) if full else (64, 512, 512)
    ds = Dataset("s4_N", shape, "uint16", "N", 41)
    frame_side = shape[1]
    chunkings = {"block": (16, frame_side // 4, frame_side // 4), "frame": (1, frame_side, frame_side)}
    for chunking, chunks in chunkings.items():
        for level in (1, 6):
            for shuffled in (False, True):
                if not full and (level == 1) == shuffled:
                    continue  # quick: gzip 1 plain and gzip 6 + shuffle only
                codec = blosc("zlib", level, "shuffle", 2) if shuffled else gzip(level)
                codec_label = f"blosc zlib {level} shuffle" if shuffled else f"gzip {level}"
                name = f"{chunking}_gzip{level}{'_shuffle' if shuffled else ''}"
                v = Variant(name, ds, f"{codec_label} / h5 gzip {level}{' + shuffle' if shuffled else ''}, "
                            f"{'x'.join(map(str, chunks))}",
                            v3_metadata(shape, "uint16", chunks, [bytes_codec(), codec]),
                            h5={"chunks": chunks, "compression": "gzip", "compression_opts": level,
                                "shuffle": shuffled})
                peers = READ_PEERS + ["h5py"]
                cases.append(Case("S4", "read all", v, "read_all", peers))
                cases.append(Case("S4", "one frame", v, "selections", peers,
                                  selections=[[shape[0] // 2, [0, shape[1]], [0, shape[2]]]]))
                cases.append(Case("S4", "one z-column", v, "selections", peers,
                                  selections=[[[0, shape[0]], shape[1] // 3, shape[2] // 3]]))

    # S5: many small chunks, uint8.
    n, shard = (1024, 256) if full else (256, 128)
    ds = Dataset("s5_N", (n,) * 3, "uint8", "N", 51)
    codecs = {"zstd3": ([bytes_codec(), zstd(3)], "zstd 3"),
              "blosc_lz4": ([bytes_codec(), blosc("lz4", 5, "shuffle", 1)], "blosc lz4 5")}
    picks = 2000 if full else 500
    for key, (chain, label) in codecs.items():
        plain = Variant(f"plain_{key}", ds, f"{label}, 32^3", v3_metadata(ds.shape, "uint8", (32,) * 3, chain))
        sharded = Variant(f"sharded_{key}", ds, f"{label}, shards {shard}^3 / 32^3",
                          v3_metadata(ds.shape, "uint8", (shard,) * 3, [sharding((32,) * 3, chain)]))
        for v in (plain, sharded):
            cases.append(Case("S5", "read all", v, "read_all", READ_PEERS))
            cases.append(Case("S5", f"{picks} random 32^3 chunks", v, "selections", READ_PEERS,
                              selections=random_grid_cells(ds.shape, (32,) * 3, picks, seed=52),
                              note="one (inner) chunk at a time; p50/p99 per chunk"))

    # S8: writes and round trips of the S1 and S2 arrays.
    for v in (s1["P"]["zstd"], s1["N"]["zstd"], s1["N"]["sharded"], s2["lz4"]):
        peers = READ_PEERS if v is s1["N"]["sharded"] else FLOOR_PEERS
        cases.append(Case("S8", "write all", v, "write_all", peers))
        cases.append(Case("S8", "round trip", v, "roundtrip", peers,
                          note="read all, then write all to a new array of the same metadata"))

    # S10: ML loader random access: batches of whole samples.
    shape = (128, 16, 640, 1280) if full else (32, 8, 256, 256)
    ds = Dataset("s10_N", shape, "float32", "N", 101)
    frame = (1, 1, shape[2], shape[3])
    sample = (1, shape[1], shape[2], shape[3])
    batch, batches = (8, 16) if full else (8, 8)
    rng = np.random.default_rng(102)
    picks = [int(i) for i in rng.integers(0, shape[0], batch * batches)]
    selections = [[i, [0, shape[1]], [0, shape[2]], [0, shape[3]]] for i in picks]
    for codec_key, chain, label in (("none", [bytes_codec()], "none"), ("zstd1", [bytes_codec(), zstd(1)], "zstd 1")):
        chunked = Variant(f"chunks_{codec_key}", ds, f"{label}, chunks 1x1x{shape[2]}x{shape[3]}",
                          v3_metadata(shape, "float32", frame, chain),
                          h5={"chunks": frame} if codec_key == "none" else None)
        sharded = Variant(f"shards_{codec_key}", ds, f"{label}, shards 1x{shape[1]}x{shape[2]}x{shape[3]}",
                          v3_metadata(shape, "float32", sample, [sharding(frame, chain)]))
        for v in (chunked, sharded):
            peers = READ_PEERS + (["h5py"] if v.h5 else [])
            cases.append(Case("S10", f"{batches} batches of {batch} samples", v, "selections", peers,
                              selections=selections, group=batch,
                              note="one sample at a time; p50/p99 per batch"))
    return cases


SCENARIOS = ("S1", "S2", "S3", "S4", "S5", "S8", "S10")

DESCRIPTIONS = {
    "S1": "zarrs-benchmark replica: uint16 cube, P and N families",
    "S2": "Zarr v2 blosc parity (N family)",
    "S3": "format overhead: uncompressed float32 (R family)",
    "S4": "deflate against HDF5 (N family)",
    "S5": "many small chunks: uint8 (N family)",
    "S8": "writes and round trips of the S1 and S2 arrays",
    "S10": "ML loader random access: float32 samples (N family)",
}
