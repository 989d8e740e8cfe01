"""keygen, push --sign and image.verify with the real cosign against Debian's docker-registry on 127.0.0.1.

Nothing is mocked: cosign is the pinned one built from the Go module proxy (cached
under the toolkit's tools/), the registry is a real distribution registry, the
image is built from the suite's shared native kube-scheduler build. Each broken
case gets its own repository, so the cases do not disturb each other.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from scheduler_build import platforms, settings
from scheduler_build.image import cyclonedx, oci
from scheduler_build.publish import cosign as cosign_tool
from scheduler_build.engine import credentials as registry_auth
from scheduler_build.publish import distribution
from scheduler_build.publish import verify as verify_stage

from testkit.registry_server import Registry


REPO = Path(__file__).resolve().parents[2]
PASSWORD = "cosign-pw-7d1e0b55-never-print-me"
REGISTRY_SECRET = "registry-pw-90c3d1f2-never-print-me"
LOCAL_REPOSITORY = "scheduler-build-test/signed"


def inv(*args: str, cwd: Path, env: dict | None = None, check: bool = True) -> subprocess.CompletedProcess:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith(("SCHEDULER_BUILD_REGISTRY_", "COSIGN_"))}
    full_env.update({"COSIGN_PASSWORD": PASSWORD, **(env or {})})
    proc = subprocess.run([sys.executable, "-m", "invoke", "-r", str(REPO), *args], capture_output=True, text=True,
                          env=full_env, cwd=cwd, timeout=1800)
    if check and proc.returncode != 0:
        raise AssertionError(f"inv {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    return proc


@pytest.fixture(scope="module")
def release(built_scheduler, tmp_path_factory):
    """A key pair, a native image built from the shared build, a registry; every command's output kept."""
    work = tmp_path_factory.mktemp("signed-release")
    logs: list[str] = []
    keys = work / "keys"
    logs.append(inv("image.keygen", "--out", str(keys), cwd=work).stderr)
    dist = built_scheduler.binary.parents[3]
    env = {"SOURCE_DATE_EPOCH": str(built_scheduler.info.source_date_epoch)}
    built = inv("image.build", "--no-spec", "--dist", str(dist), "--platforms", f"linux/{platforms.host_arch()}",
                "--repository", LOCAL_REPOSITORY, "--oci-archive", str(work / "image.tar"), "--json", cwd=work, env=env)
    logs += [built.stdout, built.stderr]
    reg = Registry(work / "registry").start()
    yield {"work": work, "keys": keys, "layout": Path(json.loads(built.stdout)["layout"]), "registry": reg, "logs": logs,
           "dist": dist, "archive": work / "image.tar", "index_digest": json.loads(built.stdout)["index_digest"]}
    reg.stop()


def push(release, repository: str, *extra: str, host: str = "") -> dict:
    target = f"{host or release['registry'].host}/{repository}"
    proc = inv("image.push", "--no-build", "--no-spec", "--dist", str(release["dist"]), "--platforms",
               f"linux/{platforms.host_arch()}", "--repository", LOCAL_REPOSITORY, "--registry", target, "--json", *extra,
               cwd=release["work"])
    release["logs"] += [proc.stdout, proc.stderr]
    return {**json.loads(proc.stdout), "target": target}


def verify(release, ref: str, key: Path | None = None) -> tuple[subprocess.CompletedProcess, dict]:
    proc = inv("image.verify", ref, "--key", str(key or release["keys"] / "cosign.pub"), "--json", cwd=release["work"], check=False)
    release["logs"] += [proc.stdout, proc.stderr]
    return proc, json.loads(proc.stdout) if proc.stdout.strip() else {}


def failed_checks(report: dict) -> set[str]:
    return {c["check"] for c in report["checks"] if not c["ok"]}


def signed_push(release, repository: str, host: str = "") -> dict:
    return push(release, repository, "--sign", "--key", str(release["keys"] / "cosign.key"), host=host)


def test_sign_push_and_verify_passes_by_digest_and_by_tag(release):
    pushed = signed_push(release, "acme/sched")
    assert len(pushed["signed"]) == 2  # the index and the one platform image
    proc, report = verify(release, f"{pushed['target']}@{pushed['index_digest']}")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert report["ok"] and report["digest"] == pushed["index_digest"]
    checks = {(c["check"], c["subject"]) for c in report["checks"]}
    image = pushed["references"][1].split("@")[1]
    for name in ("signature", "provenance", "sbom-spdx", "sbom-cyclonedx", "manifest-digest"):
        assert (name, image) in checks, name
    assert ("signature", pushed["index_digest"]) in checks
    proc, report = verify(release, f"{pushed['target']}:{pushed['tags'][0]}")
    assert proc.returncode == 0 and report["digest"] == pushed["index_digest"]


