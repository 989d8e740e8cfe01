"""Scaffolds compiled, vetted and tested in the builder for every served minor the suite pins, and ONE real
plugin + patch build (the example spec) in the builder container, validated by the binary itself.

Cost (cold): nothing is compiled on the host here. The scaffolds and the example plugin are built, vetted
and tested (`go test -count=1 -v ./pkg/...`) in the session's one builder container (`served_scaffolds`,
tests/conftest.py; testkit/minors.py compile_served), with the build's flags and its Go build cache volume,
shared with tests/integration/test_served_minors.py; one kube-scheduler compile whose patched
k8s.io/kubernetes packages miss the Go build cache; everything else comes from the shared caches.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import REPO, VERSIONS, build_request


SPEC = REPO / "examples/underlay/scheduler.yaml"
EXAMPLE_PLUGIN = REPO / "examples/underlay/plugin"


def inv(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "invoke", *args], cwd=cwd, capture_output=True, text=True)


@pytest.mark.parametrize("minor", list(VERSIONS.served))  # every served minor the suite pins (tests/versions.yaml)
def test_scaffold_compiles_vets_and_passes_its_tests(served_scaffolds, minor):
    scaffolded = served_scaffolds.scaffolds[minor]
    assert scaffolded.made.returncode == 0, scaffolded.made.stderr[-3000:]
    result, out = scaffolded.result, scaffolded.path
    assert result["k8s_version"] == VERSIONS.served[minor]  # the minor resolved to the pinned patch, in a fresh `inv`
    assert {"go.mod", "go.sum", "cmd/scheduler/main.go", "config/scheduler-config.yaml", "README.md",
            "pkg/allpoints/allpoints.go", "pkg/allpoints/args.go", "pkg/allpoints/allpoints_test.go"} <= set(result["files"])
    unformatted = subprocess.run(["gofmt", "-l", "."], cwd=out, capture_output=True, text=True)
    assert unformatted.returncode == 0 and unformatted.stdout == "", unformatted.stdout + unformatted.stderr
    # Built, vetted and tested in the session's builder container; its lines are this module's only (from
    # its header to its exit mark), so no other minor's PASS line counts here.
    compiled = served_scaffolds.of(minor)
    assert compiled.ok and compiled.passed == ["build", "vet", "test"], compiled.text()[-4000:]
    assert compiled.lines[0].startswith(f"== {minor}: "), compiled.lines[:3]
    test = compiled.text()
    assert "ok  \texample.com/minors/allpoints/pkg/allpoints\t" in test, test[-3000:]
    # Every chosen point's test ran and passed (no silent skips).
    for name in ("TestArgs", "TestPreEnqueue", "TestLess", "TestPreFilter", "TestFilter", "TestPostFilter", "TestPreScore",
                 "TestScore", "TestReserveUnreserve", "TestPermit", "TestPreBind", "TestBind", "TestPostBind", "TestEventsToRegister"):
        assert f"--- PASS: {name} " in test, name
    # Batching (issue 31): from 1.35 on the framework has SignPlugin, and a scaffold with prefilter, filter,
    # prescore and score signs pods, its generated test proving both directions; before 1.35 nothing is emitted.
    source = (out / "pkg/allpoints/allpoints.go").read_text()
    signs = tuple(int(x) for x in minor.split(".")) >= (1, 35)
    assert ("SignPod(" in source) == signs, f"{minor}: SignPod emitted={'SignPod(' in source}, expected {signs}"
    assert ("--- PASS: TestSignPod " in test) == signs, test[-3000:]
    config = yaml.safe_load((out / "config/scheduler-config.yaml").read_text())
    assert config["profiles"][0]["plugins"]["filter"]["enabled"] == [{"name": "AllPoints"}]


def test_scaffold_refuses_a_non_empty_directory_and_writes_nothing(tmp_path):
    out = tmp_path / "busy"
    out.mkdir()
    (out / "keep.go").write_text("package keep\n")
    refused = inv("scaffold.plugin", "--name", "Busy", "--points", "filter", "--module", "example.com/b", "--out", str(out))
    assert refused.returncode != 0 and "is not empty" in refused.stderr and "--force" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert [p.name for p in out.iterdir()] == ["keep.go"]
    bad = inv("scaffold.plugin", "--name", "Busy", "--points", "filter,predicates", "--module", "example.com/b", "--out", str(tmp_path / "new"))
    assert bad.returncode != 0 and "unknown extension point(s) in --points: predicates" in bad.stderr and "prefilter" in bad.stderr
    assert not (tmp_path / "new").exists()


def test_example_plugin_vets_and_passes_its_tests(served_scaffolds):
    from testkit import minors

    compiled = served_scaffolds.of(minors.EXAMPLE)  # built, vetted and tested in the session's builder container
    assert compiled.ok and compiled.passed == ["build", "vet", "test"], compiled.text()[-4000:]
    assert "ok  \texample.com/acme/underlay/pkg/underlayiplimit\t" in compiled.text(), compiled.text()[-3000:]


def test_check_patches_real_conflict_against_another_release():
    ok = inv("build.check-patches", "--spec", str(SPEC), "--json")
    assert ok.returncode == 0, ok.stderr
    report = json.loads(ok.stdout)
    assert report["kubernetes"].startswith("v1.36.") and report["patches"][0]["hunks"] == 3
    # 1.35's in-tree registry ends with another plugin: the example patch does not apply there.
    conflict = inv("build.check-patches", "--spec", str(SPEC), "--k8s-version", "1.35")
    assert conflict.returncode == 1, conflict.stderr
    line = conflict.stderr.strip().splitlines()[-1]
    assert "0001-scheduler-add-AcmeSchedulable-in-tree-plugin.patch" in line
    assert "pkg/scheduler/framework/plugins/registry.go of k8s.io/kubernetes v1.35." in line
    assert "hunk #2 `@@ -75,5 +76,8 @@" in line
    assert "Traceback" not in conflict.stderr


def test_conflicting_patch_stops_the_build_before_compiling(tmp_path):
    from scheduler_build.build import pipeline as build
    from scheduler_build import settings
    from scheduler_build.build.patches import PatchConflict

    bad = tmp_path / "0001-stale.patch"
    text = (REPO / "examples/patches/0001-scheduler-add-AcmeSchedulable-in-tree-plugin.patch").read_text()
    bad.write_text(text.replace(" \t\tpodgrouppodscount.Name:", " \t\tgangscheduling.Name:"))
    patched_root = settings.cache_dir() / "patched"
    before = sorted(p.name for p in patched_root.iterdir()) if patched_root.is_dir() else []
    dist = tmp_path / "dist"
    with pytest.raises(PatchConflict, match="patch 0001-stale.patch: hunk #2 .* rejected in pkg/scheduler/framework/plugins/registry.go"):
        build.run(build_request(dist, patches=(bad,)))
    assert not dist.exists()
    after = sorted(p.name for p in patched_root.iterdir()) if patched_root.is_dir() else []
    assert after == before  # no half-patched workspace left behind


@pytest.fixture(scope="module")
def example_build(built_example_scheduler):
    """build-info of `inv build --spec examples/underlay/scheduler.yaml` (conftest: one shared build)."""
    return built_example_scheduler.info.to_dict()


def run_validation(binary: Path, config: dict, tmp_path: Path) -> subprocess.CompletedProcess:
    """kube-scheduler's own validation run: decode strictly, build the profiles, write the config, exit."""
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    out = tmp_path / "written.yaml"
    if out.exists():
        out.unlink()
    return subprocess.run(
        [str(binary), f"--config={path}", f"--write-config-to={out}", "--master=https://127.0.0.1:1",
         "--authentication-skip-lookup=true", "--v=0"],
        capture_output=True, text=True, timeout=120,
    )


