"""zarrkit's C++ engine (private; use the zarrkit package)."""

# Generated: python -m nanobind.stubgen -m zarrkit._zarrkit -o python/zarrkit/_zarrkit.pyi
# (tests/python/test_stubs.py checks that it matches the module).

from collections.abc import Mapping, Sequence


def get_settings() -> dict:
    """The settings engine calls run under, as a dict of every setting."""

def memory_setting() -> str:
    """
    The `memory` setting alone (what every read asks; get_settings() builds every setting).
    """

def default_settings() -> dict:
    """
    The defaults: zarrkit's, with the ZARRKIT_* environment variables applied.
    """

def set_settings(changes: dict) -> None:
    """Changes the given settings (all or none) of engine calls."""

def memory_available(memory: str) -> bool:
    """True when this build and machine can allocate that kind of memory."""

def gpu_read_stats() -> dict:
    """
    Counters of the device reads over the life of the process (empty without the CUDA path): chunks decoded on the GPU and on the host, bytes uploaded from pinned and pageable memory, time in the host phase and waiting for the GPU, pinned staging arenas made (and the time it took). For benchmarks and diagnosis.
    """

def chunk_cache_stats(device: int | None = None) -> dict:
    """
    Counters of the process's decoded-chunk cache (or of GPU `device`'s): hits, misses, insertions, evictions, invalidations by writes, values dropped because a write came while they were read, and the entries, bytes and budget it holds now.
    """

def clear_chunk_caches() -> None:
    """
    Empties every decoded-chunk cache of the process (host, arrays' own, GPUs'); the counters stay.
    """

def hardware_threads() -> int:
    """The number of hardware threads (what num_threads=0 means)."""

class Store:
    """A key-value store of the engine."""

    @property
    def kind(self) -> str:
        """
        'local', 'gds', 'memory', 'gpu-memory', 's3', 'http', 'zip' or 'other'.
        """

    @property
    def root(self) -> str | None:
        """
        The directory of a local or GDS store or the file of a zip store, else None.
        """

    @property
    def writable(self) -> bool: ...

    def describe(self) -> str: ...

    def get(self, key: str) -> object:
        """The value of `key` as a uint8 NumPy array, or None."""

    def get_many(self, keys: Sequence[str]) -> list:
        """
        The values of `keys` (uint8 NumPy arrays, None where absent), fetched together: in parallel on the thread pool, or with many requests in flight on remote stores.
        """

    def set(self, key: str, value: object) -> None: ...

    def erase(self, key: str) -> None: ...

    def erase_prefix(self, prefix: str) -> None: ...

    def exists(self, key: str) -> bool: ...

    def list(self, prefix: str = '') -> list[str]:
        """Every key below `prefix`, sorted."""

    def list_dir(self, prefix: str = '') -> tuple[list[str], list[str]]:
        """(keys, prefixes) directly below `prefix`."""

    def same_as(self, arg: Store, /) -> bool: ...

    def gds_options(self) -> tuple[str, int, int]:
        """A GDS store's (mode, threads, piece_bytes), as resolved."""

    def gds_device_path(self) -> tuple[str, str]:
        """
        A GDS store's device read path ('cufile', 'cufile-compat' or 'compat') and what was found.
        """

    def gds_stats(self) -> dict[str, int]:
        """A GDS store's device reads so far, per path."""

    def gds_read_values_into_device(self, keys: Sequence[str], pointers: Sequence[int], capacities: Sequence[int]) -> list[int | None]:
        """
        Reads the whole values of `keys` into device memory at `pointers` (each holding `capacities` bytes) through a GDS store; returns their sizes (None: absent; larger than the capacity: not read).
        """

    def flush(self) -> None:
        """Writes pending changes (zip stores); nothing to do for other stores."""

    def close(self) -> None:
        """Flushes and closes a zip store; nothing to do for other stores."""

def local_store(root: str, read_only: bool = False, create: bool = True) -> Store: ...

def gds_store(root: str, read_only: bool = False, create: bool = True, mode: str | None = None, threads: int = 0, piece_bytes: int = 0) -> Store:
    """
    A directory store whose reads into device memory go through GPUDirect Storage (mode 'auto', 'cufile' or 'compat'; None, and threads or piece_bytes 0: the gpu.gds_* settings).
    """

def memory_store() -> Store: ...

def key_map_store(inner: Store, renames: Mapping[str, str], held: Mapping[str, bytes]) -> Store:
    """
    A read-only view of `inner`: key -> inner key for each of `renames`, plus `held` values.
    """

def gpu_memory_store() -> Store: ...

def zip_store(path: str, read_only: bool = True, truncate: bool = False) -> Store: ...