def test_oci_archive_pushes_elsewhere_with_the_same_digests(release):
    target = f"{release['registry'].host}/airgap/sched"
    proc = inv("image.push", "--from-archive", str(release["archive"]), "--registry", target, "--sign", "--key",
               str(release["keys"] / "cosign.key"), "--json", cwd=release["work"])
    release["logs"] += [proc.stdout, proc.stderr]
    pushed = json.loads(proc.stdout)
    assert pushed["index_digest"] == release["index_digest"]
    proc, report = verify(release, f"{target}@{pushed['index_digest']}")
    assert proc.returncode == 0 and report["ok"], proc.stderr[-3000:]


def test_provenance_is_byte_identical_when_rebuilt(release, built_scheduler):
    layout = release["layout"]
    before = json.loads((layout / "image-info.json").read_text())["platforms"][0]["provenance_digest"]
    env = {"SOURCE_DATE_EPOCH": str(built_scheduler.info.source_date_epoch)}
    proc = inv("image.build", "--no-spec", "--dist", str(release["dist"]), "--platforms", f"linux/{platforms.host_arch()}",
               "--repository", LOCAL_REPOSITORY, "--force", "--json", cwd=release["work"], env=env)
    release["logs"] += [proc.stdout, proc.stderr]
    assert json.loads(proc.stdout)["skipped"] is False
    after = json.loads((layout / "image-info.json").read_text())["platforms"][0]["provenance_digest"]
    assert after == before
    statement = json.loads(oci.Layout(layout).blob(after))
    assert statement["subject"][0]["digest"]["sha256"] == json.loads(proc.stdout)["platforms"][0]["manifest_digest"][7:]
    assert statement["predicate"]["buildDefinition"]["resolvedDependencies"][0]["annotations"]["go.sum"].startswith("h1:")


def test_verify_rebuild_reproduces_the_pushed_digests(release):
    pushed = signed_push(release, "acme/rebuilt")
    proc = inv("image.verify", f"{pushed['target']}@{pushed['index_digest']}", "--key", str(release["keys"] / "cosign.pub"),
               "--rebuild", "--no-spec", "--json", cwd=release["work"], check=False)
    release["logs"] += [proc.stdout, proc.stderr]
    assert proc.returncode == 0, proc.stderr[-3000:]
    rebuilt = [c for c in json.loads(proc.stdout)["checks"] if c["check"] == "rebuild"]
    assert [c["subject"] for c in rebuilt] == [pushed["references"][1].split("@")[1]] and all(c["ok"] for c in rebuilt)
    # Rebuilding from other inputs than the recorded ones is refused, naming both.
    proc = inv("image.verify", f"{pushed['target']}@{pushed['index_digest']}", "--key", str(release["keys"] / "cosign.pub"),
               "--rebuild", "--spec", str(REPO / "examples/underlay/scheduler.yaml"), cwd=release["work"], check=False)
    assert proc.returncode != 0 and "built from spec sha256 (none)" in proc.stderr, proc.stderr[-2000:]


def test_wrong_key_fails_naming_the_signature(release):
    pushed = signed_push(release, "acme/wrong-key")
    other = release["work"] / "other-keys"
    inv("image.keygen", "--out", str(other), cwd=release["work"])
    proc, report = verify(release, f"{pushed['target']}@{pushed['index_digest']}", other / "cosign.pub")
    assert proc.returncode != 0
    assert {"signature", "provenance"} <= failed_checks(report)
    assert "failed verification" in proc.stderr and "signature of sha256:" in proc.stderr


@pytest.fixture
def own_registry(tmp_path):
    """A registry of the test's own: its store is edited (blobs are shared by every repository of a store)."""
    reg = Registry(tmp_path / "registry").start()
    yield reg
    reg.stop()


def test_tampered_manifest_fails(release, own_registry):
    """The registry's stored bytes of the signed image manifest are edited (as a compromised store would):
    the bytes no longer hash to the digest, and a re-tagged altered index carries no signature."""
    pushed = signed_push(release, "acme/tampered", host=own_registry.host)
    image = pushed["references"][1].split("@")[1]
    data = own_registry.storage / "docker/registry/v2/blobs/sha256" / image[7:9] / image[7:] / "data"
    manifest = json.loads(data.read_bytes())
    manifest["annotations"]["org.opencontainers.image.created"] = "2000-01-01T00:00:00Z"
    data.write_bytes(oci.canonical(manifest))
    proc, report = verify(release, f"{pushed['target']}@{pushed['index_digest']}")
    assert proc.returncode != 0 and "manifest-digest" in failed_checks(report)
    assert "hash to" in proc.stderr
    # An index altered and pushed under the tag: no signature verifies for it.
    client = distribution.Client(target=distribution.parse_target(pushed["target"]))
    client.connect()
    index = json.loads(client.get_manifest(pushed["index_digest"], [oci.INDEX])[0])
    index["annotations"]["org.opencontainers.image.version"] = "evil"
    client.put_manifest(pushed["tags"][0], oci.canonical(index), oci.INDEX)
    proc, report = verify(release, f"{pushed['target']}:{pushed['tags'][0]}")
    assert proc.returncode != 0 and "signature" in failed_checks(report)


