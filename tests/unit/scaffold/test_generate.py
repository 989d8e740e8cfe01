"""Unit tests for scheduler_build.scaffold: validation, rendering from each release's real framework source
(k8s.io/kube-scheduler `framework/`, read by resolve.framework_surface through the Go module proxy, once per
session into the Go module cache), and a signature change followed with no code change."""

from __future__ import annotations

import atexit
import dataclasses
import functools
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
import yaml

from scheduler_build.resolve import framework_surface, versions
from scheduler_build.scaffold import generate
from scheduler_build.errors import UserError


def resolution(version: str) -> versions.Resolution:
    minor = versions.minor_of(version)
    return versions.Resolution(
        requested=minor, version=version, minor=minor, go_version="1.25.0",
        staging_version="v0." + version[3:], replaces={"k8s.io/api": "v0." + version[3:], "k8s.io/kube-scheduler": "v0." + version[3:]},
    )


@pytest.mark.parametrize("name", ["underlay", "_Foo", "Foo-Bar", "Foo Bar", "", "Ünder", "1Foo"])
def test_bad_names(name):
    with pytest.raises(UserError, match="exported Go identifier"):
        generate.validate_name(name)


def test_good_name():
    assert generate.validate_name("UnderlayIPLimit") == "UnderlayIPLimit"


def test_points_in_cycle_order_with_aliases():
    assert generate.parse_points("Score, filter,PreFilter,unreserve,filter") == ("prefilter", "filter", "score", "reserve")
    assert generate.parse_points("normalizeScore,queueing-hints") == ("score", "enqueueextensions")


def test_unknown_point_lists_valid_ones():
    with pytest.raises(UserError) as err:
        generate.parse_points("filter,predicate,priority")
    assert "predicate, priority" in str(err.value)
    assert "prefilter" in err.value.hint and "enqueueextensions" in err.value.hint


def test_no_points():
    with pytest.raises(UserError, match="names no extension point"):
        generate.parse_points(" , ")


@pytest.mark.parametrize("module", ["underlay", "Example.com/x", "example.com//x", "example.com/x/", "-x.com/y", "example.com/a b", ".example.com/x", "example.com/x."])
def test_bad_modules(module):
    with pytest.raises(UserError, match="not a valid Go module path"):
        generate.validate_module(module)


@pytest.mark.parametrize("module", ["example.com/acme/underlay", "github.com/Acme/sched-plugins/v2", "gitlab.example.co.uk/x_y/z~1"])
def test_good_modules(module):
    assert generate.validate_module(module) == module


def test_framework_api_follows_the_source_not_the_minor():
    a34, a35, a37 = (generate.framework_api(surface(v)) for v in ("v1.34.4", "v1.35.4", "v1.37.2"))
    assert a34.split and a34.types["Handle"] == "framework.Handle" and a34.types["FilterPlugin"] == "framework.FilterPlugin"
    assert not a35.split and a35.types["Plugin"] == "fwk.Plugin" and a37.types["QueueSortPlugin"] == "fwk.QueueSortPlugin"
    # Negative control: a framework without the staging package's interfaces is refused, not guessed at.
    with pytest.raises(UserError, match="templates need the k8s.io/kube-scheduler/framework package"):
        generate.framework_api(framework_surface.parse_go("type Status struct {\n}\n", "v1.33.9",
                                                          framework_surface.KUBERNETES_PACKAGE))


def test_out_dir_checks(tmp_path):
    generate.check_out_dir(tmp_path / "new", force=False)
    (tmp_path / "empty").mkdir()
    generate.check_out_dir(tmp_path / "empty", force=False)
    full = tmp_path / "full"
    full.mkdir()
    (full / "keep.txt").write_text("mine")
    with pytest.raises(UserError, match="is not empty") as err:
        generate.check_out_dir(full, force=False)
    assert "--force" in err.value.hint
    generate.check_out_dir(full, force=True)
    (tmp_path / "file").write_text("x")
    with pytest.raises(UserError, match="not a directory"):
        generate.check_out_dir(tmp_path / "file", force=True)


