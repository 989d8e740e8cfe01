"""Registries the node's containerd pulls from: one `hosts.toml` per registry host.

`cluster.up --node --registry URL` writes `<state>/node/containerd/certs.d/<host:port>/hosts.toml`
(containerd's CRI reads that directory as its registry `config_path`), so a pod naming
`127.0.0.1:5000/acme/app@sha256:...` is pulled from the registry `image.push` targets:
plain HTTP when the URL says `http://`, TLS verified against `--registry-ca` (else the
CA the engine trusts for that host, /etc/docker/certs.d/<host:port>/ca.crt, else the
system's) when it says `https://`. Credentials are not configured here: pods name
imagePullSecrets, which the kubelet hands to containerd per pull.
"""

from __future__ import annotations

import ipaddress
import shutil
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from scheduler_build import templating
from scheduler_build.atomic import write_atomic
from scheduler_build.errors import UserError
from scheduler_build.engine.credentials import engine_ca

EXAMPLE = "e.g. --registry http://127.0.0.1:5000 (plain HTTP) or --registry https://127.0.0.1:5443 --registry-ca ca.crt"


@dataclass(frozen=True)
class NodeRegistry:
    host: str  # host:port, as image references name it
    scheme: str  # http or https
    ca: str = ""  # CA bundle the node verifies the registry with (https only); empty: the system's

    @property
    def server(self) -> str:
        return f"{self.scheme}://{self.host}"


def _one(url: str) -> tuple[str, str]:
    """(scheme, host:port) of one --registry URL, or one clear error."""
    if "://" not in url:
        raise UserError(f"--registry {url}: say how the node reaches it",
                        f"http://{url} for plain HTTP, https://{url} for TLS")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise UserError(f"--registry {url}: the scheme must be http or https, not {parts.scheme!r}", EXAMPLE)
    if parts.username or parts.password:
        raise UserError(f"--registry {url}: credentials do not belong in the URL",
                        "drop them; pods name an imagePullSecret, which the kubelet passes to each pull")
    if parts.path.strip("/") or parts.query or parts.fragment:
        raise UserError(f"--registry {url}: only scheme, host and port", f"{parts.scheme}://{parts.netloc}")
    try:
        port = parts.port
    except ValueError:
        raise UserError(f"--registry {url}: the port is not a number from 1 to 65535", EXAMPLE) from None
    if not parts.hostname:
        raise UserError(f"--registry {url}: no host", EXAMPLE)
    host = parts.hostname
    try:
        host = f"[{host}]" if ipaddress.ip_address(host).version == 6 else host
    except ValueError:
        pass
    return parts.scheme, f"{host}:{port}" if port else host


def _check_ca(path: str) -> str:
    ca = Path(path).expanduser()
    try:
        text = ca.read_text(errors="replace")
    except OSError as exc:
        raise UserError(f"--registry-ca {path}: cannot read it ({exc.strerror or exc})",
                        "name the PEM CA bundle the registry's certificate chains to") from None
    if "-----BEGIN CERTIFICATE-----" not in text:
        raise UserError(f"--registry-ca {path}: not a PEM certificate", "name the registry's CA certificate (PEM)")
    return str(ca.resolve())


def parse(urls: list[str], ca_cert: str = "") -> list[NodeRegistry]:
    """The node's registries, checked before anything starts; one per host, in the order given."""
    found: dict[str, NodeRegistry] = {}
    for url in (u.strip() for u in urls):
        if not url:
            continue
        scheme, host = _one(url)
        if host in found and found[host].scheme != scheme:
            raise UserError(f"--registry: {host} is named as both http and https", "name it once")
        ca = ""
        if scheme == "https":
            trusted = ca_cert or engine_ca(host)
            ca = _check_ca(str(trusted)) if trusted else ""
        found[host] = NodeRegistry(host=host, scheme=scheme, ca=ca)
    if ca_cert and not any(r.scheme == "https" for r in found.values()):
        raise UserError(f"--registry-ca {ca_cert}: no https registry to use it for",
                        "add --registry https://HOST:PORT, or leave --registry-ca out")
    return list(found.values())


def hosts_toml(registry: NodeRegistry, ca_path: str = "") -> str:
    return templating.render("node/hosts.toml.j2", host=registry.host, server=registry.server, ca=ca_path)


def write(certs_dir: Path, registries: list[NodeRegistry]) -> list[Path]:
    """hosts.toml (and a copy of the CA) per registry under containerd's certs.d."""
    written = []
    for registry in registries:
        directory = certs_dir / registry.host  # containerd looks the host up by this name
        directory.mkdir(parents=True, exist_ok=True)
        ca_path = ""
        if registry.ca:
            ca_path = str(directory / "ca.crt")
            shutil.copyfile(registry.ca, ca_path)
        write_atomic(directory / "hosts.toml", hosts_toml(registry, ca_path))
        written.append(directory / "hosts.toml")
    return written
