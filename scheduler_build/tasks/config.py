"""config: render, validate and migrate the scheduler's configuration and manifests."""

from __future__ import annotations

from pathlib import Path

from invoke import Collection, task

from scheduler_build import settings
from scheduler_build.config import legacy_policy as policy_mod
from scheduler_build.config import render as schedconfig
from scheduler_build.config import target
from scheduler_build.config import validate as config_validate
from scheduler_build import spec as spec_mod
from scheduler_build.errors import UserError
from scheduler_build.atomic import write_atomic
from scheduler_build.progress import log, phase
from scheduler_build.tasks._common import describe, emit, option, user_errors


@task(help={
    "spec": f"the build spec ({describe('spec.path')})",
    "out": f"output directory, replaced atomically ({describe('config.out', '<paths.dist_dir>/config/<name>')})",
    "image": "scheduler image reference to deploy (default: the spec's image, tag <k8s-version>-<version>)",
    "k8s-version": "Kubernetes version for the default image tag (default: the spec's kubernetes.version)",
})
@user_errors
def render(c, spec=None, out=None, image=None, k8s_version=None):
    """Render the KubeSchedulerConfiguration, ConfigMap, RBAC, Deployment (and extender) with a kustomization."""
    loaded = spec_mod.load(option(c, "spec.path", spec))
    out_dir = Path(option(c, "config.out", out) or Path(option(c, "paths.dist_dir")) / "config" / loaded.name)
    ref = image or schedconfig.image_ref(loaded, target.kubernetes_release(loaded, k8s_version, settings.cache_dir(c.config)))
    with phase("render", str(out_dir)):
        files = schedconfig.render(loaded, out_dir, ref)
    for name in sorted(files):
        log(f"    {out_dir / name}")
    emit(str(out_dir))


@task(help={
    "spec": f"the build spec ({describe('spec.path')})",
    "binary": "kube-scheduler to validate with (default: dist/<name>/<version>/linux-<arch>/kube-scheduler from inv build --spec)",
    "k8s-version": "Kubernetes version whose in-tree plugins are allowed (default: the spec's kubernetes.version)",
    "fields-only": f"check the spec field by field only, without running the binary ({describe('config.fields_only')})",
    "write-config-to": "also save the binary's defaulted configuration to this file",
})
@user_errors
def validate(c, spec=None, binary=None, k8s_version=None, fields_only=False, write_config_to=None):
    """Check every field of the spec, then have the real kube-scheduler accept the rendered configuration."""
    spec_path = option(c, "spec.path", spec)
    with phase("spec", str(spec_path)):
        loaded = spec_mod.load(spec_path)
    version = target.kubernetes_release(loaded, k8s_version, settings.cache_dir(c.config))
    config_validate.check_fields(loaded, version, settings.cache_dir(c.config))
    config = schedconfig.config_text(loaded)
    if option(c, "config.fields_only", fields_only):
        emit(f"ok: {spec_path} (fields, plugins of Kubernetes {version})")
        return
    binary_path = Path(binary) if binary else config_validate.default_binary(
        loaded, version, Path(option(c, "paths.dist_dir")))
    if not binary_path.is_file():
        raise UserError(f"no kube-scheduler at {binary_path}",
                        f"run `inv build --spec {spec_path}` first, pass --binary PATH, or use --fields-only")
    with phase("binary", f"{binary_path} --config ... --write-config-to ... (no network)"):
        image = option(c, "config.runner_image") or config_validate.builder_image()
        verdict = config_validate.validate_with_binary(binary_path, config, image)
    if not verdict.ok:
        for line in verdict.output.splitlines()[-15:]:
            log(f"    | {line}")
        raise UserError(f"{binary_path} refused the configuration rendered from {spec_path}: "
                        f"{config_validate.refusal_reason(verdict.output)}",
                        config_validate.refusal_hint(verdict.output, loaded))
    if write_config_to:
        write_atomic(Path(write_config_to), verdict.written)
    emit(f"ok: {spec_path} (fields, plugins of Kubernetes {version}, accepted by {binary_path})")


@task(positional=["policy"], help={
    "policy": "legacy Policy file: JSON, YAML, or a ConfigMap holding one",
    "out": "write the v1 configuration here (default: stdout)",
    "scheduler-name": f"schedulerName of the migrated profile ({describe('config.scheduler_name')})",
    "configmap-key": "which ConfigMap data key holds the Policy (default: policy.cfg, or the only key)",
    "strict": "fail (exit 1) when anything had no equivalent, after printing the warnings",
})
@user_errors
def migrate_policy(c, policy, out=None, scheduler_name=None, configmap_key=None, strict=False):
    """Translate a pre-1.23 scheduler Policy into a kubescheduler.config.k8s.io/v1 configuration."""
    raw, kind = policy_mod.load(Path(policy), configmap_key or "")
    migration = policy_mod.migrate(raw, option(c, "config.scheduler_name", scheduler_name))
    migration.source_kind = kind
    for warning in migration.warnings:
        log(f"warning: {warning}")
    text = migration.text()
    if out:
        write_atomic(Path(out), text)
        log(f"    wrote {out} ({len(migration.warnings)} warnings)")
    else:
        emit(text)
    if strict and migration.warnings:
        raise UserError(f"{policy}: {len(migration.warnings)} parts of the Policy have no exact v1 equivalent",
                        "read the warnings above; drop --strict to accept the translation")


ns = Collection("config", render, validate, migrate_policy)