def open_location(location: str, for_writing: bool = False) -> tuple[Store, str]:
    """Opens the store holding `location` and returns (store, node path)."""

def python_store(bridge: object) -> Store:
    """
    A store whose values live in a zarr-python store, reached through a zarrkit._zarr_store.ZarrStoreBridge (held weakly: the caller keeps the bridge for as long as the store is used).
    """

def python_store_bridge(store: Store) -> object:
    """
    The bridge of a store made by python_store (None once it is gone), else None.
    """

class Array:
    """An array in a store (the engine side of zarrkit.Array)."""

    def read_var(self, key: object) -> tuple:
        """
        (shape, elements in C order) of a variable-length string or bytes array.
        """

    def write_var(self, key: object, values: list, shape: Sequence[int], write_empty_chunks: bool | None = None) -> None: ...

    def read_var_coordinates(self, coordinates: list) -> tuple:
        """
        (shape, elements in C order) at the coordinates of a string or bytes array.
        """

    def write_var_coordinates(self, coordinates: list, values: list, shape: Sequence[int], write_empty_chunks: bool | None = None) -> None: ...

    def read_var_mask(self, mask: object) -> tuple:
        """
        (shape, elements in C order) where the mask is true, of a string or bytes array.
        """

    def write_var_mask(self, mask: object, values: list, shape: Sequence[int], write_empty_chunks: bool | None = None) -> None: ...

    def read_coordinates_into(self, coordinates: list, out: object) -> None:
        """
        Reads the elements at the coordinates (one int64 array per axis, broadcast together) into `out`.
        """

    def write_coordinates(self, coordinates: list, value: object, write_empty_chunks: bool | None = None) -> None: ...

    def read_mask(self, mask: object) -> object:
        """The selected elements (C order) as the bytes of a 1-d array."""

    def write_mask(self, mask: object, value: object, write_empty_chunks: bool | None = None) -> None: ...

    def block_selection_shape(self, key: object) -> list[int]: ...

    def read_var_blocks(self, key: object) -> tuple:
        """
        (shape, elements in C order) of whole chunks of a string or bytes array.
        """

    def write_var_blocks(self, key: object, values: list, shape: Sequence[int], write_empty_chunks: bool | None = None) -> None: ...

    def read_blocks_into(self, key: object, out: object) -> None: ...

    def write_blocks(self, key: object, value: object, write_empty_chunks: bool | None = None) -> None: ...

    def resize(self, shape: Sequence[int]) -> None: ...

    def append(self, value: object, axis: int) -> list[int]: ...

    def warm_up_gpu(self, key: object) -> None:
        """
        Makes ahead what reading the selection into device memory needs (pinned staging, device memory, streams, kernels), so that the first read costs what later ones do.
        """

    def read_into_device(self, key: object, pointer: int, shape: Sequence[int], byte_strides: Sequence[int]) -> None:
        """
        Reads the selection into device memory at `pointer` (a device array's __cuda_array_interface__: its shape and byte strides).
        """

    def write_from_device(self, key: object, pointer: int, shape: Sequence[int], byte_strides: Sequence[int], stream: int, write_empty_chunks: bool | None = None) -> None:
        """
        Writes the device array at `pointer` (the selection's shape, any byte strides) to the selection, after waiting for `stream` (0: none).
        """

    def split_selection(self, key: object, axis: int, parts: int) -> list:
        """
        The selection cut along array axis `axis` into at most `parts` index tuples, at stored chunk (shard) boundaries.
        """

    def read_into_devices(self, parts: Sequence[tuple[object, int, Sequence[int], Sequence[int]]]) -> None:
        """
        Reads every (index, pointer, shape, byte_strides) part at once, each on the device that holds it.
        """

    def write_from_devices(self, parts: Sequence[tuple[object, int, Sequence[int], Sequence[int], int]], write_empty_chunks: bool | None = None) -> None:
        """
        Writes every (index, pointer, shape, byte_strides, stream) part at once, each from its device.
        """

    @property
    def path(self) -> str: ...

    @property
    def store(self) -> Store: ...

    @property
    def shape(self) -> list[int]: ...

    @property
    def chunk_shape(self) -> list[int]:
        """
        The chunk grid's chunk shape (the shard shape for sharded arrays); for a rectilinear grid its largest chunk.
        """

    @property
    def is_rectilinear(self) -> bool:
        """Whether the chunk grid is rectilinear (chunk sizes listed per axis)."""

    @property
    def chunk_grid_shape(self) -> list[int]:
        """The number of chunks (shards, for sharded arrays) along each axis."""

    @property
    def chunk_sizes(self) -> list[list[int]]:
        """Per axis, the sizes of the chunks (shards) inside the array's extent."""

    @property
    def zarr_format(self) -> int: ...

    @property
    def dtype_name(self) -> str: ...

    @property
    def numpy_descr(self) -> str:
        """A NumPy dtype descriptor as JSON text."""

    @property
    def fill_value_bytes(self) -> bytes: ...

    @property
    def fill_value_is_null(self) -> bool: ...

    def metadata_json(self) -> str:
        """
        The metadata document (zarr.json, or .zarray plus "attributes") as JSON text.
        """

    def attributes_json(self) -> str: ...

    def set_attributes(self, attributes_json: str) -> None: ...

    def selection_shape(self, key: object) -> list[int]: ...

    def read_into(self, key: object, out: object) -> None:
        """
        Reads the selection `key` into `out` (a writable array of the selection's shape).
        """

    def write(self, key: object, value: object, write_empty_chunks: bool | None = None) -> None:
        """
        Writes `value` (an array of the selection's shape or one that broadcasts to it).
        """

    def storage_info(self) -> object: ...

