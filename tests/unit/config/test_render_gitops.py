"""config.render for GitOps: the plain directory (--plain), what a re-render changes and restores,
and the extender's mutual-TLS Secrets as a separate file (--tls-secrets). Unit: no Docker, Go or network."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from scheduler_build import owned
from scheduler_build.config import extender_tls
from scheduler_build import spec as spec_mod
from scheduler_build.config import output, tls_secrets
from scheduler_build.config import render as manifests
from scheduler_build.errors import UserError
from scheduler_build.image.info import ImageInfo

REPO = Path(__file__).resolve().parents[3]
FULL = REPO / "tests" / "data" / "config" / "specs" / "intree-full.yaml"


def full(**deployment) -> spec_mod.Spec:
    spec = spec_mod.load(FULL)
    return dataclasses.replace(spec, deployment=dataclasses.replace(spec.deployment, **deployment)) if deployment else spec


def write(spec, out: Path, image: str = "r/x:1", plain: bool = True) -> output.Changes:
    return output.write(manifests.render_files(spec, image), out, manifests.RENDERED_NAMES, plain=plain)


def test_plain_directory_is_deterministic_and_holds_no_link_and_one_record(tmp_path):
    first = write(full(), tmp_path / "a")
    write(full(), tmp_path / "b")
    assert not (tmp_path / "a").is_symlink() and sorted(os.listdir(tmp_path)) == ["a", "b"]
    hidden = [name for name in os.listdir(tmp_path / "a") if name.startswith(".")]
    assert hidden == [owned.RECORD]  # what was written, by digest: `sha256sum -c` agrees
    check = subprocess.run(["sha256sum", "-c", "--quiet", owned.RECORD], cwd=tmp_path / "a", capture_output=True)
    assert check.returncode == 0, check.stdout
    assert sorted(first.added) == sorted(n for n in os.listdir(tmp_path / "a") if not n.startswith("."))
    for name in os.listdir(tmp_path / "a"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    assert not write(full(), tmp_path / "a").any()  # a re-render of the same spec changes nothing


def test_rerender_keeps_hand_edits_unless_forced_and_removes_stale_files_it_wrote(tmp_path):
    out = tmp_path / "out"
    write(full(), out)  # replicas 2: pdb.yaml
    edited = (out / "deployment.yaml").read_text().replace("replicas: 2", "replicas: 5")
    (out / "deployment.yaml").write_text(edited)
    pristine = (out / "rbac.yaml").stat().st_mtime_ns
    with pytest.raises(UserError, match=r"deployment.yaml is not as scheduler-build wrote it.*--force"):
        write(full(replicas=1), out)
    assert (out / "deployment.yaml").read_text() == edited  # nothing the user wrote is lost
    changes = output.write(manifests.render_files(full(replicas=1), "r/x:1"), out, manifests.RENDERED_NAMES,
                           plain=True, force=True)
    assert changes.forced == ["deployment.yaml"] and "(--force" in " ".join(changes.lines())
    assert "deployment.yaml" in changes.changed and "rbac.yaml" not in changes.changed
    assert (out / "rbac.yaml").stat().st_mtime_ns == pristine  # unchanged files are not rewritten
    assert changes.removed == [] and (out / "pdb.yaml").exists()  # the extender keeps 2 replicas
    spec = full(replicas=1)
    single = dataclasses.replace(spec, reference_extender=dataclasses.replace(spec.reference_extender, replicas=1))
    changes = write(single, out)
    assert changes.removed == ["pdb.yaml"] and not (out / "pdb.yaml").exists()
    assert "pdb.yaml" not in yaml.safe_load((out / "kustomization.yaml").read_text())["resources"]
    assert "replicas: 1" in (out / "deployment.yaml").read_text()


def test_plain_refuses_foreign_files_and_an_earlier_symlink_and_changes_nothing(tmp_path):
    out = tmp_path / "out"
    write(full(), out)
    (out / "notes.md").write_text("mine")
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    with pytest.raises(UserError, match="did not write"):
        write(full(replicas=1), out)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    linked = tmp_path / "linked"  # the earlier layout: a symlink to a hidden tree
    (tmp_path / ".linked.r1").mkdir()
    linked.symlink_to(".linked.r1")
    with pytest.raises(UserError, match="symlink"):
        write(full(), linked)


def test_the_default_layout_keeps_a_hand_edit_too_unless_forced(tmp_path):
    out = tmp_path / "out"
    write(full(), out, plain=False)
    assert out.is_dir() and not out.is_symlink()
    (out / "configmap.yaml").write_text("edited\n")
    with pytest.raises(UserError, match="configmap.yaml is not as"):
        write(full(), out, plain=False)
    changes = output.write(manifests.render_files(full(), "r/x:1"), out, manifests.RENDERED_NAMES, force=True)
    assert changes.changed == ["configmap.yaml"] and "edited" not in (out / "configmap.yaml").read_text()
    assert not write(full(), out, plain=False).any()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_tls_secrets_are_made_once_kept_and_named_as_the_deployments_mount(tmp_path):
    spec = full()
    made = tls_secrets.write(spec, tmp_path, manifests.labels_for(spec))
    assert made.action == "create" and oct(made.path.stat().st_mode & 0o777) == "0o600"
    text = made.path.read_bytes()
    kept = tls_secrets.write(spec, tmp_path, manifests.labels_for(spec))
    assert kept.action == "keep" and made.path.read_bytes() == text
    assert kept.certs.fingerprint() == made.certs.fingerprint()
    secrets = {d["metadata"]["name"] for d in yaml.safe_load_all(text) if d}
    files = manifests.render_files(spec, "r/x:1", tls_fingerprint=kept.certs.fingerprint())
    mounted = set()
    for name in ("deployment.yaml", "extender.yaml"):
        for dep in (d for d in yaml.safe_load_all(files[name]) if d and d["kind"] == "Deployment"):
            template = dep["spec"]["template"]
            assert template["metadata"]["annotations"][extender_tls.CERTS_ANNOTATION] == kept.certs.fingerprint()
            for volume in template["spec"]["volumes"]:
                mounted |= {s["secret"]["name"] for s in (volume.get("projected") or {}).get("sources", [])}
    assert mounted == secrets and len(secrets) == 3
    # Near expiry the certificates are replaced (and the fingerprint, so both Deployments roll).
    later = dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=extender_tls.DAYS)
    renewed = tls_secrets.write(spec, tmp_path, manifests.labels_for(spec), now=later)
    assert renewed.action == "rotate" and renewed.certs.fingerprint() != made.certs.fingerprint()


def test_tls_secrets_refuse_a_spec_without_an_extender_with_tls(tmp_path):
    spec = full()
    off = dataclasses.replace(spec, reference_extender=dataclasses.replace(spec.reference_extender, tls=False))
    with pytest.raises(UserError, match="no extender with TLS"):
        tls_secrets.write(off, tmp_path, {})
    assert not list(tmp_path.iterdir())


def test_cli_plain_render_reports_what_changed(tmp_path):
    def inv(*args):
        return subprocess.run([sys.executable, "-m", "invoke", "config.render", "--spec", str(FULL), "--out",
                               str(tmp_path / "out"), "--plain", *args], cwd=REPO, capture_output=True, text=True,
                              timeout=300, env=dict(os.environ, PYTHONPATH=str(REPO)))

    first = inv("--tls-secrets", str(tmp_path / "secrets"), "--json")
    assert first.returncode == 0, first.stderr
    report = json.loads(first.stdout)
    assert "deployment.yaml" in report["changes"]["added"] and report["tls_secrets"]["action"] == "create"
    (tmp_path / "out" / "rbac.yaml").write_text("# edited\n")
    refused = inv("--tls-secrets", str(tmp_path / "secrets"))
    last = refused.stderr.strip().splitlines()[-1]
    assert refused.returncode == 2 and last.startswith("error: --out") and "rbac.yaml is not as" in last
    assert "Traceback" not in refused.stderr
    assert (tmp_path / "out" / "rbac.yaml").read_text() == "# edited\n"
    again = inv("--tls-secrets", str(tmp_path / "secrets"), "--force")
    assert again.returncode == 0 and again.stdout.strip() == str(tmp_path / "out")
    assert "changed rbac.yaml" in again.stderr and "changed deployment.yaml" not in again.stderr
    same = inv("--tls-secrets", str(tmp_path / "out"))
    assert same.returncode == 2 and "apart from --out" in same.stderr and "Traceback" not in same.stderr


def test_pin_digest_takes_the_index_digest_the_layout_records():
    digest = "sha256:" + "c" * 64
    info = ImageInfo(name="s", repository="registry.example.com/acme/s", kubernetes_version="v1.36.3",
                     tags=["v1.36.3-1.0.0"], inputs_key="k", source_date_epoch=0, index_digest=digest, index_size=1)
    assert manifests.pin("registry.example.com/acme/s:v1.36.3-1.0.0", info, "x") == \
        f"registry.example.com/acme/s:v1.36.3-1.0.0@{digest}"
    for wrong in (None, dataclasses.replace(info, tags=["other"]), dataclasses.replace(info, repository="elsewhere/s"),
                  dataclasses.replace(info, index_digest="x")):
        with pytest.raises(UserError, match="--pin-digest: x records no image"):
            manifests.pin("registry.example.com/acme/s:v1.36.3-1.0.0", wrong, "x")
    files = manifests.render_files(full(), f"r/x:1@{digest}")
    assert f"image: r/x:1@{digest}" in files["deployment.yaml"]
