"""Mutual TLS between the scheduler and the reference extender: names, paths, certificates, the plan.

Pure parts (tested on their own): the Secret names and mount paths the manifests
use (`layout`), the Secret objects for a set of PEMs (`secret_objects`), what an
existing set of Secrets allows (`plan`: keep, create, or rotate) and the steps
of a rotation (`rotation_steps`). Private keys only ever go into Secrets, which
`inv deploy` applies server-side; the rendered files name the Secrets, never
their content. The CA's private key is not kept anywhere: it signs the two leaf
certificates in memory and is dropped, so nothing can mint another client
certificate later; renewing means a new CA (a rotation).
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
from dataclasses import dataclass, field
from typing import Any, Sequence

from scheduler_build import pki

# Where the pods find the files (one projected volume each).
SCHEDULER_TLS_DIR = "/etc/scheduler-build/extender-tls"
EXTENDER_TLS_DIR = "/etc/scheduler-build/tls"
CA_KEY = "ca.crt"
# The pod-template annotation whose change rolls both Deployments onto new certificates.
CERTS_ANNOTATION = "scheduler-build.io/extender-tls-sha256"
# The extender Deployment's annotation naming the Service host its certificate must cover.
SERVICE_ANNOTATION = "scheduler-build.io/extender-tls-service"
DAYS = 365
RENEW_BEFORE_DAYS = 30


@dataclass(frozen=True)
class Layout:
    ca_secret: str
    serving_secret: str
    client_secret: str


def layout(extender_name: str) -> Layout:
    return Layout(ca_secret=f"{extender_name}-tls-ca", serving_secret=f"{extender_name}-tls-serving",
                  client_secret=f"{extender_name}-tls-client")


def client_tls_config() -> dict:
    """The extender entry's tlsConfig: the scheduler pod's mounted client certificate and the CA bundle."""
    return {"certFile": f"{SCHEDULER_TLS_DIR}/client.crt", "keyFile": f"{SCHEDULER_TLS_DIR}/client.key",
            "caFile": f"{SCHEDULER_TLS_DIR}/{CA_KEY}"}


def health_port(port: int) -> int:
    """The extender's plain-HTTP probe port (kubelet probes carry no client certificate)."""
    return port + 1 if port < 65535 else port - 1


def dns_names(extender_name: str, namespace: str) -> list[str]:
    """The serving certificate's SANs: every name the Service answers to in-cluster."""
    base = f"{extender_name}.{namespace}"
    return [extender_name, base, f"{base}.svc", f"{base}.svc.cluster.local"]


@dataclass(frozen=True)
class Certs:
    """PEM bytes: the trust bundle (one or more CA certificates) and both leaves with their keys."""

    ca_bundle: bytes
    serving_cert: bytes
    serving_key: bytes
    client_cert: bytes
    client_key: bytes

    def fingerprint(self) -> str:
        """A digest of the public parts: what the pods must restart for when it changes."""
        return hashlib.sha256(self.ca_bundle + self.serving_cert + self.client_cert).hexdigest()


def issue(extender_name: str, namespace: str, days: float = DAYS) -> tuple[bytes, Certs]:
    """A new CA and both leaves. Returns (the CA certificate, Certs trusting only it)."""
    from cryptography import x509  # optional: only when certificates are made
    from cryptography.x509.oid import ExtendedKeyUsageOID

    ca = pki.new_ca(f"{extender_name}.{namespace} extender CA", days=days)
    serving = pki.issue(ca, pki.name(f"{extender_name}.{namespace}.svc"), ExtendedKeyUsageOID.SERVER_AUTH,
                        [x509.DNSName(n) for n in dns_names(extender_name, namespace)], days=days)
    client = pki.issue(ca, pki.name(f"{extender_name}-client", "scheduler-build"), ExtendedKeyUsageOID.CLIENT_AUTH,
                       days=days)
    return ca.cert_pem, Certs(ca.cert_pem, serving.cert_pem, serving.key_pem, client.cert_pem, client.key_pem)


def secret_objects(names: Layout, namespace: str, labels: dict, certs: Certs) -> list[dict]:
    """The three Secrets for `certs` (server-side applied by inv deploy, never written to a file)."""
    def tls_secret(name: str, cert: bytes, key: bytes) -> dict:
        return {"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/tls",
                "metadata": {"name": name, "namespace": namespace, "labels": labels},
                "data": {"tls.crt": _b64(cert), "tls.key": _b64(key)}}

    return [{"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
             "metadata": {"name": names.ca_secret, "namespace": namespace, "labels": labels},
             "data": {CA_KEY: _b64(certs.ca_bundle)}},
            tls_secret(names.serving_secret, certs.serving_cert, certs.serving_key),
            tls_secret(names.client_secret, certs.client_cert, certs.client_key)]


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def certs_from_secrets(ca: dict | None, serving: dict | None, client: dict | None) -> Certs | None:
    """Certs from the three Secrets' `data` maps (base64, as the API returns them).

    None when any Secret or key is missing or undecodable."""
    if not (ca and serving and client):
        return None
    try:
        raw = [base64.b64decode(m[k]) for m, k in ((ca, CA_KEY), (serving, "tls.crt"), (serving, "tls.key"),
                                                   (client, "tls.crt"), (client, "tls.key"))]
    except (KeyError, TypeError, ValueError):
        return None
    return Certs(*raw)


