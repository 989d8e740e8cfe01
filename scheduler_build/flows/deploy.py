"""`deploy`'s conductor: the objects (a rendered directory, or the spec rendered in memory), then the apply."""

from __future__ import annotations

from scheduler_build.config import render, target
from scheduler_build.deploy import apply
from scheduler_build.inputs.deploy import DeployInputs


def objects(inputs: DeployInputs) -> list[dict]:
    """What to apply: the directory config.render wrote, else the spec rendered here."""
    if inputs.directory is not None:
        return apply.load_dir(inputs.directory)
    assert inputs.spec is not None  # deploy_inputs refuses neither
    ref = inputs.image or render.image_ref(inputs.spec, target.kubernetes_release(inputs.spec, None, inputs.cache_dir))
    return apply.load_files(render.render_files(inputs.spec, ref))


def deploy(inputs: DeployInputs, to_apply: list[dict]) -> apply.DeployReport:
    return apply.deploy(to_apply, inputs.kubeconfig, inputs.context or None, dry_run=inputs.dry_run, wait=inputs.wait,
                        timeout=inputs.timeout, rotate_certs=inputs.rotate_certs, cache_dir=inputs.cache_dir)