def test_missing_sbom_fails_naming_it(release):
    pushed = signed_push(release, "acme/no-cyclonedx")
    image = pushed["references"][1].split("@")[1]
    client = distribution.Client(target=distribution.parse_target(pushed["target"]))
    client.connect()
    tag = distribution.referrers_tag(image)
    index = json.loads(client.get_manifest(tag, [oci.INDEX])[0])
    index["manifests"] = [m for m in index["manifests"] if m.get("artifactType") != cyclonedx.MEDIA_TYPE]
    client.put_manifest(tag, oci.canonical(index), oci.INDEX)
    proc, report = verify(release, f"{pushed['target']}@{pushed['index_digest']}")
    assert proc.returncode != 0 and failed_checks(report) == {"sbom-cyclonedx"}
    assert "no application/vnd.cyclonedx+json referrer" in proc.stderr


def test_provenance_with_another_subject_fails(release):
    """Pushed unsigned, signed by hand with cosign, and given a valid, signed provenance attestation whose
    subject is another manifest (the index): its bundle is re-attached to the platform image as a referrer."""
    pushed = push(release, "acme/bad-subject")
    image, index = pushed["references"][1].split("@")[1], pushed["index_digest"]
    info = json.loads((release["layout"] / "image-info.json").read_text())
    statement = json.loads(oci.Layout(release["layout"]).blob(info["platforms"][0]["provenance_digest"]))
    predicate = release["work"] / "predicate.json"
    predicate.write_text(json.dumps(statement["predicate"]))
    tool = cosign_tool.Cosign(cosign_tool.binary(settings.cache_dir()), password=PASSWORD, inherited=dict(os.environ))
    key, repo = str(release["keys"] / "cosign.key"), pushed["target"]
    for digest in (index, image):
        tool.run(["sign", "--key", key, *cosign_tool.OFFLINE_SIGN, f"{repo}@{digest}"], "sign")
    tool.run(["attest", "--key", key, "--type", "slsaprovenance1", "--predicate", str(predicate), *cosign_tool.OFFLINE_SIGN,
              f"{repo}@{index}"], "attest")
    client = distribution.Client(target=distribution.parse_target(repo))
    client.connect()
    for entry in verify_stage.referrers(client, index):
        artifact = json.loads(client.get_manifest(entry["digest"], [oci.MANIFEST])[0])
        bundle = json.loads(client.get_blob(artifact["layers"][0]["digest"]))
        payload = json.loads(base64.b64decode((bundle.get("dsseEnvelope") or {}).get("payload", "e30=")))
        if payload.get("predicateType") == "https://slsa.dev/provenance/v1":  # not the signature's DSSE
            assert payload["subject"][0]["digest"]["sha256"] == index[7:]
            break
    else:
        raise AssertionError("cosign attached no attestation bundle to the index")
    artifact["subject"] = {"mediaType": oci.MANIFEST, "digest": image,
                           "size": len(client.get_manifest(image, [oci.MANIFEST])[0])}
    moved = oci.canonical(artifact)
    client.put_manifest(oci.digest_of(moved), moved, oci.MANIFEST)
    ours = {"mediaType": oci.MANIFEST, "digest": oci.digest_of(moved), "size": len(moved), "artifactType": artifact["artifactType"]}
    client.put_manifest(distribution.referrers_tag(image), distribution.merged_referrers(client, image, ours), oci.INDEX)
    proc, report = verify(release, f"{repo}@{index}")
    assert proc.returncode != 0 and failed_checks(report) == {"provenance"}, report
    assert f"provenance of {image}: the attached provenance names subject {index}, not this image" in proc.stderr


