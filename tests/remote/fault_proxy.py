"""An HTTP/1.1 proxy between zarrkit and a real server that breaks chosen requests.

    proxy = FaultProxy(upstream_port)
    proxy.inject("short", method="GET", path=r"/c/", times=2)

The next two GETs whose path matches /c/ get the fault; everything else passes through
unchanged. Faults:

  status500      answer 500 without asking the server
  slowdown       answer 503 with S3's SlowDown error document, without asking the server
  reset          reset the connection before the request reaches the server
  truncate_upload  send the server only half of the request body, then reset both sides
  lost_response  let the server process the request, then reset instead of answering
  short          send the server's headers and half of the body, then reset
  stall          send the server's headers and half of the body, then go silent for
                 `stall_seconds` before closing
  lying_short    send half of the body with a Content-Length that matches it (a
                 self-consistent but truncated answer; Content-Range is left as it was)
"""

import http.client
import re
import socket
import socketserver
import struct
import threading
import time
from collections import Counter

FAULTS = {"status500", "slowdown", "reset", "truncate_upload", "lost_response", "short", "stall", "lying_short"}

SLOWDOWN_BODY = (b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code>'
                 b"<Message>Please reduce your request rate.</Message><RequestId>proxy</RequestId></Error>")


class _Rule:
    def __init__(self, fault, method, path, times):
        self.fault, self.method, self.path, self.times = fault, method, re.compile(path or ""), times


class _Abort(Exception):
    """The fault ended the connection."""


def _reset(sock):
    """Closes with a TCP reset rather than an orderly FIN."""
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.close()
    except OSError:
        pass


class FaultProxy:
    def __init__(self, upstream_port, upstream_host="127.0.0.1", stall_seconds=3.0):
        self.upstream = (upstream_host, upstream_port)
        self.stall_seconds = stall_seconds
        self.applied = Counter()  # fault -> times applied
        self.requests = 0
        self.connections = 0  # client connections accepted
        self._rules = []
        self._lock = threading.Lock()
        proxy = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self):
                with proxy._lock:
                    proxy.connections += 1
                try:
                    while proxy._serve_one(self):
                        pass
                except (_Abort, ConnectionError, OSError):
                    pass

        class Server(socketserver.ThreadingTCPServer):
            daemon_threads = True
            allow_reuse_address = True

        self._server = Server(("127.0.0.1", 0), Handler)
        self.port = self._server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def inject(self, fault, method=None, path=None, times=1):
        assert fault in FAULTS, fault
        with self._lock:
            self._rules.append(_Rule(fault, method, path, times))

    def clear(self):
        with self._lock:
            self._rules.clear()
            self.applied.clear()
            self.requests = 0
            self.connections = 0

    def close(self):
        self._server.shutdown()
        self._server.server_close()

    def _take(self, method, path):
        with self._lock:
            self.requests += 1
            for rule in self._rules:
                if rule.times > 0 and (rule.method is None or rule.method == method) and rule.path.search(path):
                    rule.times -= 1
                    self.applied[rule.fault] += 1
                    return rule.fault
        return None

    # ---- one request on a kept-alive client connection; False when the connection ends ----
    def _serve_one(self, handler):
        line = handler.rfile.readline(65537)
        if not line:
            return False
        method, target, _version = line.decode("latin-1").rstrip("\r\n").split(" ", 2)
        headers = []
        while True:
            h = handler.rfile.readline(65537)
            if h in (b"\r\n", b"\n", b""):
                break
            name, _, value = h.decode("latin-1").partition(":")
            headers.append((name.strip(), value.strip()))
        length = next((int(v) for n, v in headers if n.lower() == "content-length"), 0)
        body = handler.rfile.read(length) if length else b""
        client_closes = any(n.lower() == "connection" and v.lower() == "close" for n, v in headers)

        fault = self._take(method, target.split("?")[0])
        sock = handler.connection
        if fault == "reset":
            _reset(sock)
            raise _Abort()
        if fault == "status500":
            self._send(handler, 500, "Internal Server Error", [("Content-Type", "text/plain")], b"injected", method)
            return not client_closes
        if fault == "slowdown":
            self._send(handler, 503, "Slow Down", [("Content-Type", "application/xml")], SLOWDOWN_BODY, method)
            return not client_closes
        if fault == "truncate_upload":
            self._forward_truncated(method, target, headers, body)
            _reset(sock)
            raise _Abort()

        status, reason, response_headers, response_body = self._forward(method, target, headers, body)
        if fault == "lost_response":
            _reset(sock)
            raise _Abort()
        if fault in ("short", "stall") and response_body:
            half = response_body[: len(response_body) // 2]
            head = self._head(status, reason, response_headers, len(response_body))
            sock.sendall(head + half)
            if fault == "stall":
                time.sleep(self.stall_seconds)
            _reset(sock)
            raise _Abort()
        if fault == "lying_short" and response_body:
            response_body = response_body[: len(response_body) // 2]
        self._send(handler, status, reason, response_headers, response_body, method)
        return not client_closes

    def _forward(self, method, target, headers, body):
        connection = http.client.HTTPConnection(*self.upstream, timeout=30)
        try:
            connection.putrequest(method, target, skip_host=True, skip_accept_encoding=True)
            for name, value in headers:
                if name.lower() not in ("connection", "keep-alive"):
                    connection.putheader(name, value)
            connection.putheader("Connection", "close")
            connection.endheaders(body if body else None)
            response = connection.getresponse()
            data = response.read()
            kept = [(n, v) for n, v in response.getheaders()
                    if n.lower() not in ("connection", "keep-alive", "transfer-encoding")]
            if method == "HEAD":
                return response.status, response.reason, kept, b""
            kept = [(n, v) for n, v in kept if n.lower() != "content-length"]
            return response.status, response.reason, kept, data
        finally:
            connection.close()

    def _forward_truncated(self, method, target, headers, body):
        upstream = socket.create_connection(self.upstream, timeout=30)
        try:
            head = f"{method} {target} HTTP/1.1\r\n" + "".join(f"{n}: {v}\r\n" for n, v in headers) + "\r\n"
            upstream.sendall(head.encode("latin-1") + body[: len(body) // 2])
            time.sleep(0.05)
        finally:
            _reset(upstream)

    @staticmethod
    def _head(status, reason, headers, content_length, method="GET"):
        lines = [f"HTTP/1.1 {status} {reason}"] + [f"{n}: {v}" for n, v in headers]
        if method != "HEAD":
            lines.append(f"Content-Length: {content_length}")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

    def _send(self, handler, status, reason, headers, body, method):
        if method == "HEAD":
            handler.connection.sendall(self._head(status, reason, headers, 0, "HEAD"))
            return
        handler.connection.sendall(self._head(status, reason, headers, len(body)) + body)
