"""`deploy`'s conductor: the objects (a rendered directory, or the spec rendered in memory), then the apply."""

from __future__ import annotations

from scheduler_build.config import render, target
from scheduler_build.deploy import apply
from scheduler_build.inputs.deploy import DeployInputs


def objects(inputs: DeployInputs) -> tuple[list[dict], str]:
    """What to apply and the scheduler's release (for the skew policy; "" when unknown): the directory
    config.render wrote, else the spec rendered here."""
    if inputs.directory is not None:
        loaded = apply.load_dir(inputs.directory)
        return loaded, apply.scheduler_version_of(loaded)
    assert inputs.spec is not None  # deploy_inputs refuses neither
    release = target.kubernetes_release(inputs.spec, None, inputs.cache_dir)
    ref = inputs.image or render.image_ref(inputs.spec, release)
    return apply.load_files(render.render_files(inputs.spec, ref)), release


def deploy(inputs: DeployInputs, to_apply: list[dict], scheduler_version: str) -> apply.DeployReport:
    return apply.deploy(to_apply, inputs.kubeconfig, inputs.context or None, dry_run=inputs.dry_run, wait=inputs.wait,
                        timeout=inputs.timeout, rotate_certs=inputs.rotate_certs, cache_dir=inputs.cache_dir,
                        scheduler_version=scheduler_version, allow_skew=inputs.allow_skew)
