"""A plugin collection shaped like kubernetes-sigs/scheduler-plugins (tests/data/collection), compiled in
with the real build (`inv build --spec`, Kubernetes 1.36, real Go in the builder container) and judged by
the real binary through `inv config.validate`.

The collection has two plugins in one package under non-standard names (noderes.AllocatableName /
NewAllocatable, FreeName / NewFree), a short-form package (gang.Name / gang.New), an args type registered
only by its scheme package, and a package that must be imported for its side effects.

Cost: two kube-scheduler compiles that differ from the cached ones only in main.go (plus a tidy and a
vendor each, cached after the first run), one failing compile, and two refusals before any of that.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import REPO, TEST_K8S_MINOR, build_request


COLLECTION = REPO / "tests/data/collection"
SCHEME = "example.com/collection/apis/config/scheme"
HOOKS = "example.com/collection/pkg/hooks/register"
NODERES = "example.com/collection/pkg/noderes"


def inv(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "invoke", *args], cwd=REPO, capture_output=True, text=True)


def collection_spec(tmp_path: Path, *, imports=(SCHEME, HOOKS), factory="NewFree", path: Path = COLLECTION) -> Path:
    spec = {
        "name": "collection-scheduler",
        "version": "0.1.0",
        "kubernetes": {"version": TEST_K8S_MINOR},
        "plugins": [{
            "path": str(path),
            "package": "example.com/collection/pkg/gang",
            "names": ["CollectionGang"],
            "imports": list(imports),
            "register": [
                {"name": "NodeAllocatable", "factory": "NewAllocatable", "package": NODERES},
                {"name": "NodeFree", "factory": factory, "package": NODERES},
            ],
        }],
        "profiles": [{
            "schedulerName": "collection-scheduler",
            "plugins": {
                "filter": {"enabled": [{"name": "CollectionGang"}, {"name": "NodeFree"}]},
                "score": {"enabled": [{"name": "NodeAllocatable", "weight": 2}]},
            },
            "pluginConfig": [{"name": "NodeAllocatable", "args": {"mode": "Most"}}],
        }],
    }
    path_ = tmp_path / "scheduler.yaml"
    path_.write_text(yaml.safe_dump(spec, sort_keys=False))
    return path_


def build(spec: Path, dist: Path) -> subprocess.CompletedProcess:
    return inv("build", "--spec", str(spec), "--dist", str(dist), "--no-pull", "--json")


def last_line(proc: subprocess.CompletedProcess) -> str:
    return proc.stderr.strip().splitlines()[-1]


def test_collection_builds_and_the_binary_accepts_its_args(tmp_path):
    spec = collection_spec(tmp_path)
    built = build(spec, tmp_path / "dist")
    assert built.returncode == 0, built.stderr[-5000:]
    info = json.loads(built.stdout)
    assert info["plugins"][0]["names"] == ["CollectionGang", "NodeAllocatable", "NodeFree"]
    binary = info["binary"]["path"]
    written = tmp_path / "written.yaml"
    ok = inv("config.validate", "--spec", str(spec), "--binary", binary, "--write-config-to", str(written))
    assert ok.returncode == 0, ok.stderr[-5000:]
    profile = yaml.safe_load(written.read_text())["profiles"][0]
    args = {c["name"]: c.get("args") for c in profile["pluginConfig"]}
    assert args["NodeAllocatable"]["mode"] == "Most"
    # The plugin's own validation runs in the binary: the typed args reached it.
    bad = yaml.safe_load(spec.read_text())
    bad["profiles"][0]["pluginConfig"][0]["args"]["mode"] = "Sideways"
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump(bad))
    refused = inv("config.validate", "--spec", str(tmp_path / "bad.yaml"), "--binary", binary)
    assert refused.returncode != 0 and "mode must be Least or Most" in last_line(refused), refused.stderr[-3000:]


def test_without_the_scheme_import_validate_names_the_plugin_and_imports(tmp_path):
    spec = collection_spec(tmp_path, imports=(HOOKS,))
    built = build(spec, tmp_path / "dist")
    assert built.returncode == 0, built.stderr[-5000:]
    binary = json.loads(built.stdout)["binary"]["path"]
    refused = inv("config.validate", "--spec", str(spec), "--binary", binary)
    assert refused.returncode != 0
    line = last_line(refused)
    assert "got *runtime.Unknown" in line and "plugin 'NodeAllocatable'" in line, line
    assert "plugins[0].imports" in line and "scheme" in line and "Traceback" not in refused.stderr


def test_misspelled_factory_fails_naming_the_field(tmp_path):
    refused = build(collection_spec(tmp_path, factory="NewFre"), tmp_path / "dist")
    assert refused.returncode != 0 and "Traceback" not in refused.stderr
    line = last_line(refused)
    assert line.startswith("error: plugins[0].register[1].factory:") and "does not export NewFre" in line, line
    assert not (tmp_path / "dist").exists()


def test_wrong_factory_signature_fails_in_the_compile_naming_the_field(tmp_path):
    from scheduler_build import spec as spec_mod
    from scheduler_build.build import pipeline
    from scheduler_build.errors import BuildFailed

    loaded = spec_mod.load(collection_spec(tmp_path, factory="NewLegacy"))
    dist = tmp_path / "dist"
    with pytest.raises(BuildFailed) as failed:
        pipeline.run(build_request(dist, plugin_sources=tuple(loaded.plugins)))
    message = failed.value.message
    assert message.startswith("plugins[0].register[1].factory: main.go:"), message
    assert "noderes.NewLegacy" in message and "cannot use" in message, message
    assert not [p for p in dist.rglob("*") if p.is_file()]  # no binary, no build-info


def test_plugin_needing_a_newer_patch_stops_before_anything_is_written(tmp_path):
    newer = tmp_path / "collection"
    shutil.copytree(COLLECTION, newer)
    gomod = newer / "go.mod"
    gomod.write_text(gomod.read_text().replace("\tk8s.io/kubernetes v1.36.3\n", "\tk8s.io/kubernetes v1.36.99\n"))
    refused = build(collection_spec(tmp_path, path=newer), tmp_path / "dist")
    assert refused.returncode != 0 and "Traceback" not in refused.stderr
    line = last_line(refused)
    assert "plugins[0]" in line and "k8s.io/kubernetes v1.36.99" in line and "newer than the target v1.36." in line, line
    assert "raise kubernetes.version to v1.36.99" in line and "lower the plugin's go.mod requirement" in line
    assert not (tmp_path / "dist").exists()
