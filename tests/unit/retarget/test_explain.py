"""`inv plugin.retarget`: the go.mod rewrite, apidiff's report read as moves and signature changes, and
compile errors beside the changes that explain them (unit); the old-style fixture plugin and a scaffold
carried across minors for real (integration).

Integration cost (cold): the fixture's v1.27.10 module graph (one download into the Go module cache),
apidiff built once into <cache>/tools, each module vendored on the host and put into the engine as one
archive, one compile per module and the export data of the scheduler framework packages of both
releases in the builder (its Go build cache volume): 8.6 min cold at a load of 10 on 2 cores, 1 min warm.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from scheduler_build.build import workspace_image

from conftest import DATA, REPO
from scheduler_build.resolve import gomod
from scheduler_build.resolve.versions import Resolution
from scheduler_build.retarget import apidiff, explain, gomod_edit, in_builder

FIXTURE = DATA / "retarget" / "oldscore"


def target(version: str = "v1.36.3", staging: tuple[str, ...] = ("k8s.io/api", "k8s.io/kube-scheduler")) -> Resolution:
    pin = gomod.staging_version(version)
    return Resolution(requested=version, version=version, minor=version[1:].rsplit(".", 1)[0], go_version="1.25.0",
                      staging_version=pin, replaces={m: pin for m in staging})


def test_plan_pins_the_target_drops_outside_replaces_and_gone_staging_modules(tmp_path):
    mod = gomod.parse("""module example.com/p
