"""The control plane's credentials: its certificates (through scheduler_build.pki) and kubeconfigs.

One CA signs the API server's serving certificate and the client certificates of
an admin (group system:masters) and of the scheduler's identity (user
system:kube-scheduler); a separate RSA key pair signs service-account tokens.
"""

from __future__ import annotations

import base64
import ipaddress
from pathlib import Path

import yaml

from scheduler_build import pki
from scheduler_build.atomic import write_atomic

# The service network only feeds the allocator of Service IPs; nothing routes it.
SERVICE_CIDR = "10.0.0.0/24"
CLUSTER_NAME = "scheduler-build"
# With a node (cluster.up --node): the API server's client certificate towards the
# kubelet, the identities the bootstrap RBAC (or the Node authorizer) knows, and the
# kubelet's serving certificate.
NODE_ROLES = ("apiserver-kubelet-client", "controller-manager", "kube-proxy", "kubelet", "kubelet-serving")


def apiserver_sans(extra_sans: tuple[str, ...] = ()) -> list:
    """The serving certificate's names: localhost, the in-cluster service names and IPs, plus extras."""
    from cryptography import x509  # optional: only when a cluster starts

    service_ip = str(next(ipaddress.ip_network(SERVICE_CIDR).hosts()))
    dns = ["localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
           "kubernetes.default.svc.cluster.local"]
    ips = ["127.0.0.1", service_ip]
    for extra in extra_sans:
        try:
            ipaddress.ip_address(extra)
            ips.append(extra)
        except ValueError:
            dns.append(extra)
    return [x509.DNSName(d) for d in dns] + [x509.IPAddress(ipaddress.ip_address(i)) for i in ips]


def _node_certs(ca, node_name: str, node_ip: str) -> dict:
    from cryptography import x509  # optional: only when a cluster starts
    from cryptography.x509.oid import ExtendedKeyUsageOID

    client, server = ExtendedKeyUsageOID.CLIENT_AUTH, ExtendedKeyUsageOID.SERVER_AUTH
    serving_sans = [x509.DNSName(node_name), x509.IPAddress(ipaddress.ip_address(node_ip))]
    return {
        "apiserver-kubelet-client": pki.issue(ca, pki.name("kube-apiserver-kubelet-client", "system:masters"), client),
        "controller-manager": pki.issue(ca, pki.name("system:kube-controller-manager"), client),
        "kube-proxy": pki.issue(ca, pki.name("system:kube-proxy"), client),
        "kubelet": pki.issue(ca, pki.name(f"system:node:{node_name}", "system:nodes"), client),
        "kubelet-serving": pki.issue(ca, pki.name(node_name), server, serving_sans),
    }


def generate_pki(directory: Path, extra_sans: tuple[str, ...] = (), node: tuple[str, str] | None = None) -> dict[str, Path]:
    """CA, apiserver serving cert, admin and scheduler client certs, service-account key pair.

    With `node` (name, IP), also the NODE_ROLES certificates. Returns the written paths by file name (ca.crt, ca.key, ..., sa.key, sa.pub). Keys are written 0600.
    """
    from cryptography.x509.oid import ExtendedKeyUsageOID  # optional: only when a cluster starts

    directory.mkdir(parents=True, exist_ok=True)
    ca = pki.new_ca("scheduler-build-ca")
    issued = {
        "ca": ca,
        "apiserver": pki.issue(ca, pki.name("kube-apiserver"), ExtendedKeyUsageOID.SERVER_AUTH,
                               apiserver_sans(extra_sans)),
        "admin": pki.issue(ca, pki.name("scheduler-build-admin", "system:masters"), ExtendedKeyUsageOID.CLIENT_AUTH),
        "scheduler": pki.issue(ca, pki.name("system:kube-scheduler"), ExtendedKeyUsageOID.CLIENT_AUTH),
    }
    if node is not None:
        issued.update(_node_certs(ca, *node))
    sa_key = pki.rsa_key()
    contents: dict[str, tuple[bytes, int]] = {}
    for role in issued:
        contents[f"{role}.crt"] = (issued[role].cert_pem, 0o644)
        contents[f"{role}.key"] = (issued[role].key_pem, 0o600)
    contents["sa.key"] = (pki.pem_key(sa_key), 0o600)
    contents["sa.pub"] = (pki.pem_public_key(sa_key), 0o644)
    paths = {file: directory / file for file in contents}
    for file, (data, mode) in contents.items():
        write_atomic(paths[file], data, mode)
    return paths


def kubeconfig(server: str, ca_pem: bytes, user: str, cert_pem: bytes | None = None,
               key_pem: bytes | None = None, token: str | None = None) -> dict:
    """A self-contained kubeconfig (data embedded, so it can be mounted into a container)."""

    def b64(data: bytes) -> str:
        return base64.b64encode(data).decode()

    creds: dict[str, str] = {}
    if cert_pem is not None and key_pem is not None:
        creds = {"client-certificate-data": b64(cert_pem), "client-key-data": b64(key_pem)}
    if token is not None:
        creds["token"] = token
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": CLUSTER_NAME, "cluster": {"server": server, "certificate-authority-data": b64(ca_pem)}}],
        "users": [{"name": user, "user": creds}],
        "contexts": [{"name": CLUSTER_NAME, "context": {"cluster": CLUSTER_NAME, "user": user}}],
        "current-context": CLUSTER_NAME,
    }


def write_kubeconfig(path: Path, config: dict) -> Path:
    write_atomic(path, yaml.safe_dump(config, sort_keys=True), 0o600)
    return path