def config_enabling(*names: str) -> dict:
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "leaderElection": {"leaderElect": False},
        "profiles": [{
            "schedulerName": "acme",
            "plugins": {"multiPoint": {"enabled": [{"name": n} for n in names]}},
            "pluginConfig": [{"name": "UnderlayIPLimit", "args": {"defaultCapacity": 4}}] if "UnderlayIPLimit" in names else [],
        }],
    }


def test_example_build_records_plugin_patch_and_suffix(example_build):
    info = example_build
    assert info["name"] == "underlay-scheduler"
    assert info["kubernetes"]["stamped_version"] == info["kubernetes"]["version"] + "-acme.1"
    assert info["binary"]["static"] is True
    patch = REPO / "examples/patches/0001-scheduler-add-AcmeSchedulable-in-tree-plugin.patch"
    import hashlib

    assert [(p["file"], p["sha256"]) for p in info["patches"]] == [(patch.name, hashlib.sha256(patch.read_bytes()).hexdigest())]
    (plugin,) = info["plugins"]
    assert plugin["package"] == "example.com/acme/underlay/pkg/underlayiplimit" and plugin["source"] == "path"
    assert len(plugin["sha256"]) == 64
    assert Path(info["binary"]["path"]).name == "kube-scheduler"


def test_patched_binary_accepts_in_tree_and_out_of_tree_plugins_unpatched_rejects(example_build, built_scheduler, tmp_path):
    patched = Path(example_build["binary"]["path"])
    version = subprocess.run([str(patched), "--version"], capture_output=True, text=True)
    assert version.stdout.strip().endswith("-acme.1"), version.stdout
    accepted = run_validation(patched, config_enabling("UnderlayIPLimit", "AcmeSchedulable"), tmp_path)
    assert accepted.returncode == 0, accepted.stderr[-3000:]
    written = yaml.safe_load((tmp_path / "written.yaml").read_text())
    enabled = {p["name"] for p in written["profiles"][0]["plugins"]["multiPoint"]["enabled"]}
    assert {"UnderlayIPLimit", "AcmeSchedulable"} <= enabled
    args = {c["name"]: c["args"] for c in written["profiles"][0]["pluginConfig"]}
    assert args["UnderlayIPLimit"]["defaultCapacity"] == 4
    # The plugin's own validation runs in the binary: bad args are refused.
    bad = config_enabling("UnderlayIPLimit")
    bad["profiles"][0]["pluginConfig"][0]["args"] = {"defaultCapacity": -1}
    refused_args = run_validation(patched, bad, tmp_path)
    assert refused_args.returncode != 0 and "defaultCapacity must not be negative" in refused_args.stderr
    # The example plugin's own sample configuration is accepted too.
    sample = yaml.safe_load((EXAMPLE_PLUGIN / "config/scheduler-config.yaml").read_text())
    own = run_validation(patched, sample, tmp_path)
    assert own.returncode == 0, own.stderr[-3000:]
    # The plain build (no patch, no plugin) knows neither name.
    for name in ("AcmeSchedulable", "UnderlayIPLimit"):
        refused = run_validation(built_scheduler.binary, config_enabling(name), tmp_path)
        assert refused.returncode != 0
        assert name in refused.stderr and "does not exist" in refused.stderr, refused.stderr[-2000:]
