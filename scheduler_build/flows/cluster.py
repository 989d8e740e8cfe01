"""`cluster.up`'s conductor: build (or take) the binaries its decided inputs name, then start the control plane,
and with a node the node's components. Its inputs are decided by the task (inputs.cluster); it reads no setting."""

from __future__ import annotations

from scheduler_build.build import pipeline as build_stage
from scheduler_build.cluster import containerd as containerd_mod
from scheduler_build.cluster import controlplane
from scheduler_build.cluster import dns as dns_mod
from scheduler_build.cluster import node as node_mod
from scheduler_build.inputs.cluster import UpInputs
from scheduler_build.progress import phase


def up(inputs: UpInputs) -> controlplane.ClusterState:
    """Build what is missing (cached like every build), start the processes, return the cluster's state."""
    apiserver = inputs.apiserver or build_stage.run(inputs.builds["kube-apiserver"]).binary
    if not inputs.node:
        with phase("cluster up", str(inputs.state_dir)):
            return controlplane.up(apiserver, inputs.state_dir, etcd=inputs.etcd, timeout=inputs.timeout)
    binaries = {name: build_stage.run(inputs.builds[name]).binary for name in node_mod.COMPONENTS}
    binaries["coredns"] = dns_mod.binary(inputs.cache_dir)
    binaries.update(containerd_mod.build(inputs.cache_dir))
    with phase("cluster up --node", str(inputs.state_dir)):
        return node_mod.up(apiserver, binaries, inputs.state_dir, inputs.cache_dir, inputs.etcd, inputs.timeout,
                           list(inputs.registries))
