"""`inv image.verify REF`: is what the registry holds what we built, signed and attested?

For the index and every platform image (by digest): the manifest's bytes hash to
the digest the registry names; a cosign signature verifies with the public key;
for each platform image, every SLSA provenance attestation verifies, names that
image's digest as its subject, and its parameters agree with the image's labels
(Kubernetes version, binary digest, patch series, platform, Go version); both SBOM
referrers (SPDX and CycloneDX) are there and describe that image's binary.
Each check is one entry of the report; any failure fails the whole.
"""

from __future__ import annotations

import base64
import json
import re
from dataclasses import dataclass, field
from typing import Any

from scheduler_build.errors import UserError
from scheduler_build.image import cyclonedx, oci, provenance, sbom
from scheduler_build.image.request import LABEL_PREFIX
from scheduler_build.progress import log
from scheduler_build.publish import distribution
from scheduler_build.publish.cosign import OFFLINE_VERIFY, Cosign
from scheduler_build.publish.sign import registry_auth, registry_flags

ACCEPT = [oci.INDEX, oci.MANIFEST, "application/vnd.docker.distribution.manifest.v2+json",
          "application/vnd.docker.distribution.manifest.list.v2+json"]


@dataclass(frozen=True)
class Check:
    """One verification: what was checked, of which subject, whether it held and why not."""

    check: str
    subject: str
    ok: bool
    detail: str

    def as_dict(self) -> dict[str, Any]:
        return {"check": self.check, "subject": self.subject, "ok": self.ok, "detail": self.detail}


@dataclass
class Report:
    reference: str
    digest: str = ""
    checks: list[Check] = field(default_factory=list)
    statements: dict[str, dict] = field(default_factory=dict)  # image digest -> its verified provenance statement
    images: dict[str, str] = field(default_factory=dict)  # platform -> image digest

    def add(self, name: str, subject: str, ok: bool, detail: str = "") -> bool:
        self.checks.append(Check(name, subject, ok, detail))
        log(f"    {'ok  ' if ok else 'FAIL'} {name} {subject[:26]}{': ' + detail if detail else ''}")
        return ok

    @property
    def ok(self) -> bool:
        return bool(self.checks) and all(c.ok for c in self.checks)

    def failures(self) -> list[str]:
        return [f"{c.check} of {c.subject}: {c.detail}" for c in self.checks if not c.ok]

    def as_dict(self) -> dict[str, Any]:
        return {"reference": self.reference, "digest": self.digest, "ok": self.ok,
                "checks": [c.as_dict() for c in self.checks]}


_DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")
_TAG = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$")  # the distribution spec's tag grammar


def split_reference(ref: str) -> tuple[distribution.Target, str]:
    """HOST[:PORT]/REPO@sha256:... or HOST[:PORT]/REPO:TAG -> (target, digest or tag)."""
    if "@" in ref:
        repo, _, reference = ref.partition("@")
    else:
        head, _, last = ref.rpartition("/")
        name, sep, tag = last.partition(":")
        if not head or not sep:
            raise UserError(f"{ref!r} names no tag or digest", "pass HOST[:PORT]/REPO@sha256:... or HOST[:PORT]/REPO:TAG")
        repo, reference = f"{head}/{name}", tag
    if not (_DIGEST.match(reference) if "@" in ref else _TAG.match(reference)):
        raise UserError(f"{ref!r}: {reference!r} is not a {'sha256 digest' if '@' in ref else 'tag'}",
                        "pass HOST[:PORT]/REPO@sha256:<64 hex digits> or HOST[:PORT]/REPO:TAG")
    return distribution.parse_target(repo), reference


def _manifest(client: distribution.Client, report: Report, reference: str) -> tuple[str, dict]:
    """Fetch a manifest; its bytes must hash to the digest asked for (or named by the registry)."""
    body, _ = client.get_manifest(reference, ACCEPT)
    digest = oci.digest_of(body)
    expected = reference if reference.startswith("sha256:") else digest
    report.add("manifest-digest", expected, digest == expected, "" if digest == expected else f"the registry's bytes hash to {digest}")
    return digest, json.loads(body)


