"""Every served Kubernetes minor in CI (issue 23, part 4): the scaffold of each minor the resolve stage
serves compiles and vets against that minor, in the builder, the way the build stage compiles.

Where it compiles: nowhere here. The session's `served_scaffolds` (tests/conftest.py, testkit/minors.py
compile_served) builds, vets and tests every served minor's all-points scaffold, the planted fault and the
example plugin in ONE builder container, shared with tests/integration/test_plugin_build.py. Cold cost: the
Kubernetes packages a scaffold imports, compiled once per served minor into the builds' Go build cache
volume: the plugin's (the framework and its test's) for every minor, cmd/kube-scheduler/app's for the newest
and the default minor only, which the suite's builds share; then each minor's test binary. Module downloads
are the host's module cache; the vendored trees are cached per go.mod + go.sum. Measured before the tests
joined the run (build and vet only; 2 cores shared by four helpers, load 10-15, whole modules in a fresh
volume): 9.5 min for 1.34, 10 min for 1.35, 14 min for 1.36.
"""

from __future__ import annotations

import json

import pytest

from testkit import minors


@pytest.fixture(scope="module")
def served() -> dict[str, str]:
    got = minors.served()
    assert len(got) >= 3, got  # the newest three or four minors
    return got


def test_the_scaffold_of_every_served_minor_compiles_and_vets(served, served_scaffolds):
    """The whole module (`./...`, cmd/scheduler included) for the newest minor and the suite's default one,
    whose kube-scheduler packages the suite compiles anyway (the example spec's newest build, the default
    build). For the other minors, to stay in CI's budget, the plugin package and its test (`./pkg/...`: every
    signature that differs between minors), plus an assertion that New is that minor's PluginFactory, the
    one thing main.go checks: cmd/kube-scheduler/app would make it 1413 packages per minor instead of 869.
    (Their tests' results: test_plugin_build.py; the example plugin's too.)"""
    newest = list(served)[-1]
    planted = served_scaffolds.planted
    assert planted == f"{newest} with Score(..., nodeName string)"
    results = {label: got for label, got in served_scaffolds.results.items() if label != minors.EXAMPLE}
    failed = minors.report(results)
    # Negative control: the planted fault is reported, naming the minor; every served minor passes.
    assert [line for line in failed if not line.startswith(planted + ":")] == [], "\n".join(failed)
    assert len(failed) == 1 and failed[0].startswith(f"{newest} with Score"), "\n".join(failed) or "nothing failed"
    assert results[planted].failed_step == "build", results[planted].lines[-20:]
    assert any("allpoints.go" in line for line in results[planted].errors()), results[planted].lines[-20:]
    assert all(served_scaffolds.of(minor).ok for minor in served)


def test_the_example_spec_builds_and_its_config_validates_against_its_oldest_and_newest_minors(
        served, built_example_scheduler, tmp_path):
    """The example spec (UnderlayIPLimit + the example patch) against every served minor from the one its
    plugin's go.mod was written for: built for real, and its rendered configuration accepted by that
    build's own kube-scheduler (config.validate without --fields-only runs the binary).

    CI budget: a cold build of one minor is ~6 min here (2 cores). The spec's own minor is the suite's
    shared `built_example_scheduler`; this test adds one cold build, the newest minor's. Full builds are
    made for the oldest and the newest supported minors only; a minor in between (none while the plugin
    supports two) is checked field by field (tests/unit/resolve/test_vocabulary.py), not built.
    """
    import yaml

    from scheduler_build.build import k8s_agreement
    from scheduler_build.resolve import gomod

    spec = minors.REPO / "examples" / "underlay" / "scheduler.yaml"
    plugin_mod = gomod.parse((spec.parent / "plugin" / "go.mod").read_text())
    written_for = k8s_agreement.as_kubernetes("k8s.io/kubernetes", plugin_mod.requires["k8s.io/kubernetes"])[0]
    supported = [minor for minor in served if int(minor.split(".")[1]) >= written_for]
    assert supported, served
    spec_minor = ".".join(str(yaml.safe_load(spec.read_text())["kubernetes"]["version"]).lstrip("v").split(".")[:2])
    for minor in dict.fromkeys([supported[0], supported[-1]]):
        if minor == spec_minor:
            binary = built_example_scheduler.binary  # the suite's one build of the spec's own minor
        else:
            built = minors.inv("build", "--spec", str(spec), "--k8s-version", served[minor], "--dist",
                               str(tmp_path / minor), "--no-pull", "--json")
            assert built.returncode == 0, f"{minor}: {built.stderr[-4000:]}"
            binary = json.loads(built.stdout)["binary"]["path"]
        got = minors.inv("config.validate", "--spec", str(spec), "--binary", str(binary), "--k8s-version", served[minor])
        assert got.returncode == 0, f"{minor}: {got.stderr[-3000:]}"
        assert f"plugins of Kubernetes {served[minor]}, accepted by {binary}" in got.stdout, got.stdout
