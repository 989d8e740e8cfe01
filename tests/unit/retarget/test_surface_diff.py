"""The framework's API changes read from two releases' real sources (k8s.io/kube-scheduler v0.37.2 and
v0.38.0-beta.0 from the Go module proxy: the 1.38 framework is readable although its dependencies are not
served yet), and where a 1.37 plugin meets them."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path

import pytest

from scheduler_build.resolve import framework_surface
from scheduler_build.retarget import surface_diff

_CACHE = Path(tempfile.mkdtemp(prefix="sb-test-surface-diff-"))
atexit.register(shutil.rmtree, _CACHE, True)

PLUGIN = """package gang

func (pl *Gang) Filter(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeInfo fwk.NodeInfo) *fwk.Status {
	nominated := pl.handle.NominatedPodsForNode(nodeInfo.Node().Name)
	_ = state
	return nil
}
"""


def fake_handle(surface: framework_surface.FrameworkSurface, leave_out: str = "") -> str:
    """A hand-written fake Handle of that release: a method of each name of its method set (names matter here)."""
    names = sorted({sig.split("(", 1)[0] for sig in surface.method_set("Handle")} - {leave_out})
    return "package gang\n" + "".join(f"func (f *fakeHandle) {name}() {{}}\n" for name in names)


@pytest.fixture(scope="module")
def surfaces():
    return (framework_surface.framework_surface("v1.37.2", _CACHE),
            framework_surface.framework_surface("v1.38.0-beta.0", _CACHE))


def test_each_change_of_the_1_38_framework_is_named(surfaces):
    lines = [c.line() for c in surface_diff.diff(*surfaces)]
    assert ("Handle.NominatedPodsForNode: NominatedPodsForNode(nodeName string) []PodInfo -> "
            "NominatedPodsForNode(logger klog.Logger, nodeName string) []PodInfo") in lines
    assert "Handle.PreemptionManager: added (PreemptionManager() PreemptionManager)" in lines
    assert any(l.startswith("Handle.SharedPodGroupHierarchyTracker: added") for l in lines)
    assert "PlacementFeasiblePlugin: new interface (a new extension point)" in lines
    assert any(l.startswith("CycleState.GetPodGroupSchedulingCycle: renamed GetPodGroupCycleState") for l in lines)
    assert any(l.startswith("PodGroupCycleState.PlacementState: added") for l in lines)
    for interface in ("PreemptionManager", "PreemptionExecutor", "PreemptionVictim", "PreemptionCandidate", "ReprieveFilter"):
        assert f"{interface}: new interface" in lines
    # Negative control: a release against itself has no change.
    assert surface_diff.diff(surfaces[0], surfaces[0]) == []


def test_the_plugin_call_and_the_fake_handle_are_named_where_they_are(surfaces):
    fake_go = fake_handle(surfaces[0])
    found = [u.line() for u in surface_diff.uses({"pkg/gang/gang.go": PLUGIN, "pkg/gang/fake_test.go": fake_go}, *surfaces)]
    assert any(l.startswith("pkg/gang/gang.go:4: calls Handle.NominatedPodsForNode:") and "klog.Logger" in l for l in found)
    fake = [l for l in found if l.startswith("fakeHandle: implements Handle")]
    assert fake and "PreemptionManager" in fake[0] and "SharedPodGroupHierarchyTracker" in fake[0]
    # A type that did not implement all of Handle is not taken for a fake of it.
    partial = fake_handle(surfaces[0], leave_out="Extenders")
    assert not any("implements Handle" in u.line() for u in surface_diff.uses({"f.go": partial}, *surfaces))