@pytest.mark.parametrize(
    "bad, message",
    [
        (dict(name="lower"), "exported Go identifier"),
        (dict(module="nodot/x"), "not a valid Go module path"),
    ],
)
def test_bad_input_writes_nothing(tmp_path, monkeypatch, bad, message):
    # Validation runs before resolution: resolve must never be reached.
    monkeypatch.setattr(versions, "resolve", lambda *a, **k: pytest.fail("resolved despite bad input"))
    fields = dict(name="Good", points="filter", module="example.com/x", k8s_version="1.36", out=tmp_path / "out", cache_dir=tmp_path / "cache")
    fields.update(bad)
    with pytest.raises(UserError, match=message):
        generate.scaffold(generate.ScaffoldRequest(**fields))
    assert list(tmp_path.iterdir()) == []


def test_non_empty_out_untouched(tmp_path, monkeypatch):
    monkeypatch.setattr(versions, "resolve", lambda *a, **k: pytest.fail("resolved despite bad input"))
    out = tmp_path / "out"
    out.mkdir()
    (out / "main.go").write_text("package main\n")
    with pytest.raises(UserError, match="not empty"):
        generate.scaffold(generate.ScaffoldRequest(name="Good", points="filter", module="example.com/x", k8s_version="1.36", out=out, cache_dir=tmp_path))
    assert [p.name for p in tmp_path.iterdir()] == ["out"] and (out / "main.go").read_text() == "package main\n"


