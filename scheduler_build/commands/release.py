"""release: what a release pipeline fans out to, read from the build spec.

Each task decides its inputs first (inputs/release.py), then acts."""

import json as jsonlib

from invoke import Collection, task

from scheduler_build.build import matrix as release_matrix
from scheduler_build.image import ci_step
from scheduler_build.inputs import release as release_inputs
from scheduler_build.commands._common import emit, flag_help, user_errors


@task(help={
    "spec": flag_help("spec.path", after="; its platforms and Kubernetes version make the matrix"),
    "k8s-versions": "comma-separated Kubernetes versions to build instead of the spec's, e.g. 1.35,1.36",
    "json": "print the matrix as one line of JSON, for the CI system's matrix (GitHub Actions: fromJSON)",
})
@user_errors
def matrix(c, spec=None, k8s_versions=None, json=False):
    """Print a spec's release matrix: one build job per platform and per Kubernetes version."""
    inputs = release_inputs.matrix_inputs(c, spec=spec, k8s_versions=k8s_versions)
    result = release_matrix.release_matrix(inputs.spec, inputs.k8s_versions)
    # One line: a CI step passes it on as `matrix=<json>` in $GITHUB_OUTPUT.
    emit(jsonlib.dumps(result, separators=(",", ":")) if json else release_matrix.table(result))


@task(name="step-image", help={
    "tag": f"image tag (default: {ci_step.TAG})",
    "force": "rebuild even when the image's inputs are unchanged",
})
@user_errors
def step_image(c, tag=None, force=False):
    """Build the image CI steps run in (Python, this package, Go, git) locally, from a bootstrapped Debian base."""
    inputs = release_inputs.step_image_inputs(c, tag=tag, force=force)
    result = ci_step.build(inputs.cache_dir, inputs.project_dir, inputs.tag or ci_step.TAG, force=inputs.force,
                           mirror=inputs.mirror)
    emit(f"{result.tag} {result.image_id}")


ns = Collection("release", matrix, step_image)
