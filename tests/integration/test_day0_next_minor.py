"""Day-0 (issue 27): the next Kubernetes minor, needing a Go newer than the host's, works with no code change.

A synthetic next minor (testkit/synthetic_minor.py: the newest served release and its staging
modules renumbered, e.g. v1.37.2 -> v1.38.0, their go.mod requiring the Go one minor above the host's)
is served from a local file-based Go module proxy, with Go's own toolchain module of that minor beside
it. Through the real CLI and the real `go`:
- it resolves, and the served-minor list grows by itself (newest first, the oldest drops out);
- the builder for it is bootstrapped from the toolchain the proxy serves (fetched into the test's own
  module cache), and with no proxy and nothing cached the error is one line naming the Go and the fixes;
- it scaffolds (`go mod tidy` by that toolchain) and the spec validates field by field against the
  vocabulary and in-tree plugins derived from it (a misspelt plugin is refused: the negative control);
- `plugin.retarget`'s rewrite of go.mod to it changes only the numbers: no note, the same replaced modules.

Issue 41: the next minor carries the REAL next framework (k8s.io/kube-scheduler v0.38.0-beta.0's
plugin-API changes, testkit/next_framework.py), a removed feature gate and a new `Deprecated:` symbol:
- its framework, read as the toolkit reads any release's, declares what v0.38.0-beta.0 declares
  (Handle's method set, PlacementFeasiblePlugin, the cycle states, the preemption interfaces);
- the scaffold for it (no code change) writes a Handle fake with the new methods;
- retarget's API diff names each change, the logger argument of NominatedPodsForNode among them;
- `config.validate` refuses the removed gate in one line naming it and the minor (the same spec on the
  source minor is accepted: the negative control);
- with SB_DAY0_COMPILE=1: that scaffold vets and tests clean (`go vet`, `go test` by the newer Go), and
  a 1.37 plugin calling `NominatedPodsForNode(name)` is ported by `plugin.retarget --fix` and compiles.

Not in `.ci/run`: the compile against it (a cold kube-scheduler-sized compile with the newer Go).
`SB_DAY0_COMPILE=1` runs `inv plugin.retarget` to it for real (its compile and vet in the
bootstrapped builder); `inv build --go` covers the compile path with the newer Go in CI's stead.

Cost (2 cores shared, load about 40; bench/results/day0-i27.json): 56 s with this key's proxy and module
cache to make, 42 s once they are kept (<cache>/test-day0/<key>); a machine without the newer Go's
bootstrapped builder image adds its bootstrap (45 to 90 s here). With SB_DAY0_COMPILE=1 the two compile tests
took 776 s and 775 s, the file 1832 s (2026-11-28, load about 10; docs/development.md, opt-in tests).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from scheduler_build import settings
from scheduler_build.golang import toolchain
from scheduler_build.resolve import gomod, versions
from scheduler_build.retarget import gomod_edit
from scheduler_build.retarget import run as retarget_run
from scheduler_build.resolve import framework_surface
from scheduler_build.retarget import surface_diff
from testkit import minors, next_framework, synthetic_minor

pytestmark = pytest.mark.integration  # also given by the directory
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def day0():
    served = minors.served()
    # The synthetic proxy lists the pinned served releases and the next one: no live listing.
    synthetic = synthetic_minor.build(settings.cache_dir(), list(served.values())[-1], list(served.values()))
    if synthetic is None:
        pytest.skip("the Go module proxy serves no Go release one minor newer than the host's")
    return synthetic, served


def inv(synthetic, *args: str, **extra: str) -> subprocess.CompletedProcess:
    env = {**os.environ, **synthetic.env, **extra}
    return subprocess.run([sys.executable, "-m", "invoke", *args], cwd=REPO, env=env, capture_output=True, text=True)


def test_the_next_minor_resolves_and_its_builder_is_bootstrapped_from_the_proxy(day0, tmp_path):
    synthetic, served = day0
    listed = inv(synthetic, "k8s.versions", "--json")
    assert listed.returncode == 0, listed.stderr[-3000:]
    table = json.loads(listed.stdout)
    assert table[synthetic.minor] == synthetic.version
    newest_first = list(reversed(served))
    assert list(table) == [synthetic.minor, *newest_first[:-1]]  # grew by itself, the oldest dropped out
    resolved = json.loads(inv(synthetic, "k8s.resolve", synthetic.minor, "--json").stdout)
    assert resolved["version"] == synthetic.version and resolved["go_version"] == synthetic.go
    shown = inv(synthetic, "builder.show", "--k8s-version", synthetic.minor, "--no-pull")
    assert shown.returncode == 0, shown.stderr[-3000:]
    image, go, source = shown.stdout.split()
    assert (image, go) == (f"scheduler-build/golang:{synthetic.toolchain}", f"go{synthetic.toolchain}")
    assert source in ("bootstrapped", "bootstrap-cached")
    # Fetched through the test's GOPROXY into the test's own module cache, not found on the host.
    fetched = Path(synthetic.env["GOMODCACHE"]) / f"golang.org/toolchain@{toolchain.module_version(synthetic.toolchain)}"
    assert (fetched / "bin" / "go").is_file()
    # No proxy and nothing cached: one line naming the Go and the two fixes, no traceback.
    offline = inv(synthetic, "builder.show", "--k8s-version", synthetic.version, "--no-pull",
                  GOPROXY="off", GOMODCACHE=str(tmp_path / "empty-modcache"))
    assert offline.returncode != 0
    [line] = [entry for entry in offline.stderr.splitlines() if entry.startswith("error:")]
    assert f"go {synthetic.go}" in line and "GOPROXY=off" in line and "install Go" in line, line
    assert "Traceback" not in offline.stderr


def test_the_next_minor_scaffolds_and_validates_field_by_field(day0, tmp_path):
    synthetic, _ = day0
    made = inv(synthetic, "scaffold.plugin", "--name", "DayZero", "--points", "filter,score",
               "--module", "example.com/dayzero", "--k8s-version", synthetic.minor, "--out", str(tmp_path / "plugin"), "--json")
    assert made.returncode == 0, made.stderr[-3000:]
    result = json.loads(made.stdout)
    assert result["k8s_version"] == synthetic.version
    written = gomod.parse((tmp_path / "plugin" / "go.mod").read_text())
    assert written.go == synthetic.go and written.requires["k8s.io/kubernetes"] == synthetic.version
    assert (tmp_path / "plugin" / "go.sum").is_file()  # tidied, by the toolchain the go line needs
    fake = (tmp_path / "plugin" / "pkg" / "dayzero" / "handle_fake_test.go").read_text()
    for method in ("func (fakeHandle) SharedPodGroupHierarchyTracker() fwk.PodGroupHierarchyTracker {",
                   "func (fakeHandle) PreemptionManager() fwk.PreemptionManager {",
                   "func (fakeHandle) NominatedPodsForNode(klog.Logger, string) []fwk.PodInfo {"):
        assert method in fake, fake  # from the next minor's Handle, with no code change
    spec = {"name": "dayzero-scheduler", "version": "0.1.0", "kubernetes": {"version": synthetic.minor},
            "plugins": [{"path": "./plugin", "package": result["package"], "names": ["DayZero"]}],
            "profiles": [{"schedulerName": "dayzero-scheduler",
                          "plugins": {"filter": {"enabled": [{"name": "DayZero"}]},
                                      "score": {"enabled": [{"name": "DayZero", "weight": 2}, {"name": "PodTopologySpread"}]}},
                          "pluginConfig": [{"name": "DayZero", "args": {"limit": 3}}]}]}
    path = tmp_path / "scheduler.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    ok = inv(synthetic, "config.validate", "--spec", str(path), "--fields-only", "--json")
    assert ok.returncode == 0, ok.stderr[-3000:]
    assert json.loads(ok.stdout)["kubernetes_version"] == synthetic.version
    spec["profiles"][0]["plugins"]["score"]["enabled"][1]["name"] = "PodTopologySpreed"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    refused = inv(synthetic, "config.validate", "--spec", str(path), "--fields-only", "--json")
    assert refused.returncode != 0
    errors = json.loads(refused.stdout)["errors"]
    assert any("PodTopologySpreed" in e["message"] and "score" in e["path"] for e in errors), errors


def test_retarget_to_the_next_minor_changes_only_the_numbers(day0, tmp_path, monkeypatch):
    synthetic, served = day0
    made = inv(synthetic, "scaffold.plugin", "--name", "DayZero", "--points", "filter,score", "--module",
               "example.com/dayzero", "--k8s-version", served[list(served)[-1]], "--out", str(tmp_path / "plugin"), "--no-tidy")
    assert made.returncode == 0, made.stderr[-3000:]
    for name, value in synthetic.env.items():
        monkeypatch.setenv(name, value)
    cache = Path(synthetic.env["SCHEDULER_BUILD_PATHS_CACHE_DIR"])
    text = (tmp_path / "plugin" / "go.mod").read_text()
    mod = gomod.parse(text)
    target = versions.resolve(synthetic.minor, cache)
    old = retarget_run.old_resolution(gomod_edit.kubernetes_version_of(mod), cache)
    rewrite = gomod_edit.plan(mod, tmp_path / "plugin", target, set(old.replaces))
    new = gomod.parse(retarget_run.edited(text, rewrite.flags))
    assert rewrite.notes == []
    assert new.go == synthetic.go
    renumber = {synthetic.source: synthetic.version,
                synthetic_minor.staging_version(synthetic.source): synthetic_minor.staging_version(synthetic.version)}
    assert new.requires == {m: renumber.get(v, v) for m, v in mod.requires.items()}
    assert new.replaces == {m: (p, renumber.get(v, v)) for m, (p, v) in mod.replaces.items()}


def surfaces(synthetic, served, monkeypatch):
    """The source minor's framework and the next minor's, as the toolkit reads any release's."""
    for name, value in synthetic.env.items():
        monkeypatch.setenv(name, value)
    cache = Path(synthetic.env["SCHEDULER_BUILD_PATHS_CACHE_DIR"])
    source = served[list(served)[-1]]
    return framework_surface.framework_surface(source, cache), framework_surface.framework_surface(synthetic.version, cache)


