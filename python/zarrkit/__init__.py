"""zarrkit: Zarr v2 and v3 arrays for NumPy, on a parallel C++ engine.

>>> import numpy as np, zarrkit
>>> a = zarrkit.create_array("data.zarr", shape=(1000, 1000), chunks=(100, 100), dtype="f4")
>>> a[:10, :10] = np.arange(100).reshape(10, 10)
>>> a[0, :3]
array([0., 1., 2.], dtype=float32)

The API follows zarr-python 3 (``open``, ``open_array``, ``open_group``,
``create_array``, ``create_group``; ``Array`` and ``Group``). ``zarrkit.config``
holds runtime settings; ``decode_chunks`` and ``read_chunks`` decode many stored
chunks at once (into NumPy or device arrays); ``zarrkit.zarr_pipeline`` plugs
zarrkit's codecs into zarr-python itself; ``read_devices``, ``write_devices`` and
``split_selection`` spread one array over several GPUs, and ``to_dask`` makes a Dask array
(CuPy blocks with ``device=True``); ``zarrkit.storage`` has the stores;
``zarrkit.errors`` the exceptions.
"""

from __future__ import annotations

from zarrkit import config, errors, storage
from zarrkit._batch import decode_chunks, read_chunks
from zarrkit._multi_device import read_devices, split_selection, to_dask, write_devices
from zarrkit.api import (
    array,
    consolidate_metadata,
    create_array,
    create_group,
    group,
    open,
    open_array,
    open_consolidated,
    open_group,
)
from zarrkit.array import Array, ArrayInfo
from zarrkit.group import Group

__version__ = "0.1.0"

__all__ = [
    "Array",
    "ArrayInfo",
    "Group",
    "__version__",
    "array",
    "config",
    "consolidate_metadata",
    "create_array",
    "create_group",
    "decode_chunks",
    "errors",
    "group",
    "open",
    "open_array",
    "open_consolidated",
    "open_group",
    "read_chunks",
    "read_devices",
    "split_selection",
    "storage",
    "to_dask",
    "write_devices",
]
