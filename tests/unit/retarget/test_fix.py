"""`plugin.retarget --fix` on a 1.37 plugin carried to the real v0.38.0-beta.0 framework: the logger argument
passed from the function's context, the renamed method called by its new name, a fake Handle given the two new
methods as TODO(retarget) stubs (no panic), the result parsed by the real gofmt; and the dirty-tree refusal
against a real git repository."""

from __future__ import annotations

import atexit
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from scheduler_build.errors import UserError
from scheduler_build.resolve import framework_surface
from scheduler_build.retarget import fix

_CACHE = Path(tempfile.mkdtemp(prefix="sb-test-fix-"))
atexit.register(shutil.rmtree, _CACHE, True)

PLUGIN = """package gang

import (
	"context"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
)

func (pl *Gang) Filter(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeInfo fwk.NodeInfo) *fwk.Status {
	nominated := pl.handle.NominatedPodsForNode(nodeInfo.Node().Name)
	_ = state.GetPodGroupSchedulingCycle()
	_ = nominated
	return nil
}

func (pl *Gang) count(name string) int {
	return len(pl.handle.NominatedPodsForNode(name))
}
"""


@pytest.fixture(scope="module")
def surfaces():
    return (framework_surface.framework_surface("v1.37.2", _CACHE),
            framework_surface.framework_surface("v1.38.0-beta.0", _CACHE))


def fake_handle(surface) -> str:
    names = sorted({sig.split("(", 1)[0] for sig in surface.method_set("Handle")})
    return ('package gang\n\nimport (\n\tfwk "k8s.io/kube-scheduler/framework"\n)\n\ntype fakeHandle struct{}\n'
            + "".join(f"func (f *fakeHandle) {name}() {{}}\n" for name in names))


def test_the_mechanical_port_to_1_38(surfaces):
    sources = {"pkg/gang/gang.go": PLUGIN, "pkg/gang/fake_test.go": fake_handle(surfaces[0])}
    result = fix.fix(sources, *surfaces)
    gang = fix.gofmt(result.files["pkg/gang/gang.go"])
    assert "pl.handle.NominatedPodsForNode(klog.FromContext(ctx), nodeInfo.Node().Name)" in gang
    assert "pl.handle.NominatedPodsForNode(klog.TODO(), name)" in gang  # no context in that function
    assert "state.GetPodGroupCycleState()" in gang and '"k8s.io/klog/v2"' in gang
    fake = result.files["pkg/gang/fake_test.go"]
    for method, result_type in (("PreemptionManager", "fwk.PreemptionManager"),
                                ("SharedPodGroupHierarchyTracker", "fwk.PodGroupHierarchyTracker")):
        assert f"func (f *fakeHandle) {method}() {result_type} {{\n\treturn nil\n}}" in fake
    assert fake.count("TODO(retarget)") == 2 and "panic(" not in fake
    for name, text in result.files.items():  # the real gofmt parses every rewritten file
        parsed = subprocess.run(["gofmt", "-e"], input=text, capture_output=True, text=True)
        assert parsed.returncode == 0, (name, parsed.stderr)
    assert any("pkg/gang/gang.go:11:" in line and "klog.FromContext(ctx)" in line for line in result.done)
    # The diff shows both files; a file with nothing to port is left out.
    diff = result.diff(sources)
    assert "+++ b/pkg/gang/gang.go" in diff and "+++ b/pkg/gang/fake_test.go" in diff
    assert fix.fix({"pkg/other.go": "package other\n"}, *surfaces).files == {}


def test_fix_refuses_a_dirty_tree_and_a_tree_outside_git(tmp_path):
    with pytest.raises(UserError, match="not in a git work tree"):
        fix.check_clean(tmp_path)
    git = ["git", "-C", str(tmp_path), "-c", "user.email=t@example.com", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], check=True)
    (tmp_path / "go.mod").write_text("module example.com/p\n")
    with pytest.raises(UserError, match=r"uncommitted changes \(go.mod\).*--allow-dirty"):
        fix.check_clean(tmp_path)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "x"], check=True)
    fix.check_clean(tmp_path)  # clean: no error


OLD_SCORE = Path(__file__).resolve().parents[2] / "data" / "retarget" / "oldscore" / "pkg" / "nodelabelscore" / "nodelabelscore.go"


def test_a_1_27_plugin_gets_the_moved_imports_and_the_context_factory_and_its_score_is_named(surfaces):
    """tests/data/retarget/oldscore (written for 1.27) against v1.37.2's real framework. What the target's
    k8s.io/kubernetes framework package still declares is given here (a large download in a unit test)."""
    name = "pkg/nodelabelscore/nodelabelscore.go"
    old = framework_surface.parse_go("", "v1.27.10", framework_surface.KUBERNETES_PACKAGE)
    result = fix.fix({name: OLD_SCORE.read_text()}, old, surfaces[0], frozenset({"NewCycleState", "Registry"}))
    text = fix.gofmt(result.files[name])
    assert "func New(_ context.Context, _ runtime.Object, h fwk.Handle) (fwk.Plugin, error) {" in text
    assert "state fwk.CycleState" in text and "fwk.NewStatus(fwk.Error," in text and "return fwk.MaxNodeScore, nil" in text
    assert 'fwk "k8s.io/kube-scheduler/framework"' in text
    assert '"k8s.io/kubernetes/pkg/scheduler/framework"\n' not in text  # no longer used: dropped
    assert "frameworkruntime.Registry{Name: New}" in text  # still in k8s.io/kubernetes: kept
    # Score takes a NodeInfo in 1.37, not a node name: its body is the author's to port, and said so.
    assert any(line.startswith(f"{name}:37: NodeLabelScore.Score does not have ScorePlugin's signature")
               for line in result.not_fixed), result.not_fixed
    assert subprocess.run(["gofmt", "-e"], input=text, capture_output=True, text=True).returncode == 0