def test_the_next_minor_carries_the_real_next_framework(day0, monkeypatch):
    synthetic, served = day0
    _, new = surfaces(synthetic, served, monkeypatch)
    real = framework_surface.parse_go(framework_surface._package_text(next_framework.real_framework_dir() / "framework"))
    for interface in ("Handle", "PlacementFeasiblePlugin", "CycleState", "PlacementCycleState", "PodGroupCycleState",
                      "PreemptionManager", "PreemptionExecutor", "PreemptionVictim", "PreemptionCandidate",
                      "ReprieveFilter", "PodGroupHierarchyTracker"):
        assert new.method_set(interface) == real.method_set(interface), interface
    assert "PlacementProgress" in new.homes
    assert next_framework.DEPRECATED in new.deprecated and next_framework.DEPRECATED not in real.deprecated


def test_retarget_names_each_change_of_the_next_framework(day0, monkeypatch):
    synthetic, served = day0
    old, new = surfaces(synthetic, served, monkeypatch)
    lines = [change.line() for change in surface_diff.diff(old, new)]
    wanted = ["PodNominator.NominatedPodsForNode: NominatedPodsForNode(nodeName string) []PodInfo -> "
              "NominatedPodsForNode(logger klog.Logger, nodeName string) []PodInfo",
              "Handle.SharedPodGroupHierarchyTracker: added", "Handle.PreemptionManager: added",
              "PlacementFeasiblePlugin: new interface (a new extension point)", "PreemptionManager: new interface",
              "PreemptionExecutor: new interface", "PreemptionVictim: new interface",
              "PreemptionCandidate: new interface", "ReprieveFilter: new interface",
              "CycleState.GetPodGroupSchedulingCycle: renamed GetPodGroupCycleState",
              "PodGroupCycleState.PlacementState: added"]
    for want in wanted:
        assert any(line.startswith(want) for line in lines), (want, lines)


