"""Unit tests for the patch series applier (scheduler_build.patches) on synthetic trees: no go, no network."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

import pytest

from scheduler_build.resolve import versions
from scheduler_build.build import patches
from scheduler_build.errors import UserError

REPO = Path(__file__).resolve().parents[3]
EXAMPLE_PATCH = REPO / "examples/patches/0001-scheduler-add-AcmeSchedulable-in-tree-plugin.patch"


def resolution() -> versions.Resolution:
    return versions.Resolution(requested="1.36", version="v1.36.3", minor="1.36", go_version="1.26.0",
                          staging_version="v0.36.3", replaces={"k8s.io/api": "v0.36.3", "k8s.io/kube-scheduler": "v0.36.3"})


@pytest.fixture
def trees(tmp_path):
    """Fake module-cache directories (read-only, like Go's) for kubernetes and one staging module."""
    kube = tmp_path / "modcache" / "kubernetes@v1.36.3"
    (kube / "pkg/scheduler").mkdir(parents=True)
    (kube / "pkg/scheduler/a.go").write_text("".join(f"line {i}\n" for i in range(1, 41)))
    (kube / "pkg/scheduler/gone.go").write_text("package gone\n")
    api = tmp_path / "modcache" / "api@v0.36.3"
    (api / "core/v1").mkdir(parents=True)
    (api / "core/v1/types.go").write_text("package v1\n\ntype Pod struct{}\n")
    for root in (kube, api):
        for dirpath, dirs, files in os.walk(root):
            for f in files:
                os.chmod(Path(dirpath) / f, 0o444)
    dirs = {"k8s.io/kubernetes": kube, "k8s.io/api": api}
    return dirs


def source(trees):
    return lambda module, version: trees[module]


def git_diff(tmp_path: Path, rel: str, before: str, after: str, name: str) -> Path:
    """A real `git diff` between two versions of a file, written as a patch file."""
    repo = tmp_path / f"git-{name}"
    (repo / rel).parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / rel).write_text(before)
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "base"], check=True)
    (repo / rel).write_text(after)
    diff = subprocess.run(["git", "-C", str(repo), "diff"], check=True, capture_output=True, text=True).stdout
    out = tmp_path / name
    out.write_text(diff)
    return out


def lines(a: int, b: int) -> str:
    return "".join(f"line {i}\n" for i in range(a, b))


def test_parse_format_patch_example():
    parsed = patches.parse(EXAMPLE_PATCH)
    assert [f.path for f in parsed.files] == [
        "pkg/scheduler/framework/plugins/acmeschedulable/acme_schedulable.go",
        "pkg/scheduler/framework/plugins/registry.go",
    ]
    assert parsed.files[0].old_path is None  # a new file
    assert [len(f.hunks) for f in parsed.files] == [1, 2]
    assert parsed.sha256 == hashlib.sha256(EXAMPLE_PATCH.read_bytes()).hexdigest()


def test_apply_with_offset_and_new_and_deleted_files(tmp_path, trees):
    modified = lines(1, 20) + "inserted\n" + lines(20, 41)
    p1 = git_diff(tmp_path, "pkg/scheduler/a.go", lines(1, 41), modified, "0001.patch")
    # A second patch written against a tree where a.go had 3 more lines at the top: applies at an offset.
    shifted_before = "x\ny\nz\n" + modified
    shifted_after = shifted_before.replace("line 30\n", "line thirty\n")
    p2 = git_diff(tmp_path, "pkg/scheduler/a.go", shifted_before, shifted_after, "0002.patch")
    p3 = tmp_path / "0003.patch"
    p3.write_text(
        "diff --git a/pkg/scheduler/new.go b/pkg/scheduler/new.go\nnew file mode 100644\n--- /dev/null\n+++ b/pkg/scheduler/new.go\n"
        "@@ -0,0 +1,2 @@\n+package scheduler\n+// new\n\\ No newline at end of file\n"
        "diff --git a/pkg/scheduler/gone.go b/pkg/scheduler/gone.go\ndeleted file mode 100644\n--- a/pkg/scheduler/gone.go\n+++ /dev/null\n"
        "@@ -1 +0,0 @@\n-package gone\n"
        "diff --git a/staging/src/k8s.io/api/core/v1/types.go b/staging/src/k8s.io/api/core/v1/types.go\n"
        "--- a/staging/src/k8s.io/api/core/v1/types.go\n+++ b/staging/src/k8s.io/api/core/v1/types.go\n"
        "@@ -1,3 +1,3 @@\n package v1\n \n-type Pod struct{}\n+type Pod struct{ Acme bool }\n"
    )
    applied = patches.apply_series([p1, p2, p3], resolution(), source(trees))
    text = applied.changes[("k8s.io/kubernetes", "pkg/scheduler/a.go")]
    assert "inserted\n" in text and "line thirty\n" in text and "line 30\n" not in text
    assert applied.changes[("k8s.io/kubernetes", "pkg/scheduler/new.go")] == "package scheduler\n// new"
    assert applied.changes[("k8s.io/kubernetes", "pkg/scheduler/gone.go")] is None
    assert applied.changes[("k8s.io/api", "core/v1/types.go")].endswith("type Pod struct{ Acme bool }\n")
    assert applied.versions == {"k8s.io/kubernetes": "v1.36.3", "k8s.io/api": "v0.36.3"}
    assert applied.report[1].offsets == (-3,)
    assert [r.file for r in applied.report] == ["0001.patch", "0002.patch", "0003.patch"]