def test_sign_and_verify_with_tls_and_credentials_from_the_environment(release, tmp_path):
    """htpasswd + TLS from a private CA (trusted where the engine looks): cosign gets the CA and the
    credentials (a private docker config) from the toolkit, never on its command line."""
    reg = Registry(tmp_path / "secure", user="ci-bot", password=REGISTRY_SECRET, tls=True).start()
    certs_dir = reg.trust_in_engine()
    empty_config = tmp_path / "docker-empty"
    empty_config.mkdir()
    env = {registry_auth.USER_ENV: "ci-bot", registry_auth.PASSWORD_ENV: REGISTRY_SECRET, "DOCKER_CONFIG": str(empty_config)}
    try:
        target = f"{reg.host}/acme/secure"
        proc = inv("image.push", "--no-build", "--no-spec", "--dist", str(release["dist"]), "--platforms",
                   f"linux/{platforms.host_arch()}", "--repository", LOCAL_REPOSITORY, "--registry", target, "--sign",
                   "--key", str(release["keys"] / "cosign.key"), "--json", cwd=release["work"], env=env)
        release["logs"] += [proc.stdout, proc.stderr]
        digest = json.loads(proc.stdout)["index_digest"]
        proc = inv("image.verify", f"{target}@{digest}", "--key", str(release["keys"] / "cosign.pub"), cwd=release["work"], env=env)
        release["logs"] += [proc.stdout, proc.stderr]
        assert "FAIL" not in proc.stdout and "ok provenance" in proc.stdout
        assert list(empty_config.iterdir()) == []  # the private config was elsewhere, and is gone
    finally:
        reg.stop()
        if certs_dir is not None:
            shutil.rmtree(certs_dir, ignore_errors=True)


def test_shipped_policy_admits_the_attested_provenance_and_refuses_a_leaky_one(release):
    """The Rego policy `inv image.policy` ships, run by the real cosign as a user's gate would
    (`verify-attestation --policy`): it admits what `image.push --sign` attested; a validly signed
    provenance that names an absolute build-machine path (the fault issue 20 found) is refused."""
    policy = release["work"] / "slsa-provenance.rego"
    inv("image.policy", "--out", str(policy), cwd=release["work"])
    tool = cosign_tool.Cosign(cosign_tool.binary(settings.cache_dir()), password=PASSWORD, inherited=dict(os.environ))
    key, pub = str(release["keys"] / "cosign.key"), str(release["keys"] / "cosign.pub")

    def gate(ref: str) -> subprocess.CompletedProcess:
        return tool.run(["verify-attestation", "--key", pub, "--type", "slsaprovenance1", "--policy", str(policy),
                         *cosign_tool.OFFLINE_VERIFY, ref], "verify-attestation", check=False)

    pushed = signed_push(release, "acme/gated")
    proc = gate(pushed["references"][1])
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert json.loads(proc.stdout.splitlines()[0])["payloadType"] == "application/vnd.in-toto+json"
    # Negative control: the same provenance plus a local source named by its absolute path, signed with the same key.
    leaky = push(release, "acme/leaky")
    info = json.loads((release["layout"] / "image-info.json").read_text())
    predicate = json.loads(oci.Layout(release["layout"]).blob(info["platforms"][0]["provenance_digest"]))["predicate"]
    predicate["buildDefinition"]["resolvedDependencies"].append(
        {"uri": "file:/home/builder/checkout/plugin", "name": "example.com/plugin", "digest": {"sha256": "ee" * 32}})
    predicate_file = release["work"] / "leaky-predicate.json"
    predicate_file.write_text(json.dumps(predicate))
    tool.run(["attest", "--key", key, "--type", "slsaprovenance1", "--predicate", str(predicate_file),
              *cosign_tool.OFFLINE_SIGN, leaky["references"][1]], "attest")
    proc = gate(leaky["references"][1])
    assert proc.returncode != 0 and "validation errors occurred" in proc.stderr, proc.stderr[-3000:]


def test_no_secret_in_logs_build_info_layers_or_registry(release):
    """Runs last in the module: every command's output so far, the build records, every blob of the
    layout, the OCI archive and everything the registry stored hold neither the key's password nor its private key."""
    key_pem = (release["keys"] / "cosign.key").read_text()
    body = "".join(line for line in key_pem.splitlines() if line and not line.startswith("-----"))
    needles = [PASSWORD.encode(), REGISTRY_SECRET.encode(), body[:64].encode(), base64.b64decode(body)[:48]]
    haystacks = {"logs": "\n".join(release["logs"]).encode()}
    for path in [*release["dist"].rglob("build-info.json"), *release["layout"].rglob("*"), release["archive"],
                 *release["registry"].storage.rglob("*")]:
        if path.is_file():
            haystacks[str(path)] = path.read_bytes()
    for where, data in haystacks.items():
        for needle in needles:
            assert needle not in data, f"a secret leaked into {where}"
    assert len(haystacks) > 10 and b"sha256:" in haystacks["logs"]