def test_validate_refuses_the_gate_the_next_minor_removed(day0, tmp_path):
    synthetic, served = day0
    gate = next_framework.REMOVED_GATE
    spec = {"name": "gates", "version": "0.1.0", "kubernetes": {"version": synthetic.minor}, "featureGates": {gate: True},
            "profiles": [{"schedulerName": "gates"}]}
    path = tmp_path / "scheduler.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    refused = inv(synthetic, "config.validate", "--spec", str(path), "--fields-only")
    assert refused.returncode != 0
    [line] = [entry for entry in refused.stderr.splitlines() if entry.startswith("error:")]
    assert f"featureGates.{gate}" in line and synthetic.minor in line and "no feature gate" in line, line
    assert "Traceback" not in refused.stderr
    spec["kubernetes"]["version"] = list(served)[-1]  # the source minor still knows it (GA): accepted
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    accepted = inv(synthetic, "config.validate", "--spec", str(path), "--fields-only")
    assert accepted.returncode == 0, accepted.stderr[-3000:]


NOMINATED = """package dayzero

import (
	"context"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
)

// nominatedElsewhere counts the pods nominated to the node, a 1.37 plugin's call.
func (pl *DayZero) nominatedElsewhere(ctx context.Context, pod *v1.Pod, nodeName string) int {
	if pl.handle == nil || pod == nil {
		return 0
	}
	return len(pl.handle.NominatedPodsForNode(nodeName)) + int(fwk.MaxTotalScore*0)
}
"""


