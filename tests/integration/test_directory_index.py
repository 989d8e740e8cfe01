"""Go's index of package directories, cached in GOCACHE, is keyed by each file's path, name, size
and mtime. Our archives (workspace_image.add_tree / inputs_tar) give every file an mtime derived
from its content, so two trees at the same path, or an edit that keeps a file's size, never share
an index entry: a build of the second tree in the same Go cache sees its own imports.

The real Go toolchain runs on this host (no engine needed); the trees are unpacked from our own
archives, as the engine unpacks them. Negative control: the same trees with one fixed mtime (what
the archives did before) build the second tree with the first one's imports and fail."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import tarfile
from pathlib import Path


from scheduler_build.build import workspace_image


GO = shutil.which("go") or "/usr/local/go/bin/go"
GO_MOD = "module example.com/index\n\ngo 1.22\n"
MAIN = 'package main\n\nimport "example.com/index/{pkg}"\n\nfunc main() {{ println({pkg}.Name) }}\n'
LIB = 'package {pkg}\n\nconst Name = "{pkg}"\n'


def _tree(root: Path, pkg: str) -> Path:
    """A module whose main.go imports `pkg`: main.go has the same size for "alpha" and "bravo"."""
    (root / pkg).mkdir(parents=True)
    (root / "go.mod").write_text(GO_MOD)
    (root / "main.go").write_text(MAIN.format(pkg=pkg))
    (root / pkg / "lib.go").write_text(LIB.format(pkg=pkg))
    return root


def _unpack(tree: Path, dest: Path, fixed_mtime: bool) -> None:
    """Replace `dest` with `tree` as an engine unpacks our archive (mtimes included)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        workspace_image.add_tree(archive, tree, "src")
    buffer.seek(0)
    shutil.rmtree(dest, ignore_errors=True)
    with tarfile.open(fileobj=buffer) as archive:
        archive.extractall(dest.parent, filter="fully_trusted")
    if fixed_mtime:
        for path in dest.rglob("*"):
            os.utime(path, (workspace_image.MTIME, workspace_image.MTIME))


def _build(src: Path, gocache: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, GOCACHE=str(gocache), GOFLAGS="-mod=mod", GOPROXY="off", GOTOOLCHAIN="local",
               CGO_ENABLED="0")
    env.pop("GODEBUG", None)
    return subprocess.run([GO, "run", "-trimpath", "."], cwd=src, env=env, capture_output=True, text=True, timeout=300)


def _second_build(tmp_path: Path, fixed_mtime: bool) -> subprocess.CompletedProcess:
    alpha, bravo = _tree(tmp_path / "alpha", "alpha"), _tree(tmp_path / "bravo", "bravo")
    assert (alpha / "main.go").stat().st_size == (bravo / "main.go").stat().st_size
    src, gocache = tmp_path / "work" / "src", tmp_path / "gocache"
    src.parent.mkdir()
    _unpack(alpha, src, fixed_mtime)
    first = _build(src, gocache)
    assert first.returncode == 0 and first.stderr.strip() == "alpha", first.stderr
    _unpack(bravo, src, fixed_mtime)
    return _build(src, gocache)


def test_a_second_tree_at_the_same_path_builds_with_its_own_imports(tmp_path):
    second = _second_build(tmp_path, fixed_mtime=False)
    assert second.returncode == 0, second.stderr
    assert second.stderr.strip() == "bravo"


def test_negative_control_one_fixed_mtime_serves_the_first_trees_imports(tmp_path):
    second = _second_build(tmp_path, fixed_mtime=True)
    assert second.returncode != 0 or second.stderr.strip() != "bravo"


def test_content_mtimes_are_deterministic_distinct_and_in_the_past():
    first, again, other = (workspace_image.content_mtime(d) for d in (b"package a\n", b"package a\n", b"package b\n"))
    assert first == again and first != other
    assert workspace_image.MTIME < first < workspace_image.MTIME_FLOOR + workspace_image.MTIME_SPAN < 2_000_000_000
