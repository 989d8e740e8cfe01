"""The real next-minor framework (k8s.io/kube-scheduler v0.38.0-beta.0), applied to the renumbered tree (issue 41).

The synthetic next minor (synthetic_minor.py) is the newest release renumbered. The real 1.38 framework
is served by the Go module proxy, but k8s.io/kubernetes v1.38.0-beta.0 is not buildable here (the proxy
refuses two of its dependencies), so the renumbered tree carries that framework's plugin-API changes:

- k8s.io/kube-scheduler `framework/interface.go` and `framework/cycle_state.go` are the real
  v0.38.0-beta.0 files, verbatim: `NominatedPodsForNode(logger, nodeName)`, Handle's
  `SharedPodGroupHierarchyTracker()` and `PreemptionManager()` with the Preemption* and ReprieveFilter
  interfaces, `PlacementFeasiblePlugin` and `PlacementProgress`, `GetPodGroupSchedulingCycle` renamed
  `GetPodGroupCycleState`, `PlacementState(placement)`;
- `framework/listers.go` gains the real file's `RootGroupReadiness` and `PodGroupHierarchyTracker`
  (the rest of that file moves DRA types to a dynamic-resource-allocation the renumbered tree lacks);
- one symbol is marked `Deprecated:` (MaxTotalScore), as a new minor deprecates some;
- k8s.io/kubernetes follows, with the fewest edits that keep it compiling: the queue, the dumper,
  preemption and the framework runtime pass a logger to NominatedPodsForNode; the framework runtime's
  Handle returns nil for the two new accessors; CycleState has the renamed method and PlacementState;
- the feature gate PodSchedulingReadiness (GA and locked since 1.30, "remove in 1.32", referenced
  nowhere else) is removed from pkg/features, as each minor removes some.

Each edit checks that its text was found: an upstream change that moves it fails here, by name.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Callable

from scheduler_build.golang import toolchain

REAL_MODULE, REAL_VERSION = "k8s.io/kube-scheduler", "v0.38.0-beta.0"
VERBATIM = ("framework/interface.go", "framework/cycle_state.go")
REMOVED_GATE = "PodSchedulingReadiness"
DEPRECATED = "MaxTotalScore"
Patch = Callable[[str, bytes], bytes]


class PatchMissed(RuntimeError):
    """An edit's anchor text is not in the file any more (the source release changed)."""


def _sub(text: str, pattern: str, replacement: str, path: str, count: int = 1) -> str:
    new, made = re.subn(pattern, replacement, text, count=count, flags=re.M)
    if made == 0:
        raise PatchMissed(f"{path}: found no {pattern!r} to edit")
    return new


def real_framework_dir() -> Path:
    """The real v0.38.0-beta.0 module source (downloaded by the Go its go line needs)."""
    return Path(toolchain.mod_download(REAL_MODULE, REAL_VERSION)["Dir"])


# v0.38.0-beta.0 declares GenericPodGroup in types.go, wrapping a v1beta1 CompositePodGroup this tree's
# k8s.io/api lacks (v1alpha3 there): the PodGroup half is what RootGroupReadiness needs to compile.
_GENERIC_POD_GROUP = """
// GenericPodGroup wraps a PodGroup API object (v0.38.0-beta.0's also wraps a CompositePodGroup).
type GenericPodGroup struct {
	// PodGroup is a PodGroup API object.
	PodGroup *schedulingapi.PodGroup
}
"""


def _listers(text: str, real: str, path: str) -> str:
    start = real.find("// RootGroupReadiness holds")
    if start < 0:
        raise PatchMissed(f"{REAL_MODULE}@{REAL_VERSION} {path}: no RootGroupReadiness")
    if 'schedulingapi "k8s.io/api/scheduling/v1beta1"' not in text:
        raise PatchMissed(f"{path}: no schedulingapi import for GenericPodGroup")
    return text.rstrip("\n") + "\n" + _GENERIC_POD_GROUP + "\n" + real[start:]


def _deprecate(text: str, path: str) -> str:
    return _sub(text, rf"^(\t// {DEPRECATED} is the maximum total score\.)$",
                rf"\1\n\t//\n\t// Deprecated: the framework no longer caps the sum of the weighted scores; compare a "
                rf"node's total against MaxScore times the sum of the weights instead.", path)


