"""config: render, validate and migrate the scheduler's configuration and manifests."""

from __future__ import annotations

import re
from pathlib import Path

import yaml
from invoke import Collection, task

from scheduler_build import owned
from scheduler_build.config import legacy_policy as policy_mod
from scheduler_build.config import render as manifests
from scheduler_build.config import chart as chart_mod
from scheduler_build.config import output, target
from scheduler_build.config import tls_secrets as tls_secrets_mod
from scheduler_build.config.field_lines import field_line
from scheduler_build.config import validate as config_validate
from scheduler_build import spec as spec_mod
from scheduler_build.errors import UserError, for_program
from scheduler_build.image import assemble as image_stage
from scheduler_build.image import info as image_info
from scheduler_build.publish import chart as chart_stage
from scheduler_build.atomic import write_atomic
from scheduler_build.progress import log, phase
from scheduler_build.flows import config as config_flow
from scheduler_build.flows import publishers
from scheduler_build.inputs.publish import chart_push_inputs
from scheduler_build.inputs.config import (RenderInputs, chart_inputs, render_inputs, scheduler_name as scheduler_name_of,
                                           spec_path as spec_path_of, validate_inputs)
from scheduler_build.commands._common import emit, emit_json, flag_help, user_errors


@task(help={
    "spec": flag_help("spec.path"),
    "out": flag_help("config.out", after="; replaced atomically"),
    "dist": flag_help("paths.dist_dir", after="; where --out defaults to and --pin-digest's image layout is read"),
    "image": "scheduler image reference to deploy, REPO:TAG or REPO:TAG@sha256:DIGEST "
             "(default: the spec's image, tag <k8s-version>-<version>)",
    "k8s-version": "Kubernetes version for the default image tag (default: the spec's kubernetes.version)",
    "pin-digest": "name the image by digest: the index digest of the spec's image layout (image-info.json of "
                  "inv image.build, the digest image.push pushes)",
    "plain": "write --out as a plain directory (no symlink), for a Git repository that Argo CD or Flux apply: "
             "each file written atomically, files of an earlier rendering that are no longer rendered removed",
    "tls-secrets": "also write the extender's mutual-TLS Secrets to DIR/extender-tls-secrets.yaml (kept while "
                   "valid), for your secret tooling; the Deployments roll when they change",
    "json": "print the output directory, the image, every file written and what changed as JSON",
    "force": "with --plain: also replace files scheduler-build did not write, or that were edited since (named)",
})
@user_errors
def render(c, spec=None, out=None, image=None, k8s_version=None, pin_digest=False, plain=False, tls_secrets=None,
           json=False, force=False, dist=None):
    """Render the KubeSchedulerConfiguration, ConfigMap, RBAC, Deployment (and extender) with a kustomization."""
    image = manifests.check_image_flag(image) if image else None
    decided = render_inputs(c, spec=spec, out=out, dist=dist)
    loaded, out_dir = decided.spec, decided.out_dir
    if tls_secrets and Path(tls_secrets).resolve() == out_dir.resolve():
        raise UserError("--tls-secrets must name a directory apart from --out (it holds private keys)",
                        "e.g. --tls-secrets secrets/ and encrypt or seal that file before committing it")
    owned.check_writable(out_dir, "--out")  # before the release lookup and the render
    version = target.kubernetes_release(loaded, k8s_version, decided.cache_dir)
    config_validate.check_config_api(loaded, version, decided.cache_dir, strict=False)
    ref = _image(decided, image, k8s_version, pin_digest)
    fingerprint, secrets = "", None
    if tls_secrets:
        with phase("tls-secrets", str(tls_secrets)):
            secrets = tls_secrets_mod.write(loaded, Path(tls_secrets), manifests.labels_for(loaded))
            log(f"    {secrets.path}: {secrets.action}{': ' + '; '.join(secrets.reasons) if secrets.reasons else ''}")
            fingerprint = secrets.certs.fingerprint()
    with phase("render", str(out_dir)):
        files = manifests.render_files(loaded, ref, tls_fingerprint=fingerprint)
        changes = output.write(files, out_dir, manifests.RENDERED_NAMES, plain=bool(plain), force=bool(force))
    for line in changes.lines() or ["no file changed"]:
        log(f"    {line}", always="(--force" in line)  # a replaced file of someone else's is named even under -q
    if json:
        emit_json({"spec": str(loaded.path), "out": str(out_dir), "image": ref,
                   "files": [str(out_dir / name) for name in sorted(files)], "changes": changes.as_dict(),
                   "tls_secrets": {"path": str(secrets.path), "action": secrets.action} if secrets else None})
    else:
        emit(str(out_dir))


