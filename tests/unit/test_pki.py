"""scheduler_build.pki's certificates pass OpenSSL's strict verification (VERIFY_X509_STRICT, Python
3.13's default) on every Python, in a TLS handshake in memory; a leaf without the extensions strict
verification asks for is refused by the same check (the negative control)."""

from __future__ import annotations

import datetime as dt
import ipaddress
import ssl
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.x509.oid import ExtendedKeyUsageOID

from scheduler_build import pki

SERVER, CLIENT = ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH
LOCALHOST = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]


def _files(tmp: Path, label: str, issued: pki.Issued) -> tuple[str, str]:
    (tmp / f"{label}.crt").write_bytes(issued.cert_pem)
    (tmp / f"{label}.key").write_bytes(issued.key_pem)
    return str(tmp / f"{label}.crt"), str(tmp / f"{label}.key")


def _handshake(server: ssl.SSLContext, client: ssl.SSLContext) -> None:
    """A TLS handshake between two contexts through memory buffers (no socket)."""
    pipes = [ssl.MemoryBIO() for _ in range(4)]
    s = server.wrap_bio(pipes[0], pipes[1], server_side=True)
    c = client.wrap_bio(pipes[2], pipes[3], server_hostname="localhost")
    done = {"s": False, "c": False}
    for _ in range(20):
        for side, obj, out, into in (("c", c, pipes[3], pipes[0]), ("s", s, pipes[1], pipes[2])):
            if not done[side]:
                try:
                    obj.do_handshake()
                    done[side] = True
                except ssl.SSLWantReadError:
                    pass
            into.write(out.read())
        if all(done.values()):
            return
    raise AssertionError("handshake did not finish")


def _contexts(tmp: Path, ca: pki.Issued, serving: pki.Issued, client: pki.Issued) -> tuple[ssl.SSLContext, ...]:
    (tmp / "ca.crt").write_bytes(ca.cert_pem)
    server_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_ctx.load_cert_chain(*_files(tmp, "serving", serving))
    server_ctx.load_verify_locations(str(tmp / "ca.crt"))
    server_ctx.verify_mode = ssl.CERT_REQUIRED
    server_ctx.verify_flags |= ssl.VERIFY_X509_STRICT
    client_ctx = ssl.create_default_context(cafile=str(tmp / "ca.crt"))
    client_ctx.verify_flags |= ssl.VERIFY_X509_STRICT  # the 3.13 default, asked for on every Python
    client_ctx.load_cert_chain(*_files(tmp, "client", client))
    return server_ctx, client_ctx


def test_pki_certificates_pass_strict_verification_both_ways(tmp_path):
    ca = pki.new_ca("test-ca", days=1)
    serving = pki.issue(ca, pki.name("localhost"), SERVER, LOCALHOST, days=1)
    client = pki.issue(ca, pki.name("scheduler", "system:masters"), CLIENT, days=1)
    _handshake(*_contexts(tmp_path, ca, serving, client))


def _bare_leaf(ca: pki.Issued) -> pki.Issued:
    """What the test helpers made before: a leaf with names only (no key ids, no constraints)."""
    from cryptography.hazmat.primitives.asymmetric import ec

    key = ec.generate_private_key(ec.SECP256R1())
    now = dt.datetime.now(dt.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(pki.name("localhost")).issuer_name(ca.cert.subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(hours=1)).not_valid_after(now + dt.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName(LOCALHOST), critical=False).sign(ca.key, hashes.SHA256()))
    return pki.Issued(key, cert)


def test_negative_control_a_leaf_without_key_ids_is_refused_by_the_same_check(tmp_path):
    ca = pki.new_ca("test-ca", days=1)
    client = pki.issue(ca, pki.name("scheduler"), CLIENT, days=1)
    with pytest.raises(ssl.SSLCertVerificationError, match="Authority Key Identifier"):
        _handshake(*_contexts(tmp_path, ca, _bare_leaf(ca), client))


def test_ca_and_leaf_extensions_and_their_criticality():
    ca = pki.new_ca("test-ca", days=1)
    leaf = pki.issue(ca, pki.name("localhost"), SERVER, LOCALHOST, days=1)
    for cert, is_ca in ((ca.cert, True), (leaf.cert, False)):
        ext = cert.extensions
        assert ext.get_extension_for_class(x509.BasicConstraints).critical
        assert ext.get_extension_for_class(x509.BasicConstraints).value.ca is is_ca
        assert ext.get_extension_for_class(x509.KeyUsage).critical
        assert ext.get_extension_for_class(x509.KeyUsage).value.key_cert_sign is is_ca
        ski = ext.get_extension_for_class(x509.SubjectKeyIdentifier).value
        assert ski == x509.SubjectKeyIdentifier.from_public_key(cert.public_key())
    aki = leaf.cert.extensions.get_extension_for_class(x509.AuthorityKeyIdentifier).value
    ca_ski = ca.cert.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value
    assert aki.key_identifier == ca_ski.digest
