"""config.render: golden files, determinism, atomic output (unit: no Docker, Go or network)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from scheduler_build.config import render
from scheduler_build.config import validate as config_validate
from scheduler_build.resolve import intree
from scheduler_build import spec as spec_mod
from scheduler_build.errors import UserError

REPO = Path(__file__).resolve().parents[3]
DATA = Path(__file__).resolve().parents[2] / "data" / "config"
GOLDEN = DATA / "golden"
# (spec file, check_files): the example's plugin directory comes from the plugin issue.
SPECS = {
    "minimal": (DATA / "specs" / "minimal.yaml", True),
    "intree-full": (DATA / "specs" / "intree-full.yaml", True),
    "underlay-example": (REPO / "examples" / "underlay" / "scheduler.yaml", False),
}
K8S = "v1.36.3"


def rendered(key: str) -> dict[str, str]:
    path, check = SPECS[key]
    spec = spec_mod.load(path, check_files=check)
    return render.render_files(spec, render.image_ref(spec, K8S))


def golden_differences(files: dict[str, str], golden_dir: Path, update: bool) -> list[str]:
    """The golden files that differ from `files` (missing, extra or changed), compared before
    anything is written; with `update` they are rewritten too, and still reported, so a run
    that accepts new goldens never passes: rerun without UPDATE_GOLDEN=1 after reviewing the diff."""
    expected = {p.name: p.read_text() for p in golden_dir.iterdir()} if golden_dir.is_dir() else {}
    differ = sorted(name for name in set(files) | set(expected) if files.get(name) != expected.get(name))
    if update and differ:
        golden_dir.mkdir(parents=True, exist_ok=True)
        for name in set(expected) - set(files):
            (golden_dir / name).unlink()
        for name, text in files.items():
            (golden_dir / name).write_text(text)
    return differ


@pytest.mark.parametrize("key", sorted(SPECS))
def test_rendered_files_match_golden(key):
    update = os.environ.get("UPDATE_GOLDEN") == "1"
    differ = golden_differences(rendered(key), GOLDEN / key, update)
    assert not differ, (f"{key}: {', '.join(differ)} " +
                        ("rewritten: review `git diff`, then rerun without UPDATE_GOLDEN=1" if update else
                         "differ from the goldens (UPDATE_GOLDEN=1 to accept)"))


def test_a_golden_difference_fails_even_while_updating(tmp_path):
    # Negative control: a changed, a missing and an extra golden are each found, with and without
    # UPDATE_GOLDEN; updating rewrites them, after which the same files compare equal.
    files = {"a.yaml": "a: 1\n", "b.yaml": "b: 1\n"}
    (tmp_path / "a.yaml").write_text("a: 2\n")
    (tmp_path / "c.yaml").write_text("c: 1\n")
    assert golden_differences(files, tmp_path, update=False) == ["a.yaml", "b.yaml", "c.yaml"]
    assert golden_differences(files, tmp_path, update=True) == ["a.yaml", "b.yaml", "c.yaml"]
    assert golden_differences(files, tmp_path, update=False) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.yaml", "b.yaml"]


@pytest.mark.parametrize("key", sorted(SPECS))
def test_manifests_are_valid_objects_and_hardened(key):
    files = rendered(key)
    kust = yaml.safe_load(files["kustomization.yaml"])
    objects = [d for name in kust["resources"] for d in yaml.safe_load_all(files[name])]
    by_kind: dict[str, list] = {}
    for obj in objects:
        assert obj["apiVersion"] and obj["kind"] and obj["metadata"]["name"]
        by_kind.setdefault(obj["kind"], []).append(obj)
    spec = spec_mod.load(SPECS[key][0], check_files=SPECS[key][1])
    roles = {b["roleRef"]["name"] for b in by_kind["ClusterRoleBinding"]}
    assert {"system:kube-scheduler", "system:volume-scheduler"} <= roles
    auth = [b for b in by_kind["RoleBinding"] if b["roleRef"]["name"] == "extension-apiserver-authentication-reader"]
    assert auth and auth[0]["metadata"]["namespace"] == "kube-system"
    lease_role = [r for r in by_kind["Role"] if any("leases" in rule["resources"] for rule in r["rules"])][0]
    assert spec.leader_election["resourceName"] in lease_role["rules"][1]["resourceNames"]
    cm = by_kind["ConfigMap"][0]
    config = yaml.safe_load(cm["data"]["config.yaml"])
    assert config == yaml.safe_load(files[render.CONFIG_FILE])
    assert config["apiVersion"] == "kubescheduler.config.k8s.io/v1"
    assert config["leaderElection"]["resourceLock"] == "leases"
    dep = [d for d in by_kind["Deployment"] if d["metadata"]["name"] == spec.name][0]
    pod = dep["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    sc = container["securityContext"]
    assert sc["runAsNonRoot"] is True and sc["runAsUser"] == 65532 and sc["readOnlyRootFilesystem"] is True
    assert sc["capabilities"] == {"drop": ["ALL"]} and sc["seccompProfile"] == {"type": "RuntimeDefault"}
    assert sc["allowPrivilegeEscalation"] is False
    for probe, path in (("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")):
        assert container[probe]["httpGet"] == {"path": path, "port": 10259, "scheme": "HTTPS"}
    assert container["resources"]["requests"]
    mount = [m for m in container["volumeMounts"] if m["name"] == "config"][0]["mountPath"]
    assert f"--config={mount}/config.yaml" in container["args"]
    assert ("Namespace" in by_kind) == (spec.namespace not in ("kube-system", "default"))
    if spec.reference_extender.enabled:
        svc = by_kind["Service"][0]
        scheme = "https" if spec.reference_extender.tls else "http"
        url = f"{scheme}://{svc['metadata']['name']}.{svc['metadata']['namespace']}.svc:{svc['spec']['ports'][0]['port']}"
        assert url in [e["urlPrefix"] for e in config["extenders"]]
    else:
        assert "Service" not in by_kind


def test_same_spec_gives_byte_identical_output(tmp_path):
    path, check = SPECS["intree-full"]
    spec = spec_mod.load(path)
    a = render.render(spec, tmp_path / "a", "r/x:1")
    b = render.render(spec_mod.load(path), tmp_path / "b", "r/x:1")
    assert a == b
    for name in a:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_render_replaces_the_directory_in_one_step(tmp_path):
    spec = spec_mod.load(SPECS["minimal"][0])
    out = tmp_path / "out"
    render.render(spec, out, "r/x:1")
    first = out.stat().st_ino
    render.render(spec, out, "r/x:2")  # different content -> a new tree, swapped in
    assert out.is_dir() and not out.is_symlink() and out.stat().st_ino != first
    assert "r/x:2" in (out / "deployment.yaml").read_text()
    # the old tree is gone, no temporary leftovers
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_render_refuses_a_directory_with_foreign_files(tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "notes.txt").write_text("mine")
    with pytest.raises(UserError, match="did not write"):
        render.render(spec_mod.load(SPECS["minimal"][0]), tmp_path / "out", "r/x:1")
    assert (tmp_path / "out" / "notes.txt").read_text() == "mine"


def test_parse_names_go():
    text = 'package names\n\nconst (\n\tPrioritySort = "PrioritySort"\n\tNodeName     = "NodeName"\n)\n'
    assert intree.parse_names_go(text) == {"PrioritySort", "NodeName"}


def test_refusal_reason_is_the_binarys_own_error():
    out = 'W1 x\nE1123 10:58:51.330697 6750 run.go:72] "command failed" err="initializing profiles: ScorePlugin \\"Nope\\" does not exist"\n'
    assert config_validate.refusal_reason(out) == 'initializing profiles: ScorePlugin "Nope" does not exist'


PATCH = """diff --git a/pkg/scheduler/framework/plugins/acme/acme.go b/pkg/scheduler/framework/plugins/acme/acme.go
new file mode 100644
--- /dev/null
+++ b/pkg/scheduler/framework/plugins/acme/acme.go
@@ -0,0 +1,3 @@
+package acme
+
+const Name = "AcmeThing"
diff --git a/pkg/scheduler/framework/plugins/acme/acme_test.go b/pkg/scheduler/framework/plugins/acme/acme_test.go
--- /dev/null
+++ b/pkg/scheduler/framework/plugins/acme/acme_test.go
@@ -0,0 +1,1 @@
+const Name = "NotAPlugin"
"""
REGISTRY = """--- a/pkg/scheduler/framework/plugins/registry.go
+++ b/pkg/scheduler/framework/plugins/registry.go
@@ -1,1 +1,2 @@
 	registry := runtime.Registry{
+		acme.Name: acme.New,
"""


def test_patched_plugin_names_need_a_registration(tmp_path):
    plugin, registry = tmp_path / "0001.patch", tmp_path / "0002.patch"
    plugin.write_text(PATCH)
    registry.write_text(REGISTRY)
    assert intree.patched_plugin_names([plugin]) == set()  # declared but never registered
    assert intree.patched_plugin_names([plugin, registry]) == {"AcmeThing"}


def test_kubectl_kustomize_builds_the_rendered_directory(tmp_path):
    """`kubectl apply -k DIR` works: kustomize (built into kubectl, offline) accepts the directory."""
    import shutil
    import subprocess

    assert shutil.which("kubectl"), "kubectl is missing: bash ci/setup.sh builds it (as root)"

    spec = spec_mod.load(SPECS["intree-full"][0])
    files = render.render(spec, tmp_path / "out", "r/x:1")
    proc = subprocess.run(["kubectl", "kustomize", str(tmp_path / "out")], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    built = [d for d in yaml.safe_load_all(proc.stdout) if d]
    expected = [d for name in yaml.safe_load(files["kustomization.yaml"])["resources"]
                for d in yaml.safe_load_all(files[name]) if d]
    key = lambda d: (d["kind"], d["metadata"].get("namespace", ""), d["metadata"]["name"])  # noqa: E731
    assert sorted(map(key, built)) == sorted(map(key, expected))


def _inv(*args):
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "invoke", *args], cwd=REPO, capture_output=True, text=True, timeout=120)


def test_cli_errors_are_one_message_and_an_exit_code(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: Bad\nversion: '1'\nkubernetes: {version: '1.36'}\nparallelism: 0\n")
    rendered = _inv("config.render", "--spec", str(bad), "--out", str(tmp_path / "out"))
    assert rendered.returncode == 2 and "Traceback" not in rendered.stderr
    assert "2 errors in the build spec" in rendered.stderr and "parallelism: must be >= 1, got 0" in rendered.stderr
    assert not (tmp_path / "out").exists()  # nothing written
    migrated = _inv("config.migrate-policy", str(DATA / "policies" / "malformed.json"))
    assert migrated.returncode == 2 and "line 4, column 25: invalid JSON: Illegal trailing comma before end of array" in migrated.stderr and "Traceback" not in migrated.stderr


def test_cli_migrate_policy_writes_the_file_and_warns(tmp_path):
    out = tmp_path / "config.yaml"
    result = _inv("config.migrate-policy", str(DATA / "policies" / "full.json"), "--out", str(out),
                  "--scheduler-name", "legacy")
    assert result.returncode == 0, result.stderr
    assert result.stderr.count("warning: ") >= 5
    assert yaml.safe_load(out.read_text())["profiles"][0]["schedulerName"] == "legacy"
    strict = _inv("config.migrate-policy", str(DATA / "policies" / "full.json"), "--strict")
    assert strict.returncode == 1 and "no exact v1 equivalent" in strict.stderr