@task(help={
    "spec": flag_help("spec.path"),
    "out": "chart directory, written as a plain directory (default: <paths.dist_dir>/chart/<name>)",
    "dist": flag_help("paths.dist_dir", after="; where --out defaults to and --pin-digest's image layout is read"),
    "image": "scheduler image the chart's values name, REPO:TAG or REPO:TAG@sha256:DIGEST "
             "(default: the spec's image, tag <k8s-version>-<version>)",
    "k8s-version": "Kubernetes version for the default image tag (default: the spec's kubernetes.version)",
    "pin-digest": "values.yaml names the image's digest too (from the spec's image layout, as config.render)",
    "push": "also push the chart as an OCI artifact to HOST[:PORT]/PATH (it lands at PATH/<name>:<version>, "
            "what `helm pull oci://HOST/PATH/<name>` reads)",
    "ca-cert": flag_help("push.ca_cert"),
    "insecure": flag_help("push.insecure"),
    "sign": "sign the pushed chart with cosign, as image.push --sign signs the image",
    "key": flag_help("sign.key"),
    "json": "print the chart directory, its version, appVersion, what changed (and what was pushed) as JSON",
    "force": "also replace files scheduler-build did not write, or that were edited since (each named)",
})
@user_errors
def chart(c, spec=None, out=None, image=None, k8s_version=None, pin_digest=False, push=None, ca_cert=None,
          insecure=False, sign=False, key=None, json=False, force=False, dist=None):
    """Write a Helm chart of the same objects config.render writes; values.yaml holds the per-cluster choices."""
    image = manifests.check_image_flag(image) if image else None
    decided = chart_inputs(c, spec=spec, out=out, dist=dist)
    loaded, out_dir = decided.spec, decided.out_dir
    owned.check_writable(out_dir, "--out")
    ref = _image(decided, image, k8s_version, pin_digest)
    with phase("chart", str(out_dir)):
        files = chart_mod.chart_files(loaded, ref)
        changes = output.write(files, out_dir, chart_mod.CHART_NAMES, plain=True, force=bool(force))
    for line in changes.lines() or ["no file changed"]:
        log(f"    {line}", always="(--force" in line)  # a replaced file of someone else's is named even under -q
    meta = yaml.safe_load(files["Chart.yaml"])
    pushed = _push_chart(c, files, push, ca_cert, insecure, sign, key) if push else None
    if json:
        emit_json({"spec": str(loaded.path), "out": str(out_dir), "version": meta["version"],
                   "appVersion": meta["appVersion"], "image": ref, "changes": changes.as_dict(),
                   "pushed": chart_stage.as_dict(pushed) if pushed else None})
    elif pushed:
        emit(f"{out_dir}\n{pushed.reference}")
    else:
        emit(str(out_dir))


def _push_chart(c, files, registry, ca_cert, insecure, sign, key) -> chart_stage.PushedChart:
    """Push the chart next to the image (and sign it): the key is checked before any upload."""
    name = yaml.safe_load(files["Chart.yaml"])["name"]
    destination = chart_push_inputs(c, target=chart_stage.chart_target(registry, name), ca_cert=ca_cert,
                                    insecure=insecure, sign=sign, key=key)
    return publishers.publisher(destination).publish(files)


def _image(decided: RenderInputs, image, k8s_version, pin_digest) -> str:
    """--image, else the spec's image; with --pin-digest, by the digest its image layout records."""
    loaded = decided.spec
    version = target.kubernetes_release(loaded, k8s_version, decided.cache_dir)
    ref = image or manifests.image_ref(loaded, version)
    if not pin_digest:
        return ref
    layout = image_stage.layout_dir(decided.dist_dir, loaded.name, version)
    recorded = image_info.ImageInfo.previous(layout)
    where = str(layout / image_info.FILE_NAME)
    return manifests.pin(ref, recorded, where)


@task(help={
    "spec": flag_help("spec.path"),
    "binary": "kube-scheduler to validate with (default: <dist>/<name>/<version>/linux-<arch>/kube-scheduler from "
              "inv build --spec)",
    "dist": flag_help("paths.dist_dir", after="; where the built kube-scheduler is found without --binary"),
    "k8s-version": "Kubernetes version whose in-tree plugins are allowed (default: the spec's kubernetes.version)",
    "fields-only": flag_help("config.fields_only"),
    "write-config-to": "also save the binary's defaulted configuration to this file",
    "json": "print the verdict as JSON on stdout, failures too: every field error with its path (for CI annotations)",
    "require-batching": flag_help("config.require_batching", after=", instead of warning"),
    "list-gates": "list the feature gates the spec's featureGates can still set on its release (or --k8s-version), "
                  "with stage and default, read from that release's pkg/features/kube_features.go; check nothing",
})
@user_errors
def validate(c, spec=None, binary=None, k8s_version=None, fields_only=False, write_config_to=None, json=False,
             require_batching=False, list_gates=False, dist=None):
    """Check the spec's fields, have the real kube-scheduler judge its configuration and gates, report batching."""
    spec_path = spec_path_of(c, spec)
    try:
        inputs = validate_inputs(c, spec=spec, binary=binary, k8s_version=k8s_version, fields_only=fields_only,
                                 write_config_to=write_config_to, require_batching=require_batching, dist=dist)
        if list_gates:
            version, lines = config_flow.changeable_gates(inputs)
            if json:
                emit_json({"kubernetes_version": version, "gates": lines})
            else:
                emit("\n".join(lines))
            return
        verdict = config_flow.validate(inputs)
        for line in verdict.gate_warnings:
            log(line, always=True)
        _check_batching(verdict, inputs.require_batching)
    except UserError as exc:
        if json:
            emit_json(validation_failure(exc, spec_path), sort_keys=False)
        raise
    if json:
        emit_json({"ok": True, "spec": str(spec_path), "errors": [], **verdict.to_dict()}, sort_keys=False)
    else:
        binary_part = f", accepted by {verdict.binary}" if verdict.binary else ""
        emit(f"ok: {spec_path} (fields, plugins of Kubernetes {verdict.kubernetes_version}{binary_part})")
        for entry in verdict.batching:
            emit(entry.line())


