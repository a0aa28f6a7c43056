"""The Python peers, as the worker process drives them. Each opens an array (not timed) and
then reads or writes it the way its users would, with the thread count it is given:

- tensorstore: data_copy_concurrency and file_io_concurrency limited to the thread count; no
  cache pool (nothing is cached between repetitions); file_io_sync off, as no peer fsyncs.
- zarr: zarr-python 3 with its default codec pipeline; threading.max_workers = threads,
  async.concurrency = max(its default 10, threads).
- zarrs: the same zarr-python with the zarrs codec pipeline, strict (a fallback to the Python
  pipeline is an error, not a silent zarr-python run); threading.max_workers = threads.
- memmap: numpy.memmap of the raw values, copied into a new array; with several threads the
  copy is split along axis 0 (NumPy releases the GIL while copying).
- h5py: the HDF5 twin, chunk cache off (no peer caches chunks between reads). HDF5 runs one
  thread whatever the thread count.
"""

from __future__ import annotations

import concurrent.futures
from pathlib import Path

import numpy as np


def to_index(selection) -> tuple:
    return tuple(a if isinstance(a, int) else slice(a[0], a[1]) for a in selection)


class Peer:
    threads_used: int | None = None  # None: as given

    def __init__(self, threads: int):
        self.threads = threads

    def version(self) -> str:
        raise NotImplementedError

    def open_read(self, job: dict):
        raise NotImplementedError

    def open_write(self, path: str):
        raise NotImplementedError

    def read_all(self, array) -> np.ndarray:
        return array[...]

    def read(self, array, index: tuple) -> np.ndarray:
        return array[index]

    def write_all(self, array, values: np.ndarray) -> None:
        array[...] = values


class TensorstorePeer(Peer):
    def __init__(self, threads: int):
        super().__init__(threads)
        import tensorstore as ts

        self.ts = ts
        self.context = ts.Context({
            "data_copy_concurrency": {"limit": threads},
            "file_io_concurrency": {"limit": threads},
            "cache_pool": {"total_bytes_limit": 0},
            "file_io_sync": False,
        })

    def version(self) -> str:
        import importlib.metadata

        return importlib.metadata.version("tensorstore")

    def _open(self, path: str, read_only: bool):
        driver = "zarr3" if (Path(path) / "zarr.json").exists() else "zarr"
        mode = {"read": True} if read_only else {"read": True, "write": True}
        return self.ts.open({"driver": driver, "kvstore": {"driver": "file", "path": path}},
                            open=True, context=self.context, **mode).result()

    def open_read(self, job):
        return self._open(job["array"], True)

    def open_write(self, path):
        return self._open(path, False)

    def read_all(self, array):
        return array.read().result()

    def read(self, array, index):
        return array[index].read().result()

    def write_all(self, array, values):
        array.write(values).result()


class ZarrPeer(Peer):
    pipeline = None

    def __init__(self, threads: int):
        super().__init__(threads)
        import zarr

        self.zarr = zarr
        settings = {"threading.max_workers": threads, "async.concurrency": max(10, threads)}
        if self.pipeline:
            settings.update({"codec_pipeline.path": self.pipeline, "codec_pipeline.strict": True})
        zarr.config.set(settings)

    def version(self) -> str:
        return self.zarr.__version__

    def open_read(self, job):
        return self.zarr.open_array(self.zarr.storage.LocalStore(job["array"], read_only=True), mode="r")

    def open_write(self, path):
        return self.zarr.open_array(self.zarr.storage.LocalStore(path), mode="r+")


class ZarrsPeer(ZarrPeer):
    pipeline = "zarrs.ZarrsCodecPipeline"

    def version(self) -> str:
        import importlib.metadata

        return f"{importlib.metadata.version('zarrs')} (zarr {self.zarr.__version__})"


class MemmapPeer(Peer):
    def version(self) -> str:
        return f"numpy {np.__version__}"

    def open_read(self, job):
        return np.memmap(job["raw"], dtype=job["dtype"], mode="r", shape=tuple(job["shape"]))

    def read_all(self, array):
        out = np.empty(array.shape, array.dtype)
        if self.threads == 1 or array.shape[0] < 2:
            np.copyto(out, array)
            return out
        bounds = np.linspace(0, array.shape[0], min(self.threads, array.shape[0]) + 1).astype(int)
        with concurrent.futures.ThreadPoolExecutor(self.threads) as pool:
            list(pool.map(lambda i: np.copyto(out[bounds[i]:bounds[i + 1]], array[bounds[i]:bounds[i + 1]]),
                          range(len(bounds) - 1)))
        return out

    def read(self, array, index):
        return np.array(array[index])


class H5Peer(Peer):
    threads_used = 1

    def version(self) -> str:
        import h5py

        return f"h5py {h5py.__version__} (HDF5 {h5py.version.hdf5_version})"

    def open_read(self, job):
        import h5py

        self.file = h5py.File(job["h5"], "r", rdcc_nbytes=0)
        return self.file["data"]


PEERS = {"tensorstore": TensorstorePeer, "zarr": ZarrPeer, "zarrs": ZarrsPeer, "memmap": MemmapPeer,
         "h5py": H5Peer}
