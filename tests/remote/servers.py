"""Real servers for the remote-store tests, started on 127.0.0.1 by the tests themselves:
moto's S3 server and nginx serving a directory (with Range support). Each picks a free
port, waits until it answers, and is stopped (and its files removed) at the end."""

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
    """moto in server mode: an S3 endpoint at self.url."""

    def __init__(self, workdir):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = Path(workdir) / "moto.log"
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
        env.update(AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing", AWS_DEFAULT_REGION="us-east-1")
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port)],
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
daemon off;
master_process off;
worker_processes 1;
pid {dir}/nginx.pid;
error_log {dir}/error.log warn;
events {{ worker_connections 512; }}
http {{
  access_log off;
  client_body_temp_path {dir}/client_body;
  proxy_temp_path {dir}/proxy;
  fastcgi_temp_path {dir}/fastcgi;
  uwsgi_temp_path {dir}/uwsgi;
  scgi_temp_path {dir}/scgi;
  default_type application/octet-stream;
  keepalive_requests 10000;
  server {{
    listen 127.0.0.1:{port}{tls};
    root {root};
    # Old names that redirect to the data (tests follow redirects).
    location /moved/ {{ rewrite ^/moved/(.*)$ /$1 permanent; }}
    location /found/ {{ rewrite ^/found/(.*)$ /moved/$1 redirect; }}
  }}
}}
"""


def nginx_binary():
    return shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx", "/sbin/nginx") if os.access(p, os.X_OK)), None)


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
    client must trust)."""

    def __init__(self, workdir, root, tls=False):
        binary = nginx_binary()
        if binary is None:
            raise FileNotFoundError("nginx is not installed (scripts/setup installs nginx-light)")
        self.port = free_port()
        self.url = f"{'https' if tls else 'http'}://127.0.0.1:{self.port}"
        workdir = Path(workdir)
        config = workdir / "nginx.conf"
        tls_config = ""
        self.certificate = None
        if tls:
            key, self.certificate = self_signed_certificate(workdir)
            tls_config = f" ssl;\n    ssl_certificate {self.certificate};\n    ssl_certificate_key {key}"
        config.write_text(NGINX_CONFIG.format(dir=workdir, port=self.port, root=Path(root).resolve(), tls=tls_config))
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
