"""The inputs of `dev.run`: the spec (the one spec load), the cluster's kubeconfig and the host build, decided
and checked before anything is built or started (flows/dev.py runs the loop on them)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scheduler_build import kubeclient
from scheduler_build.build.pipeline import BuildRequest
from scheduler_build.cluster import controlplane
from scheduler_build.errors import UserError
from scheduler_build.inputs.build import build_request, spec_arches
from scheduler_build.inputs.cluster import state_dir
from scheduler_build.inputs.common import cache_dir, kubeconfig_path, load_spec
from scheduler_build.spec.model import Spec


@dataclass(frozen=True)
class DevInputs:
    spec: Spec
    kubeconfig: str
    workdir: Path  # <cache>/dev/<name>: the config and the schedulers' logs
    request: BuildRequest  # the host platform's build
    once: bool  # stop after the first rebuild cycle


def kubeconfig_of(c: Any, kubeconfig: str | None, state_dir_flag: str | None) -> str:
    """The one kubeconfig rule (--kubeconfig, deploy.kubeconfig, $KUBECONFIG; checked), else the admin kubeconfig
    of the local control plane of `inv cluster.up`."""
    chosen = kubeconfig_path(c, kubeconfig)
    if chosen:
        kubeclient.check_kubeconfig(chosen)
        return chosen
    directory = state_dir(c, state_dir_flag)
    state = controlplane.load_state(directory)
    if state is None:
        raise UserError(f"no local control plane in {directory}", "start one with `inv cluster.up`, or pass --kubeconfig")
    return state.admin_kubeconfig  # the spec's own Lease name: the bootstrap scheduler role may not update it


def dev_inputs(c: Any, *, spec: str | None = None, kubeconfig: str | None = None, state_dir_flag: str | None = None,
               once: bool = False, dist: str | None = None) -> DevInputs:
    """Every value by the one precedence rule; no spec, or no cluster to run against, is refused here."""
    loaded = load_spec(c, spec)
    if loaded is None:
        raise UserError("dev.run builds a spec's scheduler and none is set", "pass --spec PATH or set spec.path")
    arch = spec_arches(loaded, False)[0]
    return DevInputs(spec=loaded, kubeconfig=kubeconfig_of(c, kubeconfig, state_dir_flag),
                     workdir=cache_dir(c) / "dev" / loaded.name,
                     request=build_request(c, arch=arch, component="kube-scheduler", spec=loaded, dist=dist),
                     once=bool(once))
