"""Unit tests of devloop: what `inv dev.run` watches, how it sees a change, its report line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from scheduler_build.dev import loop as devloop
from scheduler_build.inputs.common import spec_at
from scheduler_build.config import schedulerconfig

ROOT = Path(__file__).resolve().parents[3]


def _tree(tmp_path: Path) -> Path:
    plugin = tmp_path / "plugin"
    (plugin / "pkg").mkdir(parents=True)
    (plugin / "pkg" / "a.go").write_text("package pkg\nconst X = 1\n")
    (plugin / "go.mod").write_text("module example.com/x\n")
    (plugin / ".git").mkdir()
    (plugin / ".git" / "HEAD").write_text("ref\n")
    (plugin / "vendor" / "m").mkdir(parents=True)
    (plugin / "vendor" / "m" / "v.go").write_text("package m\n")
    (plugin / "pkg" / ".a.go.swp").write_text("swap")
    (plugin / "pkg" / "a.go~").write_text("backup")
    return plugin


def test_watch_roots_are_the_local_plugins_then_the_patches():
    spec = spec_at(ROOT / "examples/underlay/scheduler.yaml")
    roots = devloop.watch_roots(spec)
    assert roots[0] == (ROOT / "examples/underlay/plugin").resolve()
    assert [r.name for r in roots[1:]] == ["0001-scheduler-add-AcmeSchedulable-in-tree-plugin.patch"]
    files = devloop.watched_files(roots)
    assert any(f.name == "underlayiplimit.go" for f in files) and roots[1] in files


def test_watched_files_leave_out_vcs_vendor_and_editor_leftovers(tmp_path):
    plugin = _tree(tmp_path)
    patch = tmp_path / "0001.patch"
    patch.write_text("diff\n")
    names = [str(p.relative_to(tmp_path)) for p in devloop.watched_files([plugin, patch, tmp_path / "gone"])]
    assert names == ["plugin/go.mod", "plugin/pkg/a.go", "0001.patch"]


def test_a_content_change_is_seen_a_touch_is_not(tmp_path):
    plugin = _tree(tmp_path)
    source = plugin / "pkg" / "a.go"
    first = devloop.scan([plugin])
    later = first[str(source)].mtime_ns + 5_000_000_000
    os.utime(source, ns=(later, later))  # saved again, same bytes
    touched = devloop.scan([plugin], first)
    assert devloop.changed(first, touched) == []
    source.write_text("package pkg\nconst X = 2\n")
    os.utime(source, ns=(later + 1, later + 1))
    edited = devloop.scan([plugin], touched)
    assert devloop.changed(touched, edited) == [str(source)]
    assert devloop.saved_at(edited, [str(source)]) == (later + 1) / 1e9


def test_added_and_removed_files_are_changes(tmp_path):
    plugin = _tree(tmp_path)
    before = devloop.scan([plugin])
    (plugin / "pkg" / "b.go").write_text("package pkg\n")
    (plugin / "go.mod").unlink()
    after = devloop.scan([plugin], before)
    assert devloop.changed(before, after) == [str(plugin / "go.mod"), str(plugin / "pkg" / "b.go")]
    assert devloop.saved_at(after, [str(plugin / "go.mod")]) is None


def test_result_lines_of_a_good_and_a_failed_cycle():
    good = devloop.Cycle(number=2, changed=["/p/a.go", "/p/b.go", "/p/c.go", "/p/d.go"], build_seconds=12.34,
                         save_to_lease=15.05, holder="host_1234")
    assert devloop.result_line(good) == (
        "cycle 2 ok changed=a.go,b.go,c.go +1 build=12.3s save_to_lease=15.1s holder=host_1234")
    bad = devloop.Cycle(number=3, changed=["/p/a.go"], ok=False, build_seconds=4.0,
                        error="\ngo build failed: a.go:3: undefined: Y\n  more detail\n")
    assert devloop.result_line(bad) == ("cycle 3 failed changed=a.go build=4.0s "
                                        "error=go build failed: a.go:3: undefined: Y kept the previous scheduler")
    first = devloop.Cycle(number=0, build_seconds=1.0, holder="h")
    assert devloop.result_line(first) == "cycle 0 ok build=1.0s holder=h"


def test_dev_configuration_points_at_the_cluster_and_elects_on_the_spec_lease():
    spec = spec_at(ROOT / "examples/underlay/scheduler.yaml")
    config = devloop.dev_configuration(schedulerconfig.for_spec(spec), "/k/admin.kubeconfig")
    assert config["clientConnection"] == {"qps": 50, "burst": 100, "kubeconfig": "/k/admin.kubeconfig"}
    assert devloop.lease_target(config) == ("underlay-system", "underlay-scheduler")
    assert config["leaderElection"]["leaderElect"] is True
    assert devloop.lease_target({}) == ("kube-system", "kube-scheduler")


def test_dev_run_reaches_the_reference_extender_in_plain_http():
    # The client certificate lives in a Secret mounted into the scheduler pod; a host process has none.
    spec = spec_at(ROOT / "examples/underlay/scheduler.yaml")
    assert spec.reference_extender.tls
    (entry,) = schedulerconfig.for_spec(devloop.host_spec(spec))["extenders"]
    assert entry["enableHTTPS"] is False and "tlsConfig" not in entry and entry["urlPrefix"].startswith("http://")
    assert devloop.host_spec(spec).reference_extender.port == spec.reference_extender.port


def test_dev_run_without_a_control_plane_is_one_line_naming_the_state_dir(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "scheduler_build", "dev.run", "--spec",
                           str(ROOT / "examples/underlay/scheduler.yaml"), "--state-dir", str(tmp_path / "none")],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode != 0 and proc.stdout == ""
    assert proc.stderr.strip().splitlines() == [
        f"error: no local control plane in {tmp_path / 'none'}; start one with `scheduler-build cluster.up`, or pass --kubeconfig"]