def test_real_conflict_names_patch_target_and_hunk(tmp_path, trees):
    # Written against a different a.go: line 12 was changed upstream.
    theirs = lines(1, 12) + "line 12 upstream\n" + lines(13, 41)
    patch = git_diff(tmp_path, "pkg/scheduler/a.go", theirs, theirs.replace("line 12 upstream\n", "line 12 ours\n"), "0007-change.patch")
    with pytest.raises(patches.PatchConflict) as err:
        patches.apply_series([patch], resolution(), source(trees))
    message = str(err.value)
    assert "patch 0007-change.patch" in message
    assert "pkg/scheduler/a.go of k8s.io/kubernetes v1.36.3" in message
    assert "hunk #1 `@@ -9,7 +9,7 @@" in message
    assert "line 12 is 'line 12', the hunk expects 'line 12 upstream'" in message
    assert err.value.exit_code != 0


def test_series_conflicts_with_itself(tmp_path, trees):
    """The second patch expects the original line the first one already changed."""
    first = git_diff(tmp_path, "pkg/scheduler/a.go", lines(1, 41), lines(1, 41).replace("line 5\n", "line five\n"), "0001.patch")
    second = git_diff(tmp_path, "pkg/scheduler/a.go", lines(1, 41), lines(1, 41).replace("line 5\n", "line 5!\n"), "0002.patch")
    patches.apply_series([second], resolution(), source(trees))  # alone it applies
    with pytest.raises(patches.PatchConflict, match="patch 0002.patch: hunk #1"):
        patches.apply_series([first, second], resolution(), source(trees))


@pytest.mark.parametrize(
    "path, message",
    [
        ("vendor/k8s.io/api/x.go", "cannot patch vendor/"),
        ("staging/src/k8s.io/nope/x.go", "not a staging module of k8s.io/kubernetes v1.36.3"),
        ("pkg/../../etc/passwd", "leaves the kubernetes tree"),
    ],
)
def test_bad_targets(tmp_path, trees, path, message):
    patch = tmp_path / "bad.patch"
    patch.write_text(f"--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n-a\n+b\n")
    with pytest.raises(UserError, match=message):
        patches.apply_series([patch], resolution(), source(trees))


def test_missing_and_existing_files(tmp_path, trees):
    missing = tmp_path / "missing.patch"
    missing.write_text("--- a/pkg/nope.go\n+++ b/pkg/nope.go\n@@ -1 +1 @@\n-a\n+b\n")
    with pytest.raises(patches.PatchConflict, match="pkg/nope.go of k8s.io/kubernetes v1.36.3 does not exist"):
        patches.apply_series([missing], resolution(), source(trees))
    exists = tmp_path / "exists.patch"
    exists.write_text("--- /dev/null\n+++ b/pkg/scheduler/a.go\n@@ -0,0 +1 @@\n+x\n")
    with pytest.raises(patches.PatchConflict, match="creates pkg/scheduler/a.go .* which already exists"):
        patches.apply_series([exists], resolution(), source(trees))


def test_not_a_patch_and_truncated(tmp_path, trees):
    empty = tmp_path / "notes.patch"
    empty.write_text("just some notes\n")
    with pytest.raises(UserError, match="notes.patch contains no unified diff"):
        patches.parse(empty)
    short = tmp_path / "short.patch"
    short.write_text("--- a/pkg/scheduler/a.go\n+++ b/pkg/scheduler/a.go\n@@ -1,3 +1,3 @@\n line 1\n-line 2\n")
    with pytest.raises(UserError, match="truncated"):
        patches.parse(short)


def test_materialize_leaves_module_cache_alone_and_is_content_addressed(tmp_path, trees):
    before = {p: p.read_bytes() for p in trees["k8s.io/kubernetes"].rglob("*") if p.is_file()}
    patch = git_diff(tmp_path, "pkg/scheduler/a.go", lines(1, 41), lines(1, 41).replace("line 7\n", "line seven\n"), "0001.patch")
    cache = tmp_path / "cache"
    done = patches.materialize([patch], resolution(), cache, source(trees))
    copy = done.modules["k8s.io/kubernetes"]
    assert "line seven\n" in (copy / "pkg/scheduler/a.go").read_text()
    assert (copy / "pkg/scheduler/gone.go").read_text() == "package gone\n"  # untouched files are there
    # The module cache is unchanged: the patched file was replaced, not written through a hard link.
    assert {p: p.read_bytes() for p in trees["k8s.io/kubernetes"].rglob("*") if p.is_file()} == before
    assert os.stat(copy / "pkg/scheduler/a.go").st_ino != os.stat(trees["k8s.io/kubernetes"] / "pkg/scheduler/a.go").st_ino
    assert done.root.parent == cache / "patched" and done.report[0].file == "0001.patch"
    # Second call: served from the cache without applying again.
    again = patches.materialize([patch], resolution(), cache, lambda *a: pytest.fail("re-applied a cached series"))
    assert again.root == done.root
    # Different content, different key.
    patch.write_text(patch.read_text().replace("line seven", "line 7!"))
    assert patches.series_key([patch], resolution()) != done.root.name


def test_materialize_failure_writes_nothing(tmp_path, trees):
    bad = git_diff(tmp_path, "pkg/scheduler/a.go", "other\n", "changed\n", "0001-bad.patch")
    cache = tmp_path / "cache"
    with pytest.raises(patches.PatchConflict):
        patches.materialize([bad], resolution(), cache, source(trees))
    assert not (cache / "patched").exists() or list((cache / "patched").iterdir()) == []
