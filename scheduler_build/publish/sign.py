"""Key pairs, signatures and provenance attestations with cosign, offline.

`keygen` writes DIR/cosign.key (encrypted with the password) and DIR/cosign.pub.
`sign_pushed` signs the pushed index and every platform image by digest, and
attests each platform image's SLSA provenance (from the layout, provenance.py).
Signatures and attestations are Sigstore bundles stored as OCI referrers of the
image (the registry's referrers tag where it lacks the referrers API).

The registry credentials decided for the push (engine/credentials.py: the environment, else
docker's config) reach cosign through a private docker config in a 0700 temporary directory,
removed after the run (never on a command line, where other users could read them).
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Iterator

from scheduler_build.errors import UserError
from scheduler_build.image import oci, provenance
from scheduler_build.image.info import ImageInfo
from scheduler_build.progress import log
from scheduler_build.publish import distribution
from scheduler_build.engine.credentials import engine_ca
from scheduler_build.publish.cosign import OFFLINE_SIGN, Cosign

KEY_FILE, PUB_FILE = "cosign.key", "cosign.pub"


def key_ref(text: str, environ: dict[str, str], what: str = "--key", public: bool = False) -> str:
    """A key as cosign takes it: an existing file (made absolute) or env://VAR with VAR set in `environ`
    (the decider passes the environment). `public`: the verifying key (DIR/cosign.pub), else the signing key."""
    if not text:
        wanted = PUB_FILE if public else KEY_FILE
        raise UserError(f"{what} is required",
                        f"pass --key DIR/{wanted} (from `inv image.keygen --out DIR`) or env://VAR")
    if text.startswith("env://"):
        if not environ.get(text[len("env://"):]):
            raise UserError(f"{what} {text}: the environment variable is not set", "export it with the key's PEM text")
        return text
    path = Path(text).expanduser()
    if not path.is_file():
        raise UserError(f"{what} {text}: no such file", "create a key pair with `inv image.keygen --out DIR`")
    return str(path.resolve())


def keygen_out_dir(out_dir: Path | str) -> Path:
    """--out checked (and created) before cosign is built: no existing pair, a writable directory."""
    out_dir = Path(out_dir)
    existing = [out_dir / name for name in (KEY_FILE, PUB_FILE) if (out_dir / name).exists()]
    if existing:
        raise UserError(f"{existing[0]} already exists", "keys are never overwritten: choose another --out or move the old pair away")
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=out_dir).close()
    except OSError as exc:
        raise UserError(f"--out {out_dir}: cannot write there ({exc.strerror or exc})",
                        "pick a directory you can write, e.g. --out keys") from None
    return out_dir


def keygen(cosign: Cosign, out_dir: Path) -> tuple[Path, Path]:
    """DIR/cosign.key and DIR/cosign.pub; an existing pair is never overwritten."""
    out_dir = keygen_out_dir(out_dir)
    staging = Path(tempfile.mkdtemp(prefix=".keygen-", dir=out_dir))
    try:
        cosign.run(["generate-key-pair", "--output-key-prefix", str(staging / "cosign")], "cosign generate-key-pair")
        os.chmod(staging / KEY_FILE, 0o600)
        os.replace(staging / PUB_FILE, out_dir / PUB_FILE)
        os.replace(staging / KEY_FILE, out_dir / KEY_FILE)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return out_dir / KEY_FILE, out_dir / PUB_FILE


@contextlib.contextmanager
def registry_auth(host: str, creds: tuple[str, str] | None) -> Iterator[dict[str, str]]:
    """cosign's environment for the registry: a private DOCKER_CONFIG holding the credentials decided for the
    client (the same the push used); none: anonymous, as the push was."""
    if not creds:
        yield {}
        return
    user, password = creds
    directory = tempfile.mkdtemp(prefix="scheduler-build-cosign-auth-")  # 0700
    try:
        token = base64.b64encode(f"{user}:{password}".encode()).decode()
        config = Path(directory) / "config.json"
        fd = os.open(config, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as handle:
            json.dump({"auths": {host: {"auth": token}}}, handle)
        yield {"DOCKER_CONFIG": directory}
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def registry_flags(client: distribution.Client) -> list[str]:
    """What image.push's client allows, for cosign: plain HTTP for loopback registries or with --insecure,
    and the registry's CA (--ca-cert, else /etc/docker/certs.d/<host:port>/ca.crt, where the engine looks)."""
    host = client.target.host
    flags = ["--allow-http-registry=true"] if client.insecure or distribution.is_loopback(host) else []
    ca = client.ca_cert or engine_ca(host)
    if ca and Path(ca).is_file():
        flags.append(f"--registry-cacert={ca}")
    return flags


def sign_references(cosign: Cosign, key: str, references: list[str], client: distribution.Client) -> list[str]:
    """Sign pushed artifacts by digest (repo@sha256:...), as image.push --sign signs the image (config.chart --push)."""
    flags = registry_flags(client)
    with registry_auth(client.target.host, client.creds) as env:
        cosign.registry_env = env
        for ref in references:
            log(f"    sign {ref}")
            cosign.run(["sign", "--key", key, *OFFLINE_SIGN, *flags, ref], f"signing {ref}")
    return list(references)


def sign_pushed(cosign: Cosign, key: str, layout_dir: Path, client: distribution.Client) -> list[str]:
    """Sign the index and each platform image, attest each platform's provenance; returns what was signed."""
    layout = oci.Layout(layout_dir)
    contents = layout.read()
    repo, host = client.target.name, client.target.host
    statements = ImageInfo.of_layout(layout_dir).provenance()
    flags = registry_flags(client)
    signed = []
    with registry_auth(host, client.creds) as env, tempfile.TemporaryDirectory(prefix="scheduler-build-attest-") as tmp:
        cosign.registry_env = env
        for digest in [contents.index_digest, *(d["digest"] for d in contents.manifests)]:
            ref = f"{repo}@{digest}"
            log(f"    sign {ref}")
            cosign.run(["sign", "--key", key, *OFFLINE_SIGN, *flags, ref], f"signing {ref}")
            signed.append(ref)
            if digest not in statements:
                continue
            if not statements[digest]:
                raise UserError(f"{layout_dir} has no provenance for {digest}", "rebuild with `inv image.build --force`")
            predicate_file = Path(tmp) / f"{digest.split(':')[1]}.json"
            predicate_file.write_bytes(oci.canonical(json.loads(layout.blob(statements[digest]))["predicate"]))
            log(f"    attest SLSA provenance for {ref}")
            cosign.run(["attest", "--key", key, "--type", provenance.COSIGN_TYPE, "--predicate", str(predicate_file),
                        *OFFLINE_SIGN, *flags, ref], f"attesting the provenance of {ref}")
    return signed
