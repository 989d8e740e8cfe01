"""The example out-of-tree plugin (UnderlayIPLimit, from `inv build --spec`) keeps underlay quotas.

Burst: all pods at once. The plugin counts in the scheduler's own cycle (Reserve), so no
node goes over its quota however fast pods arrive.
"""

from __future__ import annotations

import pytest

from testkit import e2e

from . import quota

pytestmark = pytest.mark.timeout(1200)

CAPACITY_LABEL = "underlay.example.com/capacity"  # the plugin's defaults (args.go)
POD_LABEL = {"underlay.example.com/ip": "true"}


def test_plugin_keeps_underlay_quotas(control_plane, kube, namespace, nodes, schedulers, built_example_scheduler,
                                      unique):
    ours = f"sb-plugin-{unique}"
    quotas = quota.make_nodes(nodes, f"plugin-{unique}", CAPACITY_LABEL)
    config = e2e.scheduler_config(ours, control_plane.scheduler_kubeconfig,
                                  plugins={"multiPoint": {"enabled": [{"name": "UnderlayIPLimit", "weight": 3}]}})
    schedulers(config, binary=built_example_scheduler.binary)
    quota.run(kube, namespace, quotas, ours, POD_LABEL, "no free underlay IP", burst=True)