def staging_patch(real: Path) -> Patch:
    """k8s.io/kube-scheduler's edits: the real framework files (from `real`), the hierarchy tracker, one deprecation."""
    def patch(path: str, data: bytes) -> bytes:
        if path in VERBATIM:
            data = (real / path).read_bytes()
        elif path == "framework/listers.go":
            data = _listers(data.decode(), (real / path).read_text(), path).encode()
        if path == "framework/interface.go":
            data = _deprecate(data.decode(), path).encode()
        return data
    return patch


_CYCLE_STATE_ADD = '''
// PlacementState implements [fwk.PodGroupCycleState.PlacementState]. The synthetic next minor keeps one
// placement state per cycle: the given placement's is the current one.
func (c *CycleState) PlacementState(placement *fwk.Placement) fwk.PlacementCycleState {
	if placement == nil {
		return nil
	}
	return c.placementCycleState
}
'''

_HANDLE_ADD = '''
// SharedPodGroupHierarchyTracker implements [fwk.Handle]: none in the synthetic next minor.
func (f *frameworkImpl) SharedPodGroupHierarchyTracker() fwk.PodGroupHierarchyTracker {
	return nil
}

// PreemptionManager implements [fwk.Handle]: none in the synthetic next minor.
func (f *frameworkImpl) PreemptionManager() fwk.PreemptionManager {
	return nil
}
'''

# path -> [(pattern, replacement)], each applied once and required.
_KUBERNETES_EDITS: dict[str, list[tuple[str, str]]] = {
    "pkg/scheduler/backend/queue/scheduling_queue.go": [
        (r"^func \(p \*PriorityQueue\) NominatedPodsForNode\(nodeName string\)",
         "func (p *PriorityQueue) NominatedPodsForNode(logger klog.Logger, nodeName string)")],
    "pkg/scheduler/backend/cache/debugger/dumper.go": [
        (r"d\.podQueue\.NominatedPodsForNode\(name\)", "d.podQueue.NominatedPodsForNode(klog.TODO(), name)")],
    "pkg/scheduler/framework/preemption/executor.go": [
        (r"pn\.NominatedPodsForNode\(nodeName\)", "pn.NominatedPodsForNode(klog.TODO(), nodeName)")],
    "pkg/scheduler/framework/runtime/framework.go": [
        (r"fh\.NominatedPodsForNode\(nodeInfo\.Node\(\)\.Name\)",
         "fh.NominatedPodsForNode(klog.FromContext(ctx), nodeInfo.Node().Name)"),
        (r"^(func \(f \*frameworkImpl\) PodGroupManager\(\) fwk\.PodGroupManager \{)", _HANDLE_ADD.lstrip() + "\n\\1")],
    "pkg/scheduler/framework/cycle_state.go": [
        (r"^(func \(c \*CycleState\) SetPlacementCycleState\()", _CYCLE_STATE_ADD.lstrip() + "\n\\1")],
    "pkg/features/kube_features.go": [
        (rf"^\t{REMOVED_GATE} featuregate\.Feature = \"{REMOVED_GATE}\"\n", ""),
        (rf"^\t{REMOVED_GATE}: \{{\n(\t\t.*\n)+\t\}},\n\n", ""),
        (rf"^\t{REMOVED_GATE}: \{{\}},\n\n", "")],
}
_RENAMED = (b"GetPodGroupSchedulingCycle", b"GetPodGroupCycleState")


def kubernetes_patch(path: str, data: bytes) -> bytes:
    """k8s.io/kubernetes's edits that follow the framework's changes and remove the gate."""
    if _RENAMED[0] in data and path.endswith(".go"):
        data = data.replace(*_RENAMED)
    edits = _KUBERNETES_EDITS.get(path)
    if edits:
        text = data.decode()
        for pattern, replacement in edits:
            text = _sub(text, pattern, replacement, path)
        data = text.encode()
    return data


def expected_paths(module: str) -> tuple[str, ...]:
    """The files each module's patch must meet (a zip without one of them fails the fixture)."""
    if module == REAL_MODULE:
        return (*VERBATIM, "framework/listers.go")
    return tuple(_KUBERNETES_EDITS)