def _payloads(stdout: str) -> list[dict]:
    """The in-toto statements inside cosign verify-attestation's output (one DSSE envelope per line)."""
    out = []
    for line in stdout.splitlines():
        try:
            envelope = json.loads(line)
            out.append(json.loads(base64.b64decode(envelope["payload"])))
        except (ValueError, KeyError, TypeError):
            continue
    return out


def provenance_problems(statement: dict, digest: str, labels: dict[str, str], platform: str) -> list[str]:
    """What disagrees between one attested statement, the image it is attached to and its labels."""
    problems = []
    subjects = [s.get("digest", {}).get("sha256") for s in statement.get("subject") or []]
    if f"sha256:{subjects[0] if subjects else ''}" != digest or len(subjects) != 1:
        problems.append(f"subject {subjects} is not {digest}")
    if statement.get("predicateType") != provenance.PREDICATE_TYPE:
        problems.append(f"predicate type {statement.get('predicateType')!r}")
    definition = (statement.get("predicate") or {}).get("buildDefinition") or {}
    external, internal = definition.get("externalParameters") or {}, definition.get("internalParameters") or {}
    expected = {
        "externalParameters.kubernetesVersion": (external.get("kubernetesVersion"), labels.get(f"{LABEL_PREFIX}.kubernetes.version")),
        "internalParameters.binarySha256": (internal.get("binarySha256"), labels.get(f"{LABEL_PREFIX}.binary.sha256")),
        "internalParameters.patchSeriesDigest": (internal.get("patchSeriesDigest"), labels.get(f"{LABEL_PREFIX}.patches.digest")),
        "internalParameters.platform": (internal.get("platform"), platform),
    }
    problems += [f"{name} {got!r} but the image says {want!r}" for name, (got, want) in expected.items() if got != want]
    if platform not in (external.get("platforms") or []):
        problems.append(f"externalParameters.platforms {external.get('platforms')} lacks {platform}")
    go = ((statement.get("predicate") or {}).get("runDetails") or {}).get("builder", {}).get("version", {}).get("go", "")
    if "go" + str(go).removeprefix("go") != labels.get(f"{LABEL_PREFIX}.go.version"):
        problems.append(f"builder Go {go!r} but the image's go.version label is {labels.get(f'{LABEL_PREFIX}.go.version')!r}")
    return problems


def attached_subjects(client: distribution.Client, digest: str) -> list[str]:
    """The subjects of the (unverified) provenance statements in the Sigstore bundles attached to `digest`:
    explains why cosign found none that verify (it skips a statement naming another image)."""
    subjects = []
    for entry in referrers(client, digest):
        if not str(entry.get("artifactType", "")).startswith("application/vnd.dev.sigstore.bundle"):
            continue
        try:
            artifact = json.loads(client.get_manifest(entry["digest"], [oci.MANIFEST])[0])
            bundle = json.loads(client.get_blob(artifact["layers"][0]["digest"]))
            statement = json.loads(base64.b64decode(bundle["dsseEnvelope"]["payload"]))
        except (UserError, ValueError, KeyError, TypeError, IndexError):
            continue
        if statement.get("predicateType") == provenance.PREDICATE_TYPE:
            subjects += ["sha256:" + str(s.get("digest", {}).get("sha256")) for s in statement.get("subject") or []]
    return subjects


def _check_provenance(cosign: Cosign, key: str, flags: list[str], report: Report, ref: str, digest: str,
                      labels: dict[str, str], platform: str, client: distribution.Client) -> None:
    proc = cosign.run(["verify-attestation", "--key", key, "--type", provenance.COSIGN_TYPE, *OFFLINE_VERIFY, *flags, ref],
                      "cosign verify-attestation", check=False)
    statements = _payloads(proc.stdout) if proc.returncode == 0 else []
    if not statements:
        others = [s for s in attached_subjects(client, digest) if s != digest]
        detail = (f"the attached provenance names subject {others[0]}, not this image" if others
                  else f"no provenance attestation verifies with the key ({cosign.last_line(proc)})")
        report.add("provenance", digest, False, detail)
        return
    problems = [p for s in statements for p in provenance_problems(s, digest, labels, platform)]
    if report.add("provenance", digest, not problems, "; ".join(problems)):
        report.statements[digest] = statements[0]