def _check_batching(verdict: config_flow.Verdict, required: bool) -> None:
    """Warn (or, required, refuse) for each profile whose batching the binary turned off."""
    off = [v for v in verdict.batching if not v.on]
    for entry in off:
        log(f"warning: profile {entry.profile} schedules without opportunistic batching: {entry.why()}")
    if off and required:
        raise UserError(f"{len(off)} profile(s) lose opportunistic batching (--require-batching): "
                        + "; ".join(f"{v.profile}: {v.why()}" for v in off),
                        "implement SignPod in each plugin named (docs/plugins.md#signing-pods-for-batching), "
                        "drop the extenders, or leave --require-batching off")


def validation_failure(exc: UserError, spec_path: str) -> dict:
    """A failed validation for machines: each error with the file and field path it is about."""
    if isinstance(exc, spec_mod.SpecError):
        errors = [_error_entry(exc.source, where, what) for where, what in exc.errors]
    else:
        errors = [{"file": str(spec_path), "line": None, "path": "", "message": exc.message}]
    return {"ok": False, "spec": str(spec_path), "errors": errors, "hint": for_program(exc.hint or "")}


_SYNTAX_AT = re.compile(r"^line (\d+), column (\d+)$")


def _error_entry(source: str, where: str, what: str) -> dict:
    """One error for machines; a YAML syntax error's "line N, column M" becomes its line (no field path)."""
    at = _SYNTAX_AT.match(where)
    if at:
        return {"file": source, "line": int(at[1]), "column": int(at[2]), "path": "", "message": what}
    return {"file": source, "line": field_line(Path(source), where) if where else None, "path": where, "message": what}


class StrictFailure(UserError):
    """`migrate-policy --strict` and a warning: the translation is not exact (exit 1, nothing written)."""

    exit_code = 1


@task(positional=["policy"], help={
    "policy": "legacy Policy file: JSON, YAML, or a ConfigMap holding one",
    "out": "write the v1 configuration here, atomically, only on success (default: stdout)",
    "scheduler-name": flag_help("config.scheduler_name", after=", a DNS-1123 subdomain"),
    "configmap-key": "which ConfigMap data key holds the Policy (default: policy.cfg, or the only key)",
    "strict": "fail (exit 1, nothing written) when a warning says part of the Policy had no exact equivalent; "
              "notes never fail",
    "json": "print the warnings, notes (and, without --out, the configuration) as JSON",
})
@user_errors
def migrate_policy(c, policy, out=None, scheduler_name=None, configmap_key=None, strict=False, json=False):
    """Translate a pre-1.23 scheduler Policy into a kubescheduler.config.k8s.io/v1 configuration."""
    raw, kind = policy_mod.load(Path(policy), configmap_key or "")
    migration = policy_mod.migrate(raw, scheduler_name_of(c, scheduler_name))
    migration.source_kind = kind
    for warning in migration.warnings:
        log(f"warning: {warning}")
    for note in migration.notes:
        log(f"note: {note}")
    failed = bool(strict and migration.warnings)
    text = migration.text()
    if out and not failed:
        write_atomic(Path(out), text)
        log(f"    wrote {out} ({len(migration.warnings)} warnings, {len(migration.notes)} notes)")
    if json:
        emit_json({"policy": str(policy), "ok": not failed, "out": str(out) if out and not failed else None,
                   **migration.to_dict(), **({} if out or failed else {"config": text})})
    elif not out and not failed:
        emit(text)
    if failed:
        count = len(migration.warnings)
        raise StrictFailure(f"{policy}: {count} {'part' if count == 1 else 'parts'} of the Policy "
                            f"{'has' if count == 1 else 'have'} no exact v1 equivalent"
                            + (f"; nothing written to {out}" if out else ""),
                            "read the warnings above; drop --strict to accept the translation")


ns = Collection("config", render, chart, validate, migrate_policy)
