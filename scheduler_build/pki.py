"""Certificate generation: one home for the CA, leaf certificates and PEM encoding.

Used by the local control plane (`cluster.pki`: CA, serving and client certs,
service-account keys) and by config validation (`config.validate`: throw-away
TLS stand-ins at the paths an extender's tlsConfig names). Keys are ECDSA P-256.

`cryptography` is imported inside each function: it is only needed when a
cluster starts or a configuration with TLS files is validated.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any, Sequence


@dataclass(frozen=True)
class Issued:
    """A private key and the certificate issued for it (cryptography objects)."""

    key: Any
    cert: Any

    @property
    def key_pem(self) -> bytes:
        return pem_key(self.key)

    @property
    def cert_pem(self) -> bytes:
        return pem_cert(self.cert)


def pem_key(key: Any) -> bytes:
    """A private key as unencrypted PKCS#8 PEM."""
    from cryptography.hazmat.primitives import serialization  # optional: only when certificates are made

    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def pem_cert(cert: Any) -> bytes:
    from cryptography.hazmat.primitives import serialization  # optional: only when certificates are made

    return cert.public_bytes(serialization.Encoding.PEM)


def pem_public_key(key: Any) -> bytes:
    """The public half of a private key as SubjectPublicKeyInfo PEM."""
    from cryptography.hazmat.primitives import serialization  # optional: only when certificates are made

    return key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)


def name(common_name: str, organization: str | None = None) -> Any:
    """An x509 Name: O (when given) then CN."""
    from cryptography import x509  # optional: only when certificates are made
    from cryptography.x509.oid import NameOID

    attrs = [x509.NameAttribute(NameOID.COMMON_NAME, common_name)]
    if organization:
        attrs.insert(0, x509.NameAttribute(NameOID.ORGANIZATION_NAME, organization))
    return x509.Name(attrs)


def _validity(days: float) -> tuple[dt.datetime, dt.datetime]:
    now = dt.datetime.now(dt.timezone.utc)
    return now - dt.timedelta(hours=1), now + dt.timedelta(days=days)


def _key_usage(ca: bool) -> Any:
    from cryptography import x509  # optional: only when certificates are made

    return x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=False,
                         data_encipherment=False, key_agreement=False, key_cert_sign=ca, crl_sign=ca,
                         encipher_only=False, decipher_only=False)


def new_ca(common_name: str, days: float = 365, key_usage: bool = True) -> Issued:
    """A self-signed CA certificate (with key usage unless key_usage=False), with subject and authority
    key ids: what OpenSSL's strict verification (Python 3.13's default, VERIFY_X509_STRICT) asks of a CA."""
    from cryptography import x509  # optional: only when certificates are made
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec

    key = ec.generate_private_key(ec.SECP256R1())
    subject = name(common_name)
    not_before, not_after = _validity(days)
    builder = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
               .serial_number(x509.random_serial_number()).not_valid_before(not_before).not_valid_after(not_after)
               .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
               .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
               .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(key.public_key()), critical=False))
    if key_usage:
        builder = builder.add_extension(_key_usage(ca=True), critical=True)
    return Issued(key, builder.sign(key, hashes.SHA256()))


def issue(ca: Issued, subject: Any, usage: Any, sans: Sequence[Any] = (), days: float = 365) -> Issued:
    """A leaf certificate signed by `ca` for one extended key usage (ExtendedKeyUsageOID.*).

    Critical basic constraints (not a CA) and key usage, its own subject key id and the CA's as
    authority key id: accepted by strict verification (Python 3.13's default), Go and OpenSSL."""
    from cryptography import x509  # optional: only when certificates are made
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec

    key = ec.generate_private_key(ec.SECP256R1())
    not_before, not_after = _validity(days)
    builder = (
        x509.CertificateBuilder().subject_name(subject).issuer_name(ca.cert.subject).public_key(key.public_key())
        .serial_number(x509.random_serial_number()).not_valid_before(not_before).not_valid_after(not_after)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(_key_usage(ca=False), critical=True)
        .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca.key.public_key()), critical=False)
    )
    if sans:
        builder = builder.add_extension(x509.SubjectAlternativeName(list(sans)), critical=False)
    return Issued(key, builder.sign(ca.key, hashes.SHA256()))


def rsa_key(bits: int = 2048) -> Any:
    """An RSA private key (the service-account signing key)."""
    from cryptography.hazmat.primitives.asymmetric import rsa  # optional: only when certificates are made

    return rsa.generate_private_key(public_exponent=65537, key_size=bits)


def self_signed_pems(common_name: str = "scheduler-build-validate", days: float = 1) -> dict[str, bytes]:
    """A throw-away self-signed CA whose certificate also serves as cert: PEMs by role (ca, cert, key)."""
    ca = new_ca(common_name, days=days, key_usage=False)
    return {"ca": ca.cert_pem, "cert": ca.cert_pem, "key": ca.key_pem}
