"""config.validate and migrate-policy against the real kube-scheduler binary (shared built_scheduler).

The binary runs in its validation mode (--config F --write-config-to OUT) inside a container of
the builder image with no network, exactly as `inv config.validate` runs it.
"""

from __future__ import annotations

import platform
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from scheduler_build.config import legacy_policy as policy
from scheduler_build.config import render
from scheduler_build.config import schedulerconfig
from scheduler_build.config import validate as config_validate
from scheduler_build.resolve import intree
from scheduler_build import settings
from scheduler_build import spec as spec_mod
from scheduler_build.spec.fields import seconds


REPO = Path(__file__).resolve().parents[2]
DATA = Path(__file__).resolve().parents[1] / "data" / "config"
IN_TREE_SPECS = sorted((DATA / "specs").glob("*.yaml"))
POLICIES = ["full.json", "underlay-configmap.yaml", "priorities.yaml"]


@pytest.fixture(scope="module")
def runner_image(built_scheduler):
    """The builder image the shared build used (it exists once built_scheduler does)."""
    return built_scheduler.info.builder.image


@pytest.fixture(scope="module")
def version(built_scheduler):
    return built_scheduler.info.kubernetes.version


def test_in_tree_names_come_from_the_versions_source(version):
    names = intree.in_tree_plugins(version, settings.cache_dir())
    assert {"PrioritySort", "NodeResourcesFit", "DefaultBinder", "PodTopologySpread"} <= names
    assert "UnderlayIPLimit" not in names and "SelectorSpread" not in names  # removed in 1.27
    # and the cached answer is the same set
    assert intree.in_tree_plugins(version, settings.cache_dir()) == names


@pytest.mark.parametrize("spec_path", IN_TREE_SPECS, ids=[p.stem for p in IN_TREE_SPECS])
def test_binary_accepts_every_rendered_in_tree_example(built_scheduler, runner_image, version, spec_path):
    spec = spec_mod.load(spec_path)
    config_validate.check_fields(spec, version, settings.cache_dir())
    verdict = config_validate.validate_with_binary(built_scheduler.binary, render.config_text(spec), runner_image)
    assert verdict.ok, verdict.output
    written = yaml.safe_load(verdict.written)
    # the binary's defaulted view keeps our profiles and extenders
    assert [p["schedulerName"] for p in written["profiles"]] == [p["schedulerName"] for p in spec.profiles]
    assert len(written.get("extenders") or []) == len(schedulerconfig.extenders(spec))
    assert written["leaderElection"]["resourceName"] == spec.leader_election["resourceName"]


@pytest.mark.parametrize("name", POLICIES)
def test_binary_accepts_every_migrated_policy(built_scheduler, runner_image, name):
    raw, _ = policy.load(DATA / "policies" / name)
    migration = policy.migrate(raw)
    verdict = config_validate.validate_with_binary(built_scheduler.binary, migration.text(), runner_image)
    assert verdict.ok, verdict.output
    written = yaml.safe_load(verdict.written)
    ours = migration.config["profiles"][0].get("plugins", {})
    theirs = written["profiles"][0]["plugins"]
    for point, plugin_set in ours.items():
        # the binary kept every enabled plugin and weight we wrote (it adds weight 0 where unset)
        got = {e["name"]: e.get("weight", 0) for e in theirs[point].get("enabled") or []}
        assert got == {e["name"]: e.get("weight", 0) for e in plugin_set.get("enabled", [])}
    for ours_ext, their_ext in zip(migration.config.get("extenders", []), written.get("extenders") or []):
        assert their_ext["urlPrefix"] == ours_ext["urlPrefix"]
        # the binary writes Go's canonical form (1500ms -> 1.5s): compare the durations
        assert seconds(their_ext["httpTimeout"]) == seconds(ours_ext.get("httpTimeout", "5s"))
        assert their_ext.get("enableHTTPS", False) == ours_ext.get("enableHTTPS", False)


def test_binary_refusal_shows_its_own_error(built_scheduler, runner_image):
    config = yaml.safe_dump({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                             "leaderElection": {"leaderElect": False},
                             "profiles": [{"schedulerName": "x", "plugins": {"score": {"enabled": [{"name": "Nope"}]}}}]})
    verdict = config_validate.validate_with_binary(built_scheduler.binary, config, runner_image)
    assert not verdict.ok
    assert 'ScorePlugin "Nope" does not exist' in config_validate.refusal_reason(verdict.output)


def test_cli_validate_passes_and_reports_the_binarys_refusal(built_scheduler, tmp_path):
    ok = subprocess.run([sys.executable, "-m", "invoke", "config.validate", "--spec", str(DATA / "specs" / "intree-full.yaml"),
                         "--binary", str(built_scheduler.binary), "--k8s-version", built_scheduler.info.kubernetes.version],
                        cwd=REPO, capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.startswith("ok:")
    # A field the spec schema passes through (plugin args) but the binary decodes strictly.
    bad = yaml.safe_load((DATA / "specs" / "minimal.yaml").read_text())
    bad["profiles"] = [{"schedulerName": "second-scheduler", "pluginConfig": [
        {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "Bogus"}}}]}]
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(bad))
    refused = subprocess.run([sys.executable, "-m", "invoke", "config.validate", "--spec", str(path),
                              "--binary", str(built_scheduler.binary)], cwd=REPO, capture_output=True, text=True)
    assert refused.returncode != 0
    assert "refused the configuration" in refused.stderr and "Bogus" in refused.stderr
    assert "Traceback" not in refused.stderr


def _example_plugin_binary() -> Path | None:
    """A kube-scheduler built from the example spec by `inv build --spec` (the plugin issue), if present."""
    spec = spec_mod.load(REPO / "examples/underlay/scheduler.yaml", check_files=False)
    arch = {"x86_64": "amd64", "aarch64": "arm64"}.get(platform.machine(), platform.machine())
    found = sorted((REPO / "dist" / spec.name).glob(f"*/linux-{arch}/kube-scheduler"))
    return found[-1] if found else None


def test_binary_with_the_example_plugin_accepts_the_example(request, runner_image):
    """The example spec's configuration (UnderlayIPLimit enabled) against a binary that has the plugin.

    Uses a session fixture `built_example_scheduler` (a BuildResult of `inv build --spec
    examples/underlay/scheduler.yaml`) when the plugin issue provides one, else a binary
    already built into dist/, else skips: this test never compiles on its own.
    """
    try:
        binary = request.getfixturevalue("built_example_scheduler").binary
    except pytest.FixtureLookupError:
        binary = _example_plugin_binary()
    if binary is None:
        pytest.skip("no kube-scheduler built from examples/underlay/scheduler.yaml yet (run `inv build --spec ...`)")
    spec = spec_mod.load(REPO / "examples/underlay/scheduler.yaml", check_files=False)
    verdict = config_validate.validate_with_binary(binary, render.config_text(spec), runner_image)
    assert verdict.ok, verdict.output
    written = yaml.safe_load(verdict.written)
    assert "UnderlayIPLimit" in [e["name"] for e in written["profiles"][0]["plugins"]["multiPoint"]["enabled"]]


def test_plain_binary_refuses_the_example_plugin(built_scheduler, runner_image):
    """Without the plugin compiled in, the same configuration fails in the binary, naming the plugin."""
    spec = spec_mod.load(REPO / "examples/underlay/scheduler.yaml", check_files=False)
    verdict = config_validate.validate_with_binary(built_scheduler.binary, render.config_text(spec), runner_image)
    assert not verdict.ok
    assert "UnderlayIPLimit" in config_validate.refusal_reason(verdict.output)
