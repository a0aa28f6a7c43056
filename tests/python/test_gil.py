"""Reads release the GIL: chunks come from an HTTP server running in a thread of this very
process, which can only answer while the reading thread does not hold the GIL."""

from __future__ import annotations

import functools
import http.server
import threading

import numpy as np

import zarrkit


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


def test_read_releases_the_gil_during_io(tmp_path):
    # A held GIL would stall every request: fail fast instead of retrying for long.
    zarrkit.config.set(
        {"remote.stall_timeout_ms": 3000, "remote.retry_initial_delay_ms": 10, "remote.retry_max_delay_ms": 100})
    data = np.arange(120 * 90, dtype="f8").reshape(120, 90)
    zarrkit.create_array(tmp_path / "a.zarr", data=data, chunks=(10, 10), zarr_format=2)
    handler = functools.partial(_QuietHandler, directory=str(tmp_path))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        a = zarrkit.open(f"http://127.0.0.1:{server.server_address[1]}/a.zarr", mode="r")
        # 108 chunk requests, each answered by Python code in the server thread.
        np.testing.assert_array_equal(a[...], data)
        np.testing.assert_array_equal(a.oindex[[3, 50, 119], :], data[[3, 50, 119], :])
        del a
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
