"""zarrkit.config: settings, global and scoped."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import zarrkit
from zarrkit.errors import UnsupportedError


def test_defaults_and_set():
    settings = zarrkit.config.as_dict()
    assert settings == zarrkit.config.defaults()
    assert {k: settings[k] for k in ("num_threads", "write_empty_chunks", "memory")} == {
        "num_threads": 0, "write_empty_chunks": False, "memory": "host"}
    zarrkit.config.set(num_threads=3)
    assert zarrkit.config.get("num_threads") == 3
    assert zarrkit.config.num_threads == 3
    with zarrkit.config.set(num_threads=1, write_empty_chunks=True):
        assert zarrkit.config.as_dict() == {**settings, "num_threads": 1, "write_empty_chunks": True}
    assert zarrkit.config.num_threads == 3
    assert zarrkit.config.write_empty_chunks is False
    zarrkit.config.reset()
    assert zarrkit.config.num_threads == 0


def test_bad_settings_change_nothing():
    with pytest.raises(KeyError, match="unknown zarrkit setting"):
        zarrkit.config.set(num_threads=2, threads=4)
    with pytest.raises(ValueError, match="num_threads"):
        zarrkit.config.set(num_threads=-1)
    with pytest.raises(ValueError, match="write_empty_chunks"):
        zarrkit.config.set(write_empty_chunks="yes")
    assert zarrkit.config.num_threads == 0
    with pytest.raises(AttributeError):
        zarrkit.config.no_such_setting  # noqa: B018


def test_write_empty_chunks_setting(store):
    a = zarrkit.create_array(store, shape=(12,), chunks=(4,), dtype="i4")
    a[:] = 0
    assert a.nchunks_initialized == 0
    with zarrkit.config.set(write_empty_chunks=True):
        a[:] = 0
    assert a.nchunks_initialized == 3


@pytest.mark.parametrize("threads", [1, 2, 5])
def test_results_do_not_depend_on_threads(store, threads):
    data = np.random.default_rng(3).random((50, 60))
    with zarrkit.config.set(num_threads=threads):
        a = zarrkit.create_array(store, data=data, chunks=(7, 11))
        np.testing.assert_array_equal(a[3:44, ::5], data[3:44, ::5])


def test_enable_gpu_without_gpu():
    if zarrkit.config.gpu_available():
        pytest.skip("this machine and build have a GPU")
    with pytest.raises(UnsupportedError, match="no GPU support|no usable GPU|no GPU can be used"):
        zarrkit.config.enable_gpu()
    assert zarrkit.config.memory == "host"


def test_gpu_memory_store_without_gpu():
    if zarrkit.config.gpu_available():
        pytest.skip("this machine and build have a GPU")
    with pytest.raises(UnsupportedError, match="no GPU support|no usable GPU|no GPU can be used|no CUDA device"):
        zarrkit.storage.GpuMemoryStore()


# Every setting with its default when no ZARRKIT_* variable is set (docs/settings.md).
DEFAULTS = {
    "num_threads": 0,
    "write_empty_chunks": False,
    "durable_writes": False,
    "memory": "host",
    "shard_coalesce_gap_bytes": 64 << 10,
    "shard_read_window_bytes": 4 << 20,
    "remote.concurrency": 64,
    "remote.event_loops": 0,
    "remote.connect_timeout_ms": 10000,
    "remote.stall_timeout_ms": 30000,
    "remote.request_timeout_ms": 0,
    "remote.max_attempts": 8,
    "remote.retry_initial_delay_ms": 100,
    "remote.retry_max_delay_ms": 5000,
    "remote.retry_total_ms": 60000,
    "remote.verify_tls": True,
    "remote.ca_bundle": "",
    "remote.coalesce_gap_bytes": 256 << 10,
    "remote.coalesce_max_bytes": 32 << 20,
    "remote.s3_multipart_threshold_bytes": 64 << 20,
    "remote.s3_part_size_bytes": 16 << 20,
    "gpu.batch_budget_bytes": 256 << 20,
    "gpu.pipeline_depth": 4,
    "gpu.devices_sharing_host": 1,
    "gpu.nvcomp_decode": False,
    "gpu.nvcomp_min_chunks": 512,
    "gpu.zstd_kernels": "auto",
    "gpu.deflate_kernels": "auto",
    "gpu.gds_direct": True,
    "gpu.gds_mode": "auto",
    "gpu.gds_threads": 16,
    "gpu.gds_piece_bytes": 4 << 20,
    "gpu.cufile_library": "",
    "gpu.nvcomp_library": "",
    "cache.host_bytes": 0,
    "cache.array_bytes": 0,
    "cache.device_bytes": 0,
}


def _python(code: str, **variables: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ZARRKIT_") and k not in (
        "AWS_CA_BUNDLE", "CURL_CA_BUNDLE")}
    env.update(variables)
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)


def test_every_setting_and_its_default():
    proc = _python("import json, zarrkit; print(json.dumps(zarrkit.config.as_dict()))")
    assert proc.returncode == 0, proc.stderr
    import json

    settings = json.loads(proc.stdout)
    # The resource limits' defaults follow the machine's memory (docs/settings.md): bounded here.
    max_chunk, max_request = settings.pop("max_chunk_bytes"), settings.pop("max_request_bytes")
    assert 64 << 20 <= max_chunk <= 2 << 30
    assert max_chunk <= max_request <= 8 << 30
    assert settings == DEFAULTS


def test_the_environment_sets_the_defaults_once():
    code = (
        "import os, zarrkit\n"
        "d = zarrkit.config.defaults()\n"
        "print(d['remote.concurrency'], d['gpu.nvcomp_decode'], d['gpu.gds_mode'], d['gpu.batch_budget_bytes'])\n"
        "zarrkit.config.set({'remote.concurrency': 3})\n"
        "os.environ['ZARRKIT_HTTP_CONCURRENCY'] = '9'  # read once: no effect now\n"
        "zarrkit.config.reset()\n"
        "print(zarrkit.config.get('remote.concurrency'))\n"
    )
    proc = _python(code, ZARRKIT_HTTP_CONCURRENCY="7", ZARRKIT_NVCOMP_DECODE="1", ZARRKIT_GDS_MODE="compat",
                   ZARRKIT_GPU_BATCH_BYTES="64M")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["7", "True", "compat", str(64 << 20), "7"]


def test_a_malformed_variable_is_an_error_naming_it():
    code = (
        "import zarrkit\n"
        "try:\n"
        "    zarrkit.config.as_dict()\n"
        "except zarrkit.errors.InvalidArgumentError as e:\n"
        "    print(e)\n"
    )
    proc = _python(code, ZARRKIT_GPU_PIPELINE_DEPTH="deep")
    assert proc.returncode == 0, proc.stderr
    assert 'ZARRKIT_GPU_PIPELINE_DEPTH="deep"' in proc.stdout


def test_own_kernels_take_auto_on_off_and_booleans():
    with zarrkit.config.set({"gpu.zstd_kernels": True, "gpu.deflate_kernels": "off"}):
        assert zarrkit.config.get("gpu.zstd_kernels") == "on"
        assert zarrkit.config.get("gpu.deflate_kernels") == "off"
        with zarrkit.config.set({"gpu.zstd_kernels": False, "gpu.deflate_kernels": "auto"}):
            assert zarrkit.config.get("gpu.zstd_kernels") == "off"
            assert zarrkit.config.get("gpu.deflate_kernels") == "auto"
    assert zarrkit.config.get("gpu.zstd_kernels") == "auto"


def test_grouped_settings_set_get_and_scoped():
    before = zarrkit.config.as_dict()
    zarrkit.config.set({"remote.concurrency": 8, "gpu": {"nvcomp_decode": True, "gds_mode": "compat"}})
    assert zarrkit.config.get("remote.concurrency") == 8
    assert zarrkit.config.get("gpu.nvcomp_decode") is True
    assert zarrkit.config.get("gpu.gds_mode") == "compat"
    with zarrkit.config.set({"remote.concurrency": 2, "remote.stall_timeout_ms": 1500}, num_threads=2):
        assert zarrkit.config.get("remote.concurrency") == 2
        assert zarrkit.config.get("remote.stall_timeout_ms") == 1500
        with zarrkit.config.set({"gpu.batch_budget_bytes": 1 << 20, "remote.ca_bundle": "/tmp/ca.pem"}):
            assert zarrkit.config.get("gpu.batch_budget_bytes") == 1 << 20
            assert zarrkit.config.get("remote.concurrency") == 2
            assert zarrkit.config.get("remote.ca_bundle") == "/tmp/ca.pem"
        assert zarrkit.config.get("gpu.batch_budget_bytes") == before["gpu.batch_budget_bytes"]
        assert zarrkit.config.get("remote.ca_bundle") == before["remote.ca_bundle"]
    assert zarrkit.config.get("remote.concurrency") == 8
    assert zarrkit.config.get("remote.stall_timeout_ms") == before["remote.stall_timeout_ms"]
    assert zarrkit.config.num_threads == before["num_threads"]
    zarrkit.config.reset()
    assert zarrkit.config.as_dict() == before


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("gpu.pipeline_depth", 9),
        ("gpu.pipeline_depth", 0),
        ("gpu.devices_sharing_host", 0),
        ("gpu.gds_mode", "posix"),
        ("gpu.zstd_kernels", "sometimes"),
        ("gpu.nvcomp_decode", 1),
        ("remote.verify_tls", "no"),
        ("remote.concurrency", 0),
        ("remote.max_attempts", 1.5),
        ("remote.ca_bundle", 3),
        ("gpu.gds_piece_bytes", (1 << 30) + 1),
        ("num_threads", 4097),
    ],
)
def test_bad_grouped_values_change_nothing(name, value):
    before = zarrkit.config.as_dict()
    with pytest.raises(ValueError, match=name.replace(".", r"\.")):
        zarrkit.config.set({"remote.concurrency": 5, name: value})
    assert zarrkit.config.as_dict() == before
    with pytest.raises(KeyError, match="unknown zarrkit setting 'gpu.no_such'"):
        zarrkit.config.set({"gpu": {"no_such": 1}})


def test_a_gds_store_takes_the_settings_it_is_made_under(tmp_path):
    with zarrkit.config.set({"gpu.gds_mode": "compat", "gpu.gds_threads": 3, "gpu.gds_piece_bytes": 1 << 20}):
        store = zarrkit.storage.GDSStore(tmp_path / "g.zarr")
    assert store.options == {"mode": "compat", "threads": 3, "piece_bytes": 1 << 20}
    # Options given to the store win.
    with zarrkit.config.set({"gpu.gds_threads": 3}):
        store = zarrkit.storage.GDSStore(tmp_path / "h.zarr", threads=5)
    assert store.options["threads"] == 5


def test_durable_writes_sync_what_local_and_zip_stores_write(tmp_path):
    """With durable_writes on, the stores opened under it fsync each file before its rename
    (seen through the CLI tests' LD_PRELOAD shim, which logs every fsync and rename)."""
    zarrkit_bin = os.environ.get("ZARRKIT_BIN")
    shim = os.path.join(os.path.dirname(zarrkit_bin), "libzarrkit_fault_shim.so") if zarrkit_bin else ""
    if not os.path.exists(shim):
        pytest.skip("the fault shim is built beside the zarrkit binary (set ZARRKIT_BIN)")
    code = (
        "import sys, numpy as np, zarrkit\n"
        "durable = sys.argv[1] == '1'\n"
        "with zarrkit.config.set(durable_writes=durable):\n"
        "    zarrkit.create_array(sys.argv[2] + '/a.zarr', data=np.arange(12).reshape(3, 4), chunks=(3, 2))\n"
        "    z = zarrkit.storage.ZipStore(sys.argv[2] + '/a.zip', mode='w')\n"
        "    zarrkit.create_array(z, data=np.arange(4), chunks=(2,))\n"
        "    z.close()\n"
    )
    for durable in ("1", "0"):
        out = tmp_path / durable
        out.mkdir()
        log = tmp_path / f"calls-{durable}.log"
        env = {**os.environ, "LD_PRELOAD": shim, "ZARRKIT_FAULT_LOG": str(log)}
        proc = subprocess.run([sys.executable, "-c", code, durable, str(out)], env=env, capture_output=True, text=True,
                              timeout=120)
        assert proc.returncode == 0, proc.stderr
        calls = log.read_text().splitlines() if log.exists() else []
        synced = [c.split(" ", 1)[1] for c in calls if c.startswith("fsync ")]
        if durable == "1":
            # zarr.json and 2 chunks of the array, each file before its rename; the zip archive.
            assert sum(".zarrkit-tmp." in p and "a.zarr" in p for p in synced) == 3, calls
            assert any(".a.zip.zarrkit-tmp." in p for p in synced), calls
            assert str(out) in synced, calls  # the directory the archive was renamed into
        else:
            assert synced == [], calls
