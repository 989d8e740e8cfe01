"""In-tree plugins plus the reference Python extender (filter + prioritize), against a real API server.

NodeNames mode (nodeCacheCapable: the extender's list/watch cache), NodeList mode (the
full Node objects in every request), and a variant where the extender binds.
"""

from __future__ import annotations

import pytest

from scheduler_build.cluster import processes
from scheduler_build.config import schedulerconfig
from testkit import extender_process
from testkit import e2e

from . import quota

pytestmark = pytest.mark.timeout(900)

CAPACITY_LABEL = "underlay.example.com/capacity"
POD_LABEL = {"underlay.example.com/ip": "true"}
REASON = "no free underlay IP"


@pytest.fixture
def extender(control_plane, tmp_path, unique):
    run = extender_process.start_extender(tmp_path, control_plane.admin_kubeconfig, f"extender-{unique}")
    yield run
    run.stop()
    assert not processes.alive(run.record)


@pytest.mark.parametrize("mode", ["node-names", "node-list", "extender-binds"])
def test_extender_keeps_underlay_quotas(mode, control_plane, kube, namespace, nodes, schedulers, extender, unique):
    ours = f"sb-ext-{mode}-{unique}"
    quotas = quota.make_nodes(nodes, f"ext-{mode}-{unique}", CAPACITY_LABEL)
    entry = schedulerconfig.extender_entry(extender.url, node_cache_capable=(mode != "node-list"),
                               bind_verb="bind" if mode == "extender-binds" else "")
    schedulers(e2e.scheduler_config(ours, control_plane.scheduler_kubeconfig, extenders=[entry]),
               extra_args=e2e.EXTENDER_RETRY_ARGS)
    quota.run(kube, namespace, quotas, ours, POD_LABEL, REASON, burst=(mode == "extender-binds"))

    filters = extender.metric("extender_requests_total", verb="filter", code="200")
    assert filters > 0, "the scheduler never called the extender's filter"
    assert extender.metric("extender_requests_total", verb="prioritize", code="200") > 0
    binds = extender.metric("extender_requests_total", verb="bind", code="200")
    if mode == "extender-binds":
        # Every pod that got a node was bound by the extender (deleted ones included).
        assert binds >= sum(quotas.values()) + 2
    else:
        assert binds == 0