def test_force_replaces_only_what_the_scaffold_wrote(tmp_path, monkeypatch):
    monkeypatch.setattr(versions, "resolve", lambda text, cache: resolution("v1.36.3"))
    monkeypatch.setattr(framework_surface, "framework_surface", lambda version, cache: surface(version))
    out = tmp_path / "out"
    request = dict(name="Good", points="filter", module="example.com/x", k8s_version="1.36", out=out,
                   cache_dir=tmp_path, force=True, tidy=False)
    generate.scaffold(generate.ScaffoldRequest(**request))
    (out / ".git").mkdir()
    (out / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (out / "mine.go").write_text("package mine\n")
    (out / "pkg/good/args.go").write_text("edited by hand\n")  # generated, then edited: the user's now
    (out / "go.mod").unlink()  # generated, deleted by the user: simply re-created
    result = generate.scaffold(generate.ScaffoldRequest(**{**request, "name": "Better", "points": "score"}))
    assert (out / ".git" / "HEAD").read_text() == "ref: refs/heads/main\n"
    assert (out / "mine.go").read_text() == "package mine\n"
    assert (out / "pkg/good/args.go").read_text() == "edited by hand\n"
    assert result.plan.keep == ["pkg/good/args.go"] and "go.mod" in result.plan.create
    assert "pkg/good/good.go" in result.plan.remove and not (out / "pkg/good/good.go").exists()
    assert "README.md" in result.plan.replace and "Better" in (out / "README.md").read_text()
    # An edited file the scaffold would write again is a clash: refused, nothing written.
    (out / "README.md").write_text("edited by hand\n")
    with pytest.raises(UserError, match="README.md .edited since"):
        generate.scaffold(generate.ScaffoldRequest(**{**request, "name": "Better"}))
    assert (out / "README.md").read_text() == "edited by hand\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no temporary directory left


def test_force_refuses_to_overwrite_a_file_it_did_not_write(tmp_path, monkeypatch):
    monkeypatch.setattr(versions, "resolve", lambda text, cache: resolution("v1.36.3"))
    monkeypatch.setattr(framework_surface, "framework_surface", lambda version, cache: surface(version))
    out = tmp_path / "out"
    out.mkdir()
    (out / "go.mod").write_text("module mine\n")
    with pytest.raises(UserError, match="would overwrite 1 file.*go.mod"):
        generate.scaffold(generate.ScaffoldRequest(name="Good", points="filter", module="example.com/x",
                                                   k8s_version="1.36", out=out, cache_dir=tmp_path, force=True, tidy=False))
    assert [p.name for p in out.iterdir()] == ["go.mod"] and (out / "go.mod").read_text() == "module mine\n"


ALL = ",".join(generate.POINT_KEYS)

_CACHE = Path(tempfile.mkdtemp(prefix="sb-test-surfaces-"))
atexit.register(shutil.rmtree, _CACHE, True)
_READ = framework_surface.framework_surface  # the real reader (some tests stand `surface` in for it)


@functools.lru_cache(maxsize=None)
def surface(version: str) -> framework_surface.FrameworkSurface:
    """The release's real framework surface (the module downloads once into the Go module cache)."""
    return _READ(version, _CACHE)


def without_signing(real: framework_surface.FrameworkSurface) -> framework_surface.FrameworkSurface:
    return dataclasses.replace(real, interfaces=tuple(i for i in real.interfaces if i != "SignPlugin"), also_implement={})


@pytest.mark.parametrize("version", ["v1.34.4", "v1.35.4", "v1.36.3", "v1.37.2"])
def test_render_follows_version(version):
    files, package = generate.render_files("AllPoints", generate.parse_points(ALL), "example.com/t/all", resolution(version), surface(version))
    plugin = files["pkg/allpoints/allpoints.go"]
    test = files["pkg/allpoints/allpoints_test.go"]
    minor = int(version.split(".")[1])
    assert package == "example.com/t/all/pkg/allpoints"
    assert f"k8s.io/kubernetes {version}" in files["go.mod"]
    assert "k8s.io/kube-scheduler => k8s.io/kube-scheduler v0." in files["go.mod"]
    if minor == 34:
        assert "h framework.Handle) (framework.Plugin, error)" in plugin
        assert "var _ framework.FilterPlugin = &AllPoints{}" in plugin
        assert "(*framework.PreFilterResult, *fwk.Status)" in plugin
    else:
        assert "h fwk.Handle) (fwk.Plugin, error)" in plugin
        assert '"k8s.io/kubernetes/pkg/scheduler/framework"\n' not in plugin  # only fwk in 1.35+
    assert ("(*fwk.PreBindPreFlightResult, *fwk.Status)" in plugin) == (minor >= 36)
    assert ("Less(a, b fwk.QueuedEntityInfo)" in plugin) == (minor >= 37)
    # SignPod only where the release has SignPlugin; MaxScore where it has it, MaxNodeScore before.
    assert ("func (pl *AllPoints) SignPod(" in plugin) == (minor >= 35)
    assert ("var _ fwk.SignPlugin = &AllPoints{}" in plugin) == (minor >= 35)
    assert ("func TestSignPod(t *testing.T)" in test) == (minor >= 35)
    assert ("fwk.MaxScore" in plugin) == (minor >= 36)
    assert "MaxNodeScore" not in plugin + test if minor >= 36 else "MaxNodeScore" in plugin
    assert "type AllPointsArgs struct" in files["pkg/allpoints/args.go"]
    for point in generate.points_of(surface(version)):
        assert f"_ {generate.framework_api(surface(version)).types[point.interface]} =" in plugin
    for fn in ("TestPreEnqueue", "TestLess", "TestPreFilter", "TestFilter", "TestPostFilter", "TestPreScore", "TestScore",
               "TestReserveUnreserve", "TestPermit", "TestPreBind", "TestBind", "TestPostBind", "TestEventsToRegister"):
        assert f"func {fn}(t *testing.T)" in test
    assert "app.WithPlugin(allpoints.Name, allpoints.New)" in files["cmd/scheduler/main.go"]


def test_render_only_chosen_points_and_imports():
    files, _ = generate.render_files("OnlySort", ("queuesort",), "example.com/q", resolution("v1.36.3"), surface("v1.36.3"))
    plugin = files["pkg/onlysort/onlysort.go"]
    assert "func (pl *OnlySort) Less(" in plugin and "Filter(" not in plugin
    assert "k8s.io/api/core/v1" not in plugin and '"fmt"' not in plugin  # unused imports do not compile
    assert "corev1helpers" in plugin


def test_sample_config_enables_each_point_in_its_own_profile():
    files, _ = generate.render_files("UnderlayIPLimit", ("prefilter", "filter", "score", "bind", "enqueueextensions"), "example.com/u", resolution("v1.36.3"), surface("v1.36.3"))
    config = yaml.safe_load(files["config/scheduler-config.yaml"])
    assert config["apiVersion"] == "kubescheduler.config.k8s.io/v1"
    (profile,) = config["profiles"]
    assert profile["schedulerName"] == "underlay-ip-limit-scheduler"
    assert profile["plugins"]["score"] == {"enabled": [{"name": "UnderlayIPLimit", "weight": 1}]}
    assert profile["plugins"]["bind"] == {"enabled": [{"name": "UnderlayIPLimit"}, {"name": "DefaultBinder"}], "disabled": [{"name": "*"}]}
    assert set(profile["plugins"]) == {"preFilter", "filter", "score", "bind"}
    assert profile["pluginConfig"] == [{"name": "UnderlayIPLimit", "args": {"limit": 10}}]


def test_rendering_is_deterministic():
    a = generate.render_files("X", generate.parse_points(ALL), "example.com/x", resolution("v1.37.2"), surface("v1.37.2"))
    b = generate.render_files("X", generate.parse_points(ALL), "example.com/x", resolution("v1.37.2"), surface("v1.37.2"))
    assert a == b


@pytest.mark.parametrize("points, signs", [
    ("score", True), ("prescore", True), ("prefilter,reserve", True),
    ("reserve,postbind", False), ("queuesort", False), ("bind,permit", False),
])
def test_sign_pod_only_with_a_point_batching_needs_signed(points, signs):
    files, _ = generate.render_files("Sig", generate.parse_points(points), "example.com/s", resolution("v1.37.2"),
                                     surface("v1.37.2"))
    plugin, test = files["pkg/sig/sig.go"], files["pkg/sig/sig_test.go"]
    assert ("SignPod(" in plugin) == signs
    assert ("func TestSignPod(" in test) == signs
    assert ('"encoding/json"' in test) == signs  # an unused import would not compile
    # Whatever the plugin reads of the pod is what it signs: the exempt label, read only where it signs.
    assert ("ExemptLabel" in plugin) == signs


def test_no_sign_pod_on_a_release_without_sign_plugin():
    files, _ = generate.render_files("Sig", generate.parse_points("prefilter,filter,prescore,score"), "example.com/s",
                                     resolution("v1.35.4"), without_signing(surface("v1.35.4")))
    assert "SignPod" not in files["pkg/sig/sig.go"] and "SignPod" not in files["pkg/sig/sig_test.go"]


_CONFIG_137 = ("preFilter", "filter", "score", "placementScore", "podGroupPostFilter")


def test_points_the_target_defines_beyond_the_templates():
    version = "v1.37.2"
    target = surface(version)
    files, _ = generate.render_files("Gang", ("filter", "placementscore", "podgrouppostfilter"), "example.com/g",
                                     resolution(version), target, _CONFIG_137)
    plugin = files["pkg/gang/gang.go"]
    assert "var _ fwk.PlacementScorePlugin = &Gang{}" in plugin and "var _ fwk.PodGroupPostFilterPlugin = &Gang{}" in plugin
    assert ("func (pl *Gang) ScorePlacement(ctx context.Context, state fwk.PlacementCycleState, podGroup fwk.PodGroupInfo, "
            "placement *fwk.PodGroupAssignments) (int64, *fwk.Status) {\n\treturn 0, nil\n}") in plugin
    assert "func (pl *Gang) PlacementScoreExtensions() fwk.PlacementScoreExtensions {\n\treturn pl\n}" in plugin
    assert "func (pl *Gang) NormalizePlacementScore(" in plugin
    assert "fwk.NewStatus(fwk.Unschedulable, Name+\": PodGroupPostFilter is a generated stub\")" in plugin
    profile = yaml.safe_load(files["config/scheduler-config.yaml"])["profiles"][0]["plugins"]
    assert profile["placementScore"] == {"enabled": [{"name": "Gang", "weight": 1}]}  # scoring: weighted
    assert profile["podGroupPostFilter"] == {"enabled": [{"name": "Gang"}]}


def test_unknown_points_are_judged_by_the_target(tmp_path, monkeypatch):
    version = "v1.37.2"
    target = surface(version)
    monkeypatch.setattr(versions, "resolve", lambda text, cache: resolution(version))
    monkeypatch.setattr(framework_surface, "framework_surface", lambda v, cache: target)
    monkeypatch.setattr(generate, "check_name_free", lambda *a, **k: None)
    monkeypatch.setattr(generate.vocabulary, "config_api", lambda v, cache: type("API", (), {"extension_points": _CONFIG_137}))
    request = dict(name="Good", module="example.com/x", k8s_version="1.37", out=tmp_path / "out", cache_dir=tmp_path,
                   tidy=False, dry_run=True)
    with pytest.raises(UserError, match="unknown extension point.*bogus") as raised:
        generate.scaffold(generate.ScaffoldRequest(points="filter,bogus", **request))
    assert "valid points of Kubernetes v1.37.2:" in raised.value.hint and "placementscore" in raised.value.hint
    assert generate.scaffold(generate.ScaffoldRequest(points="PlacementScore", **request)).plan is not None
    assert not (tmp_path / "out").exists()


def _body(source: str, signature: str) -> str:
    start = source.index(signature)
    return source[start:source.index("\n}\n", start)]


@pytest.mark.parametrize("points", ["prefilter,filter,prescore,score,reserve,postbind", "filter,score,reserve"])
def test_filter_and_score_start_fast(points):
    """Issue 39: the per-node path reads the cycle's state and the NodeInfo only (no lock, no map built);
    the lock is taken once per cycle, where the state is made; and the parallel benchmark comes with it."""
    files, _ = generate.render_files("Fast", generate.parse_points(points), "example.com/f", resolution("v1.36.3"),
                                     surface("v1.36.3"))
    plugin, test = files["pkg/fast/fast.go"], files["pkg/fast/fast_test.go"]
    for signature in ("func (pl *Fast) Filter(", "func (pl *Fast) Score(", "func (pl *Fast) podsOn("):
        body = _body(plugin, signature)
        assert "Lock()" not in body and "make(" not in body, body
    assert "pl.mu.Lock()" in _body(plugin, "func (pl *Fast) newCycleState(")
    assert "s := pl.cycle(state)" in _body(plugin, "func (pl *Fast) Filter(")
    if "prefilter" in points:
        assert "state.Write(stateKey, pl.newCycleState())" in _body(plugin, "func (pl *Fast) PreFilter(")
    assert "func BenchmarkFilterParallel(b *testing.B)" in test and "func BenchmarkScoreParallel(b *testing.B)" in test
    assert '\tgoruntime "runtime"' in test and '"sync/atomic"' in test


# A synthetic next minor: v1.37.2's real framework with signatures changed the way minors change them
# (a parameter added, a result added, an argument type replaced). The scaffold follows with no code change.
_CHANGES = {
    "Filter(ctx context.Context, state CycleState, pod *v1.Pod, nodeInfo NodeInfo) *Status":
        "Filter(ctx context.Context, logger klog.Logger, state CycleState, pod *v1.Pod, nodeInfo NodeInfo) *Status",
    "Permit(ctx context.Context, state CycleState, p *v1.Pod, nodeName string) (*Status, time.Duration)":
        "Permit(ctx context.Context, state CycleState, p *v1.Pod, nodeName string) (*Status, time.Duration, bool)",
    "PostBind(ctx context.Context, state CycleState, p *v1.Pod, nodeName string)":
        "PostBind(ctx context.Context, state CycleState, p *v1.Pod, placement PodGroupInfo)",
}


def test_the_scaffold_follows_a_signature_change_in_the_next_minor_with_no_code_change(tmp_path):
    real = surface("v1.37.2")
    changed = {interface: tuple(_CHANGES.get(sig, sig) for sig in sigs) for interface, sigs in real.signatures.items()}
    assert changed != real.signatures, "v1.37.2's framework no longer declares the signatures this test changes"
    synthetic = dataclasses.replace(real, version="v1.38.0", signatures=changed)
    points = generate.parse_points("filter,permit,postbind")
    before, _ = generate.render_files("Next", points, "example.com/n", resolution("v1.37.2"), real)
    after, _ = generate.render_files("Next", points, "example.com/n", resolution("v1.38.0"), synthetic)
    plugin = after["pkg/next/next.go"]
    filter = "func (pl *Next) Filter(_ context.Context, _ klog.Logger, state fwk.CycleState, pod *v1.Pod, nodeInfo fwk.NodeInfo) *fwk.Status {"
    assert filter in plugin and filter not in before["pkg/next/next.go"]
    assert "Permit(_ context.Context, _ fwk.CycleState, _ *v1.Pod, _ string) (*fwk.Status, time.Duration, bool) {\n\treturn nil, 0, false" in plugin
    assert "PostBind(_ context.Context, _ fwk.CycleState, pod *v1.Pod, _ fwk.PodGroupInfo) {" in plugin
    # Real gofmt parses what was rendered (a malformed declaration would not).
    (tmp_path / "next.go").write_text(plugin)
    parsed = subprocess.run(["gofmt", "-e", "-l", str(tmp_path / "next.go")], capture_output=True, text=True)
    assert parsed.returncode == 0, parsed.stderr
