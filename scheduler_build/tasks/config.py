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
from scheduler_build.tasks._common import emit, user_errors


@task(help={
    "spec": "the build spec (default: config.spec = examples/underlay/scheduler.yaml)",
    "out": "output directory, replaced atomically (default: config.out = dist/config/<name>)",
    "image": "scheduler image reference to deploy (default: the spec's image, tag <k8s-version>-<version>)",
    "k8s-version": "Kubernetes version for the default image tag (default: the spec's kubernetes.version)",
})
@user_errors
def render(c, spec=None, out=None, image=None, k8s_version=None):
    """Render the KubeSchedulerConfiguration, ConfigMap, RBAC, Deployment (and extender) with a kustomization."""
    loaded = spec_mod.load(settings.get(c.config, "config.spec", spec))
    out_dir = Path(settings.get(c.config, "config.out", out) or Path(settings.get(c.config, "paths.dist_dir")) / "config" / loaded.name)
    ref = image or schedconfig.image_ref(loaded, target.kubernetes_release(loaded, k8s_version, settings.cache_dir(c.config)))
    with phase("render", str(out_dir)):
        files = schedconfig.render(loaded, out_dir, ref)
    for name in sorted(files):
        log(f"    {out_dir / name}")
    emit(str(out_dir))


@task(help={
    "spec": "the build spec (default: config.spec)",
    "binary": "kube-scheduler to validate with (default: dist/<name>/<version>/linux-<arch>/kube-scheduler from inv build --spec)",
    "k8s-version": "Kubernetes version whose in-tree plugins are allowed (default: the spec's kubernetes.version)",
    "fields-only": "check the spec field by field only, without running the binary",
    "write-config-to": "also save the binary's defaulted configuration to this file",
})
@user_errors
def validate(c, spec=None, binary=None, k8s_version=None, fields_only=False, write_config_to=None):
    """Check every field of the spec, then have the real kube-scheduler accept the rendered configuration."""
    spec_path = settings.get(c.config, "config.spec", spec)
    with phase("spec", str(spec_path)):
        loaded = spec_mod.load(spec_path)
    version = target.kubernetes_release(loaded, k8s_version, settings.cache_dir(c.config))
    config_validate.check_fields(loaded, version, settings.cache_dir(c.config))
    config = schedconfig.config_text(loaded)
    if fields_only or settings.get(c.config, "config.fields_only", None):
        emit(f"ok: {spec_path} (fields, plugins of Kubernetes {version})")
        return
    binary_path = Path(binary) if binary else config_validate.default_binary(
        loaded, version, Path(settings.get(c.config, "paths.dist_dir")))
    if not binary_path.is_file():
        raise UserError(f"no kube-scheduler at {binary_path}",
                        f"run `inv build --spec {spec_path}` first, pass --binary PATH, or use --fields-only")
    with phase("binary", f"{binary_path} --config ... --write-config-to ... (no network)"):
        image = settings.get(c.config, "config.runner_image") or config_validate.builder_image()
        verdict = config_validate.validate_with_binary(binary_path, config, image)
    if not verdict.ok:
        for line in verdict.output.splitlines()[-15:]:
            log(f"    | {line}")
        raise UserError(f"{binary_path} refused the configuration rendered from {spec_path}: "
                        f"{config_validate.refusal_reason(verdict.output)}",
                        "the binary's own output is above; fix the spec field it names")
    if write_config_to:
        write_atomic(Path(write_config_to), verdict.written)
    emit(f"ok: {spec_path} (fields, plugins of Kubernetes {version}, accepted by {binary_path})")


@task(positional=["policy"], help={
    "policy": "legacy Policy file: JSON, YAML, or a ConfigMap holding one",
    "out": "write the v1 configuration here (default: stdout)",
    "scheduler-name": "schedulerName of the migrated profile (default: default-scheduler)",
    "configmap-key": "which ConfigMap data key holds the Policy (default: policy.cfg, or the only key)",
    "strict": "fail (exit 1) when anything had no equivalent, after printing the warnings",
})
@user_errors
def migrate_policy(c, policy, out=None, scheduler_name=None, configmap_key=None, strict=False):
    """Translate a pre-1.23 scheduler Policy into a kubescheduler.config.k8s.io/v1 configuration."""
    raw, kind = policy_mod.load(Path(policy), configmap_key or "")
    migration = policy_mod.migrate(raw, scheduler_name or settings.get(c.config, "config.scheduler_name"))
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
