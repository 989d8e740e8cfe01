"""dev: the edit-build-run loop (`inv dev.run`) against the local control plane.

The task decides the inputs (spec, kubeconfig, the build); flows/dev.py runs the loop.
"""

from __future__ import annotations

from pathlib import Path

from invoke import Collection, task

from scheduler_build import kubeclient, settings
from scheduler_build.build import from_spec
from scheduler_build.cluster import controlplane
from scheduler_build.errors import UserError
from scheduler_build.flows import dev as dev_flow
from scheduler_build.commands._common import build_request, emit, flag_help, load_spec, option, user_errors


def _kubeconfig(c, kubeconfig, state_dir) -> str:
    if kubeconfig:
        kubeclient.check_kubeconfig(kubeconfig)
        return str(kubeconfig)
    directory = Path(option(c, "cluster.state_dir", state_dir) or settings.cache_dir(c.config) / "cluster")
    state = controlplane.load_state(directory)
    if state is None:
        raise UserError(f"no local control plane in {directory}", "start one with `inv cluster.up`, or pass --kubeconfig")
    return state.admin_kubeconfig  # the spec's own Lease name: the bootstrap scheduler role may not update it


@task(
    help={
        "spec": flag_help("spec.path", after="; built, run and watched"),
        "kubeconfig": "run against this cluster instead of the local control plane of `inv cluster.up`",
        "state-dir": flag_help("cluster.state_dir"),
        "once": "stop after the first rebuild cycle (for tests and scripts)",
    },
)
@user_errors
def run(c, spec=None, kubeconfig=None, state_dir=None, once=False):
    """Build the spec, run its kube-scheduler locally, rebuild and restart it on every plugin or patch save.

    One result line per cycle on stdout; the save-to-lease time on stderr. A failed
    build keeps the previous scheduler running; Ctrl-C stops it.
    """
    loaded = load_spec(c, spec)
    if loaded is None:
        raise UserError("dev.run builds a spec's scheduler and none is set", "pass --spec PATH or set spec.path")
    arch = from_spec.spec_arches(loaded, False)[0]
    inputs = dev_flow.DevInputs(spec=loaded, kubeconfig=_kubeconfig(c, kubeconfig, state_dir),
                                workdir=settings.cache_dir(c.config) / "dev" / loaded.name,
                                request=build_request(c, arch=arch, component="kube-scheduler", spec=loaded),
                                once=bool(once))
    dev_flow.run(inputs, emit)


ns = Collection("dev", run)
