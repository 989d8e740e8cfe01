"""Whose file is it (scheduler_build/owned.py): the user's files are never overwritten without --force,
and every output option with a read-only place to write is one line before any work. Unit: no Docker,
Go or network. The read-only places are bind mounts made read-only inside a private mount namespace
(`unshare --mount`): root passes every permission check, and the mount ends with the command."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from scheduler_build import owned
from scheduler_build.atomic import umask_mode, write_atomic
from scheduler_build.config import chart, output
from scheduler_build.config import render as manifests
from scheduler_build import spec as spec_mod
from scheduler_build.errors import UserError

REPO = Path(__file__).resolve().parents[2]
FULL = REPO / "tests" / "data" / "config" / "specs" / "intree-full.yaml"
HAND_WRITTEN = "resources:\n- my-own-app.yaml\n"


def test_a_hand_written_kustomization_is_kept_without_force_and_named_with_it(tmp_path):
    out = tmp_path / "gitops"
    out.mkdir()
    (out / "kustomization.yaml").write_text(HAND_WRITTEN)
    files = manifests.render_files(spec_mod.load(FULL), "r/x:1")
    with pytest.raises(UserError, match=r"kustomization.yaml is not as scheduler-build wrote it"):
        output.write(files, out, manifests.RENDERED_NAMES, plain=True)
    assert sorted(os.listdir(out)) == ["kustomization.yaml"] and (out / "kustomization.yaml").read_text() == HAND_WRITTEN
    changes = output.write(files, out, manifests.RENDERED_NAMES, plain=True, force=True)
    assert changes.forced == ["kustomization.yaml"]
    assert any(line.startswith("changed kustomization.yaml (--force") for line in changes.lines())
    assert output.write(files, out, manifests.RENDERED_NAMES, plain=True).forced == []  # ours from now on


def test_a_hand_written_values_yaml_is_kept_and_a_file_equal_to_ours_is_not_a_clash(tmp_path):
    spec = spec_mod.load(FULL)
    files = chart.chart_files(spec, "r/x:1")
    out = tmp_path / "chart"
    out.mkdir()
    (out / "values.yaml").write_text("replicaCount: 7\n")
    (out / "Chart.yaml").write_text(files["Chart.yaml"])  # the same bytes: nothing of theirs is lost
    with pytest.raises(UserError, match=r"--out .*: values.yaml is not as"):
        output.write(files, out, chart.CHART_NAMES, plain=True)
    assert (out / "values.yaml").read_text() == "replicaCount: 7\n"
    # The record, not the name, decides: once written by us and edited, it is theirs again.
    output.write(files, out, chart.CHART_NAMES, plain=True, force=True)
    (out / "values.yaml").write_text((out / "values.yaml").read_text() + "# mine\n")
    with pytest.raises(UserError, match="values.yaml is not as"):
        output.write(chart.chart_files(spec, "r/x:2"), out, chart.CHART_NAMES, plain=True)


def test_a_stale_file_edited_by_hand_is_not_removed(tmp_path):
    out = tmp_path / "out"
    files = {"a.yaml": "a: 1\n", "b.yaml": "b: 1\n", "kustomization.yaml": "resources:\n- a.yaml\n- b.yaml\n"}
    output.write(files, out, set(files), plain=True)
    (out / "b.yaml").write_text("b: 2\n")
    changes = output.write({"a.yaml": "a: 1\n", "kustomization.yaml": "resources:\n- a.yaml\n"}, out, set(files),
                           plain=True)
    assert changes.removed == [] and (out / "b.yaml").read_text() == "b: 2\n"


def test_a_file_at_the_archive_path_is_refused_unless_ours_or_forced(tmp_path):
    cache, archive = tmp_path / "cache", tmp_path / "spec.yaml"
    archive.write_text("name: my-scheduler\n")
    with pytest.raises(UserError, match=r"--oci-archive .*spec.yaml is not as scheduler-build wrote it"):
        owned.check_file(archive, cache, False, "--oci-archive")
    assert owned.check_file(archive, cache, True, "--oci-archive") is True  # forced: the caller names it
    archive.write_bytes(b"a tar")
    owned.remember_file(archive, cache)
    assert owned.check_file(archive, cache, False, "--oci-archive") is False  # ours, unchanged
    archive.write_bytes(b"a tar, edited")
    with pytest.raises(UserError):
        owned.check_file(archive, cache, False, "--oci-archive")
    assert owned.check_file(tmp_path / "new.tar", cache, False, "--oci-archive") is False


def test_outputs_follow_the_umask_and_secrets_stay_private(tmp_path):
    old = os.umask(0o022)
    try:
        write_atomic(tmp_path / "spec.yaml", "x")
        write_atomic(tmp_path / "key", "k", mode=0o600)
        assert umask_mode() == 0o644 and umask_mode(0o777) == 0o755
    finally:
        os.umask(old)
    assert (tmp_path / "spec.yaml").stat().st_mode & 0o777 == 0o644
    assert (tmp_path / "key").stat().st_mode & 0o777 == 0o600


def _can_unshare() -> bool:
    return shutil.which("unshare") is not None and subprocess.run(
        ["unshare", "--mount", "true"], capture_output=True).returncode == 0


# Each output option, pointed into a read-only directory: (argv after the program, the flag the line names).
READ_ONLY_CASES = {
    "build --dist": (["build", "--no-spec", "--no-pull", "--dist", "{ro}/dist"], "--dist"),
    "image.build --dist": (["image.build", "--no-spec", "--k8s-version", "1.36", "--dist", "{ro}/dist"], "--dist"),
    "image.build --oci-archive": (["image.build", "--no-spec", "--k8s-version", "1.36", "--dist", "{rw}",
                                   "--oci-archive", "{ro}/image.tar"], "--oci-archive"),
    "config.chart --out": (["config.chart", "--spec", str(FULL), "--out", "{ro}/chart"], "--out"),
    "config.render --out": (["config.render", "--spec", str(FULL), "--out", "{ro}/config", "--plain"], "--out"),
    "init": (["init", "{ro}/project"], "init"),
    "scaffold.plugin --out": (["scaffold.plugin", "--name", "NodeLimit", "--points", "filter", "--module",
                               "example.com/a/b", "--no-tidy", "--out", "{ro}/plugin"], "--out"),
}


@pytest.mark.skipif(not _can_unshare(), reason="needs unshare --mount (root) for a read-only bind mount")
@pytest.mark.parametrize("case", sorted(READ_ONLY_CASES))
def test_a_read_only_output_place_is_one_line_before_any_work(tmp_path, case):
    argv, flag = READ_ONLY_CASES[case]
    ro, rw = tmp_path / "ro", tmp_path / "rw"
    ro.mkdir()
    rw.mkdir()
    args = [a.format(ro=ro, rw=rw) for a in argv]
    script = (f"mount --bind {ro} {ro} && mount -o remount,ro,bind {ro} && "
              f"exec {sys.executable} -m scheduler_build -q \"$@\"")
    proc = subprocess.run(["unshare", "--mount", "sh", "-c", script, "sh", *args], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300, env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {flag} ") and "Read-only file system" in lines[0], lines
    assert list(ro.iterdir()) == []  # nothing written, nothing ran


def test_the_negative_control_a_writable_place_passes_the_check(tmp_path):
    owned.check_writable(tmp_path / "a" / "b", "--dist")
    assert not (tmp_path / "a").exists()  # the check creates nothing
    (tmp_path / "file").write_text("x")
    with pytest.raises(UserError, match="is a file, not a directory"):
        owned.check_writable(tmp_path / "file" / "out", "--dist")
