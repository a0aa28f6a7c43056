"""Real servers for the remote-store tests, started on 127.0.0.1 by the tests themselves:
moto's S3 server and nginx serving a directory (with Range support), or nginx adding a fixed
delay before each answer (loopback has no latency, object stores answer in ~10-50 ms; this
kernel has no netem). Each picks a free port, waits until it answers, and is stopped (and
its files removed) at the end.

Where nginx and its echo module live can be set with ZARRKIT_NGINX (the binary) and
ZARRKIT_NGINX_MODULES (the folder of ngx_http_echo_module.so), for machines where they are
unpacked into a folder rather than installed."""

import ctypes
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until_answering(url, process, log, timeout=60.0, cafile=None):
    """Polls `url` until any HTTP answer comes back; fails early if the process died.
    `cafile`: the certificate to trust for an HTTPS url."""
    context = ssl.create_default_context(cafile=str(cafile)) if cafile else None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{url}: the server exited with {process.returncode}:\n{Path(log).read_text()}")
        try:
            urllib.request.urlopen(url, timeout=2, context=context).close()
            return
        except urllib.error.HTTPError:
            return  # it answered, if only with an error status
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"{url}: no answer within {timeout} s:\n{Path(log).read_text()}")


def _die_with_parent():
    """Runs in the child before exec: the server gets SIGTERM if the test process dies, even
    in a crash that skips fixture teardown (Linux prctl PR_SET_PDEATHSIG)."""
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)
    except OSError:
        pass


def stop(process):
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


class MotoServer:
    """moto in server mode: an S3 endpoint at self.url (moto_server.py: conditional writes
    atomic, as S3's are)."""

    def __init__(self, workdir):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = Path(workdir) / "moto.log"
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
        env.update(AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing", AWS_DEFAULT_REGION="us-east-1")
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen(
                [sys.executable, str(Path(__file__).with_name("moto_server.py")), "127.0.0.1", str(self.port)],
                stdout=log, stderr=subprocess.STDOUT, env=env, cwd=workdir,
                preexec_fn=_die_with_parent)
        try:
            wait_until_answering(self.url + "/moto-api/", self.process, self.log)
        except Exception:
            stop(self.process)
            raise

    def close(self):
        stop(self.process)


NGINX_CONFIG = """\
{load_modules}
daemon off;
{user}
master_process {master};
worker_processes {workers};
pid {dir}/nginx.pid;
error_log {dir}/error.log warn;
events {{ worker_connections 2048; }}
http {{
  access_log off;
  client_body_temp_path {dir}/client_body;
  proxy_temp_path {dir}/proxy;
  fastcgi_temp_path {dir}/fastcgi;
  uwsgi_temp_path {dir}/uwsgi;
  scgi_temp_path {dir}/scgi;
  default_type application/octet-stream;
  keepalive_requests 10000;
{upstream}
  server {{
    listen 127.0.0.1:{port}{tls};
{locations}
  }}
}}
"""

STATIC_LOCATIONS = """\
    root {root};
    # Old names that redirect to the data (tests follow redirects).
    location /moved/ {{ rewrite ^/moved/(.*)$ /$1 permanent; }}
    location /found/ {{ rewrite ^/found/(.*)$ /moved/$1 redirect; }}"""

# Every request waits `delay` seconds (a timer in nginx's event loop: many requests wait at
# once), then is served: from `root`, or passed on to the upstream server unchanged (method,
# query, Host header, body), with kept-alive connections to it and no buffering.
DELAYED_LOCATIONS = """\
    location / {{ echo_sleep {delay}; echo_exec @serve; }}
    location @serve {{
{serve}
    }}"""
STATIC_SERVE = "      root {root};"
PROXY_SERVE = """\
      proxy_pass http://backend;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $http_host;
      proxy_buffering off;
      proxy_request_buffering off;
      client_max_body_size 0;"""
UPSTREAM = """\
  upstream backend {{ server {address}; keepalive 256; }}"""


def nginx_binary():
    if os.environ.get("ZARRKIT_NGINX"):
        return os.environ["ZARRKIT_NGINX"]
    return shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx", "/sbin/nginx") if os.access(p, os.X_OK)), None)


def echo_module():
    """The path of nginx's echo module (Debian: libnginx-mod-http-echo), or None."""
    folders = [os.environ["ZARRKIT_NGINX_MODULES"]] if os.environ.get("ZARRKIT_NGINX_MODULES") else []
    folders.append("/usr/lib/nginx/modules")
    return next((str(Path(f) / "ngx_http_echo_module.so") for f in folders
                 if (Path(f) / "ngx_http_echo_module.so").is_file()), None)


def self_signed_certificate(directory):
    """A key and a self-signed certificate for 127.0.0.1 (PEM files in `directory`); the
    certificate is its own CA, so it is also the bundle a client must trust."""
    import datetime

    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "zarrkit test server")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    directory = Path(directory)
    key_path, cert_path = directory / "server.key", directory / "server.pem"
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return key_path, cert_path


class Nginx:
    """nginx as the current user, serving `root` at self.url (byte ranges included); with
    tls=True over HTTPS with a self-signed certificate (self.certificate, the PEM file a
    client must trust).

    delay_ms: every answer is held back this long before nginx serves it (needs the echo
    module). upstream ("127.0.0.1:PORT"): instead of serving `root`, pass every request on
    to that server, after the delay (a slow network in front of moto, say). workers: nginx
    worker processes (one by default; more need nginx's master process, which is what
    self.process then is)."""

    def __init__(self, workdir, root, tls=False, delay_ms=None, upstream=None, workers=1):
        binary = nginx_binary()
        if binary is None:
            raise FileNotFoundError("nginx is not installed (scripts/setup installs nginx-light)")
        delayed = delay_ms is not None or upstream is not None
        module = echo_module() if delayed else None
        if delayed and module is None:
            raise FileNotFoundError("nginx's echo module is not installed (scripts/setup installs "
                                    "libnginx-mod-http-echo; or set ZARRKIT_NGINX_MODULES)")
        self.port = free_port()
        self.url = f"{'https' if tls else 'http'}://127.0.0.1:{self.port}"
        workdir = Path(workdir)
        config = workdir / "nginx.conf"
        tls_config = ""
        self.certificate = None
        if tls:
            key, self.certificate = self_signed_certificate(workdir)
            tls_config = f" ssl;\n    ssl_certificate {self.certificate};\n    ssl_certificate_key {key}"
        root = Path(root).resolve() if root is not None else None
        if not delayed:
            locations = STATIC_LOCATIONS.format(root=root)
        else:
            serve = PROXY_SERVE if upstream else STATIC_SERVE.format(root=root)
            locations = DELAYED_LOCATIONS.format(delay=f"{(delay_ms or 0) / 1000:.3f}", serve=serve)
        config.write_text(NGINX_CONFIG.format(
            dir=workdir, port=self.port, tls=tls_config, locations=locations,
            master="on" if workers > 1 else "off", workers=workers,
            # A master started as root gives its workers to "nobody", who cannot read the files.
            user="user root;" if workers > 1 and os.geteuid() == 0 else "",
            load_modules=f"load_module {module};" if module else "",
            upstream=UPSTREAM.format(address=upstream) if upstream else ""))
        self.log = workdir / "error.log"
        self.log.touch()
        self.process = subprocess.Popen([binary, "-e", str(self.log), "-p", str(workdir), "-c", str(config)],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
                                        preexec_fn=_die_with_parent)
        try:
            wait_until_answering(self.url + "/", self.process, self.log, cafile=self.certificate)
        except Exception:
            stop(self.process)
            raise

    def close(self):
        stop(self.process)
