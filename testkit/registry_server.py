"""A real registry for tests: Debian's docker-registry (distribution 2.8) on 127.0.0.1.

Plain HTTP, or htpasswd (bcrypt) authentication with TLS from a CA the test
generates; the engine trusts that CA through /etc/docker/certs.d/<host:port>/.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import requests
import yaml

REGISTRY_BIN = shutil.which("docker-registry") or "/usr/bin/docker-registry"
CERTS_D = Path("/etc/docker/certs.d")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def make_ca_and_cert(directory: Path, host: str = "127.0.0.1") -> tuple[Path, Path, Path]:
    """A throw-away CA and a server certificate for `host` signed by it: (ca, cert, key)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = dt.datetime.now(dt.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "scheduler-build test CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(minutes=5))
          .not_valid_after(now + dt.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True, content_commitment=False,
                                       key_encipherment=False, data_encipherment=False, key_agreement=False,
                                       encipher_only=False, decipher_only=False), critical=True)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host)]))
            .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5)).not_valid_after(now + dt.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address(host))]), critical=False)
            .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .sign(ca_key, hashes.SHA256()))
    directory.mkdir(parents=True, exist_ok=True)
    ca_path, cert_path, key_path = directory / "ca.crt", directory / "server.crt", directory / "server.key"
    ca_path.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL, serialization.NoEncryption()))
    return ca_path, cert_path, key_path


class Registry:
    def __init__(self, workdir: Path, user: str = "", password: str = "", tls: bool = False):
        self.workdir = workdir
        self.storage = workdir / "storage"
        self.storage.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.host = f"127.0.0.1:{self.port}"
        self.user, self.password, self.tls = user, password, tls
        self.proc: subprocess.Popen | None = None
        self.log = workdir / "registry.log"
        self.ca: Path | None = None
        config: dict = {
            "version": 0.1,
            "log": {"level": "info", "accesslog": {"disabled": True}},
            "storage": {"filesystem": {"rootdirectory": str(self.storage)}, "delete": {"enabled": True}},
            "http": {"addr": self.host},
        }
        if user:
            import bcrypt

            htpasswd = workdir / "htpasswd"
            htpasswd.write_text(f"{user}:{bcrypt.hashpw(password.encode(), bcrypt.gensalt(rounds=5)).decode()}\n")
            config["auth"] = {"htpasswd": {"realm": "scheduler-build-test", "path": str(htpasswd)}}
        if tls:
            self.ca, cert, key = make_ca_and_cert(workdir / "tls")
            config["http"]["tls"] = {"certificate": str(cert), "key": str(key)}
        self.config = workdir / "config.yml"
        self.config.write_text(yaml.safe_dump(config, sort_keys=True))

    @property
    def scheme(self) -> str:
        return "https" if self.tls else "http"

    def start(self) -> "Registry":
        # The registry reads REGISTRY_* variables as configuration: keep ours out.
        env = {k: v for k, v in os.environ.items() if not k.startswith("REGISTRY_")}
        self.proc = subprocess.Popen([REGISTRY_BIN, "serve", str(self.config)], stdout=open(self.log, "ab"), stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"docker-registry exited: {self.log.read_text()[-2000:]}")
            try:
                requests.get(f"{self.scheme}://{self.host}/v2/", timeout=2, verify=str(self.ca) if self.ca else True)
                return self
            except requests.exceptions.ConnectionError:
                time.sleep(0.1)
        raise RuntimeError(f"docker-registry did not answer on {self.host}")

    def kill(self) -> None:
        """SIGKILL, as a crash: no graceful shutdown of uploads in flight."""
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def trust_in_engine(self) -> Path:
        """Install the CA where the engine (and our client) look: certs.d/<host:port>/ca.crt."""
        target = CERTS_D / self.host
        target.mkdir(parents=True, exist_ok=True)
        shutil.copy2(self.ca, target / "ca.crt")
        return target

    def get(self, path: str, **kwargs) -> requests.Response:
        auth = (self.user, self.password) if self.user else None
        return requests.get(f"{self.scheme}://{self.host}{path}", auth=auth, verify=str(self.ca) if self.ca else True, timeout=30, **kwargs)
