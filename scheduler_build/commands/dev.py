"""dev: the edit-build-run loop (`inv dev.run`) against the local control plane.

The task decides the inputs (inputs/dev.py: spec, kubeconfig, the build); flows/dev.py runs the loop.
"""

from __future__ import annotations

from invoke import Collection, task

from scheduler_build.flows import dev as dev_flow
from scheduler_build.inputs.dev import dev_inputs
from scheduler_build.commands._common import emit, flag_help, user_errors


@task(
    help={
        "spec": flag_help("spec.path", after="; built, run and watched"),
        "kubeconfig": flag_help("deploy.kubeconfig", "$KUBECONFIG, else the local control plane of `inv cluster.up`",
                                before="run against this cluster; "),
        "state-dir": flag_help("cluster.state_dir"),
        "once": "stop after the first rebuild cycle (for tests and scripts)",
        "dist": flag_help("paths.dist_dir", after="; where each rebuild goes and is run from"),
    },
)
@user_errors
def run(c, spec=None, kubeconfig=None, state_dir=None, once=False, dist=None):
    """Build the spec, run its kube-scheduler locally, rebuild and restart it on every plugin or patch save.

    One result line per cycle on stdout; the save-to-lease time on stderr. A failed
    build keeps the previous scheduler running; Ctrl-C stops it.
    """
    inputs = dev_inputs(c, spec=spec, kubeconfig=kubeconfig, state_dir_flag=state_dir, once=once, dist=dist)
    dev_flow.run(inputs, emit)


ns = Collection("dev", run)