@pytest.mark.skipif(os.environ.get("SB_DAY0_COMPILE") != "1", reason="the compile against the next minor: SB_DAY0_COMPILE=1")
def test_the_next_minor_scaffold_vets_and_tests_clean(day0, tmp_path):
    synthetic, _ = day0
    made = inv(synthetic, "scaffold.plugin", "--name", "DayZero", "--points", "prefilter,filter,score,reserve,permit",
               "--module", "example.com/dayzero", "--k8s-version", synthetic.minor, "--out", str(tmp_path / "plugin"))
    assert made.returncode == 0, made.stderr[-3000:]
    env = {**os.environ, **synthetic.env, "GOTOOLCHAIN": f"go{synthetic.toolchain}", "GOFLAGS": "-mod=mod"}
    for argv in (["go", "vet", "./pkg/..."], ["go", "test", "-count=1", "./pkg/..."]):
        done = subprocess.run(argv, cwd=tmp_path / "plugin", env=env, capture_output=True, text=True)
        assert done.returncode == 0, (argv, done.stdout[-3000:], done.stderr[-3000:])


@pytest.mark.skipif(os.environ.get("SB_DAY0_COMPILE") != "1", reason="the compile against the next minor: SB_DAY0_COMPILE=1")
def test_retarget_fix_ports_a_1_37_plugin_to_the_next_minor(day0, tmp_path):
    synthetic, served = day0
    source = served[list(served)[-1]]
    made = inv(synthetic, "scaffold.plugin", "--name", "DayZero", "--points", "filter,score", "--module",
               "example.com/dayzero", "--k8s-version", source, "--out", str(tmp_path / "plugin"), "--no-tidy")
    assert made.returncode == 0, made.stderr[-3000:]
    calling = tmp_path / "plugin" / "pkg" / "dayzero" / "nominated.go"
    calling.write_text(NOMINATED)
    got = inv(synthetic, "plugin.retarget", "--path", str(tmp_path / "plugin"), "--k8s-version", synthetic.minor,
              "--fix", "--allow-dirty", "--json")
    assert got.returncode == 0, got.stderr[-5000:]
    result = json.loads(got.stdout)
    assert result["compiles"] is True and (result["from"], result["to"]) == (source, synthetic.version)
    assert "pl.handle.NominatedPodsForNode(klog.FromContext(ctx), nodeName)" in calling.read_text(), calling.read_text()
    fake = (tmp_path / "plugin" / "pkg" / "dayzero" / "handle_fake_test.go").read_text()
    assert "PreemptionManager() fwk.PreemptionManager" in fake  # the generated fake, regenerated for the target
    said = json.dumps(result)
    assert "NominatedPodsForNode" in said and next_framework.DEPRECATED in said, said[:3000]