go 1.20
require (
	k8s.io/api v0.27.10
	k8s.io/kubernetes v1.27.10
	k8s.io/legacy-cloud-providers v0.27.10
	github.com/x/y v1.0.0
)
replace (
	k8s.io/api => k8s.io/api v0.27.10
	k8s.io/component-helpers => ../kubernetes/staging/src/k8s.io/component-helpers
	github.com/x/y => ./third_party/y
)
""")
    rewrite = gomod_edit.plan(mod, tmp_path / "p", target(), {"k8s.io/api", "k8s.io/legacy-cloud-providers"})
    assert "-dropreplace=k8s.io/component-helpers" in rewrite.flags
    assert "-dropreplace=github.com/x/y" not in rewrite.flags  # inside the module: kept
    assert "-require=k8s.io/kubernetes@v1.36.3" in rewrite.flags and "-require=k8s.io/api@v0.36.3" in rewrite.flags
    assert "-droprequire=k8s.io/legacy-cloud-providers" in rewrite.flags
    assert "-replace=k8s.io/kube-scheduler=k8s.io/kube-scheduler@v0.36.3" in rewrite.flags
    assert "-go=1.25.0" in rewrite.flags
    assert len(rewrite.notes) == 2 and "points outside the module" in rewrite.notes[0]
    assert gomod_edit.kubernetes_version_of(mod) == "v1.27.10"
    assert gomod_edit.kubernetes_version_of(gomod.parse("module m\nrequire k8s.io/api v0.35.1\n")) == "v1.35.1"


REPORT_SAME = """Incompatible changes:
- PluginFactory: changed from func(Object, Handle) (Plugin, error) to func(context.Context, Object, Handle) (Plugin, error)
- Registry: changed from map[string]PluginFactory to map[string]PluginFactory
- Framework.RunBindPlugins: changed from func() to func(int)
- Handle: removed
- ScorePlugin: removed
- Status: removed
- NewStatus: removed
Compatible changes:
- Unrelated: added
"""
REPORT_HOME = """Incompatible changes:
- ScorePlugin.Score: changed from func(context.Context, *CycleState, *k8s.io/api/core/v1.Pod, string) (int64, *Status) to func(context.Context, CycleState, *k8s.io/api/core/v1.Pod, NodeInfo) (int64, *Status)
- Removed: removed
- NewStatus: removed
"""


def test_apidiff_reports_read_as_moves_and_signature_changes():
    changes = apidiff.moves_and_changes("k8s.io/kubernetes/pkg/scheduler/framework", {"Handle", "ScorePlugin", "NewStatus", "Registry"},
                                        REPORT_SAME, {"k8s.io/kube-scheduler/framework": REPORT_HOME})
    lines = [c.line() for c in changes]
    assert "framework.Handle -> k8s.io/kube-scheduler/framework.Handle" in lines
    assert "framework.ScorePlugin -> k8s.io/kube-scheduler/framework.ScorePlugin" in lines
    assert any(line.startswith("k8s.io/kube-scheduler/framework.ScorePlugin.Score: changed from") and "NodeInfo" in line
               for line in lines)
    assert "framework.NewStatus: removed" in lines  # gone from both: not a move
    # not named by the plugin but by the change of a name it uses; an unrelated change stays out
    assert lines[-1].startswith("framework.PluginFactory: changed from")
    assert not any("RunBindPlugins" in line for line in lines)
    # a package the target no longer has at all: every used name is looked for in the homes
    gone = apidiff.moves_and_changes("k8s.io/old/framework", {"Handle"}, None, {"k8s.io/kube-scheduler/framework": ""})
    assert [c.what for c in gone] == ["moved"]


def test_errors_are_explained_by_the_changes_they_name():
    sources = [(FIXTURE / "pkg" / "nodelabelscore" / "nodelabelscore.go").read_text()]
    used = explain.used_names(sources)
    assert {"Handle", "ScorePlugin", "CycleState"} <= used["k8s.io/kubernetes/pkg/scheduler/framework"]
    assert used["k8s.io/kubernetes/pkg/scheduler/framework/runtime"] == {"Registry"}
    output = ["# example.com/oldscore/pkg/nodelabelscore", "pkg/nodelabelscore/nodelabelscore.go:24:17: undefined: framework.Handle",
              "some other noise"]
    errors = explain.compile_errors(output)
    assert errors == [output[1]]
    change = apidiff.Change("k8s.io/kubernetes/pkg/scheduler/framework", "Handle", "moved", "k8s.io/kube-scheduler/framework")
    unrelated = apidiff.Change("k8s.io/kubernetes/pkg/scheduler/framework", "Code", "removed")
    [item] = explain.explain(errors, [change, unrelated])
    assert item.changes == [change]
    lines = explain.report([item], [change], "v1.27.10", "v1.36.3")
    assert lines[1] == "    <- framework.Handle -> k8s.io/kube-scheduler/framework.Handle"


def archive_bytes(archive: io.BytesIO, member: tarfile.TarInfo) -> bytes:
    archive.seek(0)
    with tarfile.open(fileobj=archive) as opened:
        return opened.extractfile(member.name).read()


def test_the_module_goes_into_the_engine_as_one_normalised_archive_vendor_included(tmp_path):
    """What in_builder puts at /src: the whole module (vendor too), sorted, owner 0, mtimes derived from
    content (workspace_image.content_mtime: Go's directory index stays correct), so the
    same module gives the same bytes (and nothing of the caller's file system is needed in the engine)."""
    (tmp_path / "vendor/k8s.io/api").mkdir(parents=True)
    (tmp_path / "vendor/k8s.io/api/types.go").write_text("package api\n")
    (tmp_path / "vendor/modules.txt").write_text("# k8s.io/api v0.36.3\n")
    (tmp_path / "go.mod").write_text("module example.com/p\n")
    (tmp_path / "p.go").write_text("package p\n")
    first, second = io.BytesIO(), io.BytesIO()
    in_builder.module_tar(tmp_path, first)
    os.utime(tmp_path / "p.go", (1e9, 1e9))
    in_builder.module_tar(tmp_path, second)
    assert first.getvalue() == second.getvalue()
    first.seek(0)
    with tarfile.open(fileobj=first) as archive:
        members = archive.getmembers()
    names = [m.name for m in members]
    assert {"./go.mod", "./p.go", "./vendor/modules.txt", "./vendor/k8s.io/api/types.go"} <= set(names)
    assert all(m.uid == 0 for m in members)
    assert {m.mtime for m in members if m.isdir()} == {workspace_image.MTIME}
    assert all(m.mtime == workspace_image.content_mtime(archive_bytes(first, m)) for m in members if m.isfile())
    # negative control: a tree that differs gives other bytes
    (tmp_path / "p.go").write_text("package p // edited\n")
    third = io.BytesIO()
    in_builder.module_tar(tmp_path, third)
    assert third.getvalue() != second.getvalue()


def inv(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "invoke", *args], cwd=REPO, capture_output=True, text=True)


def test_a_change_whose_two_sides_print_the_same_is_not_reported():
    report = REPORT_SAME.replace("- Handle: removed\n", "- Handle: changed from Handle to Handle\n")
    lines = [c.line() for c in apidiff.moves_and_changes("k8s.io/kubernetes/pkg/scheduler/framework",
                                                          {"Handle", "Registry"}, report, {})]
    assert lines == ["framework.PluginFactory: changed from func(Object, Handle) (Plugin, error) to "
                     "func(context.Context, Object, Handle) (Plugin, error)"]


SCAFFOLD_GO_MOD = """// Generated by `inv scaffold.plugin` for Kubernetes v1.36.3.
module example.com/t/all

go 1.25.0

require (
	k8s.io/api v0.36.3
	k8s.io/kube-scheduler v0.36.3
	k8s.io/kubernetes v1.36.3
)

// k8s.io/kubernetes v1.36.3 replaces each of its staging modules with
// ./staging/src in its own go.mod; a module depending on it must pin them.
replace (
	k8s.io/api => k8s.io/api v0.36.3
	k8s.io/kube-scheduler => k8s.io/kube-scheduler v0.36.3
)
"""


def test_the_rewritten_go_mod_keeps_its_grouped_replace_block_and_comments(tmp_path):
    """Real `go mod edit` with the planned flags: only the versions change, lines stay where they were."""
    mod = gomod.parse(SCAFFOLD_GO_MOD)
    flags = gomod_edit.plan(mod, tmp_path, target("v1.37.2"), {"k8s.io/api", "k8s.io/kube-scheduler"}).flags
    from scheduler_build.retarget import run as retarget_run

    new = retarget_run.edited(SCAFFOLD_GO_MOD, flags)
    assert new == SCAFFOLD_GO_MOD.replace("v0.36.3", "v0.37.2").replace("\tk8s.io/kubernetes v1.36.3", "\tk8s.io/kubernetes v1.37.2")
    diff = gomod_edit.unified_diff(SCAFFOLD_GO_MOD, new)
    assert sum(1 for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++")) == 5
