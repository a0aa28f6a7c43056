"""Reads the arrays that gpu_tests' GpuWrite.ExportForZarrPython wrote from device memory
with zarr-python, and checks every value:

    python tools/gpu_bench/check_gpu_written.py DIR
"""
import sys

import numpy as np
import zarr

root = sys.argv[1]
names = ["v3_blosc_lz4_shuffle", "v3_blosc_lz4_bitshuffle_crc32c", "v3_numcodecs_lz4", "v3_crc32c",
         "v2_blosc", "v2_lz4_big_endian",
         # one 400x600 chunk: LZ4 blocks of several segments, crc32c over device-built frames
         "v3_large_numcodecs_lz4_crc32c_crc32c", "v3_large_blosc_1MiB_blocks_crc32c"]
for name in names:
    a = zarr.open_array(f"{root}/{name}", mode="r")
    shape = (400, 600) if name.startswith("v3_large") else (200, 300)
    expected = (0.5 * np.arange(shape[0] * shape[1], dtype=np.float32)).reshape(shape)
    values = a[...]
    assert values.shape == expected.shape, (name, values.shape)
    assert np.array_equal(values.astype(np.float32), expected), name
    print(f"{name}: zarr-python {zarr.__version__} reads {a.nchunks} chunks, all values match")
print("all arrays match")