def open_array(store: Store, path: str = '') -> Array: ...

def create_array(store: Store, path: str, spec_json: str, fill: object | None, overwrite: bool) -> Array: ...

class Group:
    """A group in a store (the engine side of zarrkit.Group)."""

    @property
    def path(self) -> str: ...

    @property
    def store(self) -> Store: ...

    @property
    def zarr_format(self) -> int: ...

    def attributes_json(self) -> str: ...

    def set_attributes(self, attributes_json: str) -> None: ...

    def members(self) -> list:
        """
        Direct children as (name, path, 'array'|'group', zarr_format), sorted by name.
        """

    def walk(self) -> list:
        """Every node below, depth first, as (name, path, kind, zarr_format)."""

def open_group(store: Store, path: str = '', use_consolidated: bool | None = None) -> Group:
    """
    Opens the group at path. use_consolidated: None uses consolidated metadata where present, True requires it, False reads the store.
    """

def consolidate_metadata(store: Store, path: str = '') -> Group:
    """
    Stores the metadata of every node below the group consolidated (v3 inline in zarr.json, v2 .zmetadata) and returns the group, opened with it.
    """

def create_group(store: Store, path: str, zarr_format: int, attributes_json: str, overwrite: bool) -> Group: ...

def probe_node(store: Store, path: str = '') -> object:
    """('array'|'group', zarr_format) of the node at `path`, or None."""

class CodecChain:
    """A validated codec chain for one data type."""

    @property
    def numpy_descr(self) -> str: ...

    @property
    def codecs_json(self) -> str: ...

    @property
    def chunk_shape(self) -> list[int] | None:
        """
        The chunk shape of the array metadata the chain came from (None for a bare codecs list).
        """

    @property
    def fill_bytes(self) -> object:
        """
        The fill value's bytes (native byte order) of the array metadata the chain came from.
        """

    def decode(self, chunks: list, shape: Sequence[int], fill: object | None) -> list:
        """
        Decodes a batch (bytes-like or None each) into uint8 arrays of the decoded chunks (C order, native byte order), None where the input was None.
        """

    def decode_into(self, chunks: list, shape: Sequence[int], fill: object | None, selections: list, outs: list, device: bool) -> None:
        """
        Decodes a batch (bytes-like or None each; None is the fill value) straight into caller memory: the part selections[i] of chunk i into outs[i] = (address, shape, byte strides), device memory when `device`, else host memory.
        """

    def read_into(self, store: Store, keys: Sequence[str], shape: Sequence[int], fill: object | None, selections: list, outs: list, device: bool) -> None:
        """
        decode_into with chunk i read from `store` at keys[i] (absent: the fill value), the reads landing in the staging memory of the device batches.
        """

    def encode(self, chunks: list, shape: Sequence[int], fill: object | None) -> list:
        """
        Encodes a batch of C-contiguous chunk arrays (or None) into uint8 arrays.
        """

def chain_from_v3(codecs_json: str, data_type_json: str) -> CodecChain:
    """
    The chain of a v3 "codecs" list; UnsupportedError when a codec is not built in.
    """

def chain_from_v2_metadata(zarray_json: str) -> CodecChain:
    """
    The chain a v2 .zarray document implies (compressor, filters, order, byte order).
    """

def chain_from_array_metadata(metadata_json: str) -> CodecChain:
    """
    The chain and chunk spec of an array's metadata document (v3 zarr.json or v2 .zarray).
    """

def codec_v2_form(entry_json: str, dtype_json: str) -> str:
    """The numcodecs form of a v3 codec entry."""