OLD_FILTER = Path(__file__).resolve().parents[2] / "data" / "retarget" / "oldfilter"


# Verbatim from k8s.io/kubernetes v1.27.10 pkg/scheduler/framework (interface.go, listers.go, extender.go, comments left out):
# the declarations the oldfilter fixture calls, and the Extender that shares Filter's name (a download of that
# module is too large for a unit test; tests/integration/test_retarget_old_plugin.py reads all of it).
FRAMEWORK_1_27 = """package framework

type Plugin interface {
	Name() string
}

type FilterPlugin interface {
	Plugin
	Filter(ctx context.Context, state *CycleState, pod *v1.Pod, nodeInfo *NodeInfo) *Status
}

type ScorePlugin interface {
	Plugin
	Score(ctx context.Context, state *CycleState, p *v1.Pod, nodeName string) (int64, *Status)
}

type NodeInfoLister interface {
	List() ([]*NodeInfo, error)
	Get(nodeName string) (*NodeInfo, error)
}

type Extender interface {
	Name() string

	Filter(pod *v1.Pod, nodes []*v1.Node) (filteredNodes []*v1.Node, failedNodesMap extenderv1.FailedNodesMap, failedAndUnresolvable extenderv1.FailedNodesMap, err error)

	Prioritize(pod *v1.Pod, nodes []*v1.Node) (hostPriorities *extenderv1.HostPriorityList, weight int64, err error)

	Bind(binding *v1.Binding) error

	IsBinder() bool

	IsInterested(pod *v1.Pod) bool

	ProcessPreemption(
		pod *v1.Pod,
		nodeNameToVictims map[string]*extenderv1.Victims,
		nodeInfos NodeInfoLister,
	) (map[string]*extenderv1.Victims, error)

	SupportsPreemption() bool

	IsIgnorable() bool
}
"""


def test_a_1_27_filter_plugin_is_ported_whole_its_points_taking_the_interfaces_and_its_tests_the_context(surfaces):
    """tests/data/retarget/oldfilter (1.27: `*framework.CycleState`, `*framework.NodeInfo`, `New(obj, h)` called
    by its tests) against v1.37.2's real framework: nothing is left to port by hand. Its calls of `Filter`
    (its own, given the interfaces) and of `NodeInfoLister.Get` (now a NodeInfo result) compile as written."""
    sources = {str(p.relative_to(OLD_FILTER)): p.read_text() for p in sorted(OLD_FILTER.rglob("*.go"))}
    old = framework_surface.parse_go(FRAMEWORK_1_27, "v1.27.10", framework_surface.KUBERNETES_PACKAGE)
    changes = {c.line().split(":", 1)[0] for c in fix.surface_diff.diff(old, surfaces[0]) if c.kind == "changed"}
    assert {"FilterPlugin.Filter", "NodeInfoLister.Get", "Extender.Filter", "ScorePlugin.Score"} <= changes
    result = fix.fix(sources, old, surfaces[0], frozenset({"NewCycleState", "NewNodeInfo"}))
    assert result.not_fixed == []
    plugin = fix.gofmt(result.files["pkg/zonecap/zonecap.go"])
    assert ("func (z *ZoneCap) Filter(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeInfo fwk.NodeInfo) "
            "*fwk.Status {") in plugin
    assert "func (z *ZoneCap) Unreserve(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeName string) {" in plugin
    assert '"k8s.io/kubernetes/pkg/scheduler/framework"' not in plugin  # nothing of it is used any more
    tests = fix.gofmt(result.files["pkg/zonecap/zonecap_test.go"])
    assert tests.count("New(context.TODO(), &runtime.Unknown{") == 2  # the factory is in another file of the package
    assert "framework.NewCycleState()" in tests and "framework.NewNodeInfo(" in tests  # still in k8s.io/kubernetes
    # The negative control: a point whose types differ beyond pointer -> interface is not touched.
    score = OLD_SCORE.read_text()
    assert "Score(ctx context.Context, state *framework.CycleState" in fix.interface_params("s.go", score, surfaces[0], fix.Fixes())


def test_a_call_a_changed_method_breaks_is_still_left_by_hand(surfaces):
    """The negative control of the rule above: 1.27's `Score(..., nodeName string)` takes a NodeInfo in 1.37 (not
    a pointer become an interface) and no other interface keeps it, so a call of it is named by hand, while
    `List()`'s `[]*NodeInfo` -> `[]NodeInfo` (a slice, not a top-level pointer) is one too."""
    old = framework_surface.parse_go(FRAMEWORK_1_27, "v1.27.10", framework_surface.KUBERNETES_PACKAGE)
    text = ("package p\n\nfunc (p *P) rank(ctx context.Context, l Lister) {\n"
            "\t_, _ = p.Score(ctx, nil, nil, \"n1\")\n\t_, _ = l.List()\n\t_, _ = l.Get(\"n1\")\n}\n")
    result = fix.fix({"p.go": text}, old, surfaces[0])
    assert [line.split(": ", 2)[:2] for line in result.not_fixed] == [["p.go:4", "ScorePlugin.Score"],
                                                                     ["p.go:5", "NodeInfoLister.List"]], result.not_fixed