def referrers(client: distribution.Client, digest: str) -> list[dict]:
    """The artifacts whose subject is `digest`: the OCI 1.1 referrers API, else the referrers tag."""
    # The client's request plumbing (auth header, retries) for the one GET it has no method for.
    response = client._retrying(f"referrers {digest[:19]}", lambda: client._request(
        "GET", f"/v2/{client.target.repository}/referrers/{digest}", headers={"Accept": oci.INDEX}))
    body = response.content
    if response.status_code != 200 or not response.headers.get("Content-Type", "").startswith(oci.INDEX):
        try:
            body, _ = client.get_manifest(distribution.referrers_tag(digest), [oci.INDEX])
        except UserError:
            return []
    try:
        return [m for m in json.loads(body).get("manifests") or [] if isinstance(m, dict)]
    except ValueError:
        return []


def _check_sboms(client: distribution.Client, report: Report, digest: str, labels: dict[str, str]) -> None:
    found = {r.get("artifactType"): r for r in referrers(client, digest)}
    binary_sha = labels.get(f"{LABEL_PREFIX}.binary.sha256", "")
    for media_type, name in ((sbom.MEDIA_TYPE, "sbom-spdx"), (cyclonedx.MEDIA_TYPE, "sbom-cyclonedx")):
        entry = found.get(media_type)
        if entry is None:
            report.add(name, digest, False, f"no {media_type} referrer")
            continue
        artifact = json.loads(client.get_manifest(entry["digest"], [oci.MANIFEST])[0])
        layer = artifact["layers"][0]
        blob = client.get_blob(layer["digest"])
        problems = []
        if oci.digest_of(blob) != layer["digest"]:
            problems.append("its document does not hash to its digest")
        if (artifact.get("subject") or {}).get("digest") != digest:
            problems.append("its subject is another image")
        if binary_sha and binary_sha not in blob.decode(errors="replace"):
            problems.append(f"it does not name the image's binary sha256 {binary_sha[:12]}")
        if media_type == sbom.MEDIA_TYPE and labels.get(f"{LABEL_PREFIX}.sbom.sha256") not in (None, layer["digest"].split(":")[1]):
            problems.append("the image's sbom.sha256 label names another document")
        report.add(name, digest, not problems, "; ".join(problems))


def _check_signature(cosign: Cosign, key: str, flags: list[str], report: Report, ref: str, digest: str) -> None:
    proc = cosign.run(["verify", "--key", key, *OFFLINE_VERIFY, *flags, ref], "cosign verify", check=False)
    report.add("signature", digest, proc.returncode == 0, "" if proc.returncode == 0 else cosign.last_line(proc))


def verify(cosign: Cosign, key: str, ref: str, client: distribution.Client) -> Report:
    """Run every check on REF (an index or one image) and return the report."""
    target, reference = split_reference(ref)
    report = Report(ref)
    flags = registry_flags(client)
    client.connect()
    digest, top = _manifest(client, report, reference)
    report.digest = digest
    images = [(d["digest"], "{os}/{architecture}".format(**d.get("platform") or {"os": "?", "architecture": "?"}))
              for d in top.get("manifests") or []] if top.get("manifests") is not None else [(digest, "")]
    with registry_auth(target.host, client.creds) as env:
        cosign.registry_env = env
        if top.get("manifests") is not None:
            _check_signature(cosign, key, flags, report, f"{target.name}@{digest}", digest)
        for image_digest, platform in images:
            image_ref = f"{target.name}@{image_digest}"
            _, manifest = _manifest(client, report, image_digest) if image_digest != digest else (digest, top)
            config = json.loads(client.get_blob(manifest["config"]["digest"]))
            platform = platform or f"{config.get('os')}/{config.get('architecture')}"
            report.images[platform] = image_digest
            labels = (config.get("config") or {}).get("Labels") or {}
            _check_signature(cosign, key, flags, report, image_ref, image_digest)
            _check_provenance(cosign, key, flags, report, image_ref, image_digest, labels, platform, client)
            _check_sboms(client, report, image_digest, labels)
    return report