def split_bundle(bundle: bytes) -> list[bytes]:
    """The PEM certificates of a bundle, one each."""
    marker = b"-----END CERTIFICATE-----"
    return [part.strip() + b"\n" + marker + b"\n" for part in bundle.split(marker)[:-1]]


@dataclass
class Plan:
    action: str  # "keep", "create" or "rotate"
    reasons: list[str] = field(default_factory=list)


def problems(certs: Certs, sans: Sequence[str], now: dt.datetime,
             renew_before: dt.timedelta = dt.timedelta(days=RENEW_BEFORE_DAYS)) -> list[str]:
    """Why a set of certificates cannot be kept (empty: it can)."""
    from cryptography import x509  # optional: only when certificates are checked
    from cryptography.exceptions import InvalidSignature
    from cryptography.x509.oid import ExtendedKeyUsageOID

    try:
        cas = [x509.load_pem_x509_certificate(p) for p in split_bundle(certs.ca_bundle)]
        leaves = {"serving": (x509.load_pem_x509_certificate(certs.serving_cert), certs.serving_key,
                              ExtendedKeyUsageOID.SERVER_AUTH),
                  "client": (x509.load_pem_x509_certificate(certs.client_cert), certs.client_key,
                             ExtendedKeyUsageOID.CLIENT_AUTH)}
    except ValueError as exc:
        return [f"unreadable certificate: {exc}"]
    if not cas:
        return ["the CA bundle holds no certificate"]
    out: list[str] = []
    for role, (cert, key_pem, usage) in leaves.items():
        out += _leaf_problems(role, cert, key_pem, usage, cas, now, renew_before, InvalidSignature)
    serving = leaves["serving"][0]
    try:
        have = set(serving.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
                   .get_values_for_type(x509.DNSName))
    except x509.ExtensionNotFound:
        have = set()
    missing = [n for n in sans if n not in have]
    if missing:
        out.append(f"the serving certificate does not cover {', '.join(missing)}")
    return out


def _leaf_problems(role: str, cert: Any, key_pem: bytes, usage: Any, cas: list, now: dt.datetime,
                   renew_before: dt.timedelta, invalid: type) -> list[str]:
    from cryptography import x509  # optional: only when certificates are checked
    from cryptography.hazmat.primitives import serialization

    out = []
    if cert.not_valid_after_utc - renew_before <= now:
        out.append(f"the {role} certificate expires {cert.not_valid_after_utc:%Y-%m-%d} (renewal is due)")
    if not any(_signed_by(cert, ca, invalid) for ca in cas):
        out.append(f"the {role} certificate is not signed by a CA of the bundle")
    try:
        key = serialization.load_pem_private_key(key_pem, password=None)
        if key.public_key().public_numbers() != cert.public_key().public_numbers():
            out.append(f"the {role} key does not match its certificate")
    except (ValueError, TypeError, AttributeError):
        out.append(f"the {role} key is unreadable")
    try:
        if usage not in cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value:
            out.append(f"the {role} certificate lacks its extended key usage")
    except x509.ExtensionNotFound:
        out.append(f"the {role} certificate lacks its extended key usage")
    return out


def _signed_by(cert: Any, ca: Any, invalid: type) -> bool:
    try:
        cert.verify_directly_issued_by(ca)
        return True
    except (ValueError, TypeError, invalid):
        return False


def plan(existing: Certs | None, sans: Sequence[str], now: dt.datetime, rotate: bool = False) -> Plan:
    """What deploy does: keep valid certificates, create missing ones, rotate on request or when invalid."""
    if existing is None:
        return Plan("create", ["no certificates yet"])
    if rotate:
        return Plan("rotate", ["--rotate-certs"])
    found = problems(existing, sans, now)
    return Plan("rotate", found) if found else Plan("keep")


def rotation_steps(old: Certs, new_ca: bytes, new: Certs) -> list[Certs]:
    """The states a rotation goes through, each rolled out before the next, so that any
    old pod and any new pod always trust each other:
    1. the bundle trusts the old CA(s) and the new one, the leaves stay old;
    2. the new leaves (every pod already trusts their CA);
    3. the bundle trusts only the new CA (no pod still presents an old leaf)."""
    both = old.ca_bundle.rstrip(b"\n") + b"\n" + new_ca
    return [Certs(both, old.serving_cert, old.serving_key, old.client_cert, old.client_key),
            Certs(both, new.serving_cert, new.serving_key, new.client_cert, new.client_key),
            new]
