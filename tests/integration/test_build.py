"""Integration: real kube-scheduler builds in the real Docker engine with the real
Go module proxy. Nothing is mocked."""

from __future__ import annotations

import json
import subprocess

import pytest

from conftest import build_request
from testkit import docker_sdk
from scheduler_build import platforms
from scheduler_build.atomic import STAGING
from scheduler_build.golang import gotool
from scheduler_build.build import pipeline as build
from scheduler_build.build import builder_image as builder
from scheduler_build.engine import connect
from scheduler_build.build import elf
from scheduler_build.resolve import versions
from scheduler_build import settings
from scheduler_build.errors import UserError


def test_build_is_static_stamped_and_recorded(built_scheduler):
    binary = built_scheduler.binary
    info = json.loads(built_scheduler.build_info.read_text())
    expected = info["kubernetes"]["version"]
    assert expected.startswith("v1.36.")
    parsed = elf.inspect(binary.read_bytes())
    assert parsed.is_static and parsed.interpreter is None and not parsed.has_dynamic
    assert parsed.arch == platforms.host_arch()
    out = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == f"Kubernetes {expected}"
    assert info["binary"]["sha256"] == build.sha256_file(binary)
    assert info["flags"]["network"] == "none" and info["flags"]["env"]["CGO_ENABLED"] == "0"
    assert "-trimpath" in info["flags"]["command"] and "-mod=vendor" in info["flags"]["command"]
    assert len(info["kubernetes"]["staging_replaces"]) >= 30
    # go.sum's hash of k8s.io/kubernetes, recorded here so the image stage needs no Go: the module cache's own.
    assert info["kubernetes"]["module_sum"].startswith("h1:") and info["schema"] == 2
    assert info["kubernetes"]["module_sum"] == gotool.mod_download("k8s.io/kubernetes", expected)["Sum"]
    phases = set(info["phases_seconds"])
    assert {p for p in phases if "." not in p} == {"resolve", "builder", "vendor", "workspace-image", "compile", "verify"}
    # the compile's own steps (no container at all when the action record shows nothing changed)
    assert {"compile.inputs"} <= {p for p in phases if "." in p} <= {
        "compile.inputs", "compile.create", "compile.put", "compile.go", "compile.copy-out", "compile.remove"}
    # Final directory holds the binary and its record (the image stage may add the
    # SBOMs beside them) and no temporary leftovers.
    names = {p.name for p in binary.parent.iterdir()}
    assert {"build-info.json", "kube-scheduler"} <= names
    assert names <= {"build-info.json", "kube-scheduler", "kube-scheduler.spdx.json", "kube-scheduler.cdx.json"}
    assert not [p for p in binary.parent.parent.iterdir() if p.name.startswith((".tmp", STAGING))]


def test_compile_container_has_no_network(built_scheduler):
    """The proof that vendoring is complete: the builder, run as the compile runs it,
    cannot reach the Go module proxy, so the successful compile fetched nothing."""
    image = built_scheduler.info.builder.image
    lines: list[str] = []
    code = connect().run(
        image,
        ["go", "mod", "download", "-json", "github.com/google/uuid@v1.6.0"],
        environment={"GOPROXY": "https://proxy.golang.org", "GOFLAGS": "-mod=mod",
                                "HOME": "/tmp", "GOMODCACHE": "/tmp/m", "GOCACHE": "/tmp/c"},
        workdir="/tmp", network="none", on_line=lines.append,
    )
    assert code != 0
    text = "\n".join(lines)
    assert "dial tcp" in text or "lookup" in text or "network is unreachable" in text, text


def test_arm64_cross_build_is_aarch64_and_runs_under_qemu(tmp_path):
    result = build.run(build_request(tmp_path / "dist", arch="arm64"))
    parsed = elf.inspect(result.binary.read_bytes())
    assert parsed.arch == "arm64" and parsed.is_static
    assert result.binary.parent.name == "linux-arm64"
    assert result.info.binary.version_check in ("qemu", "native")
    assert result.info.binary.version_output == f"Kubernetes {result.info.kubernetes.version}"


def test_failed_build_keeps_the_previous_good_state(built_scheduler, tmp_path):
    dist = built_scheduler.binary.parent.parent.parent.parent
    before = sorted(p.relative_to(dist) for p in dist.rglob("*"))
    digest = build.sha256_file(built_scheduler.binary)
    # Same name, an image that does not exist: fails after resolve, before anything is written.
    with pytest.raises(UserError, match="builder image"):
        build.run(build_request(dist, builder_image="scheduler-build/no-such-image:0"))
    with pytest.raises(UserError):
        build.run(build_request(dist, version_suffix="bad suffix"))
    assert sorted(p.relative_to(dist) for p in dist.rglob("*")) == before
    assert build.sha256_file(built_scheduler.binary) == digest


def test_unknown_component_fails_clearly_with_nothing_written(tmp_path):
    with pytest.raises(UserError, match="go mod tidy"):
        build.run(build_request(tmp_path / "dist", component="kube-no-such-command"))
    assert not (tmp_path / "dist").exists() or not any((tmp_path / "dist").rglob("kube-no-such-command"))


def test_builder_falls_back_to_bootstrap_without_pulling():
    client = docker_sdk.client()
    resolution = versions.resolve("1.36", settings.cache_dir())
    chosen = builder.select(connect(), resolution.go_version, pull=False)
    assert chosen.source in ("official", "bootstrapped", "bootstrap-cached")
    assert builder.satisfies(chosen.go_version, resolution.go_version)
    image = client.images.get(chosen.image)
    if chosen.source != "official":
        assert image.labels[builder.GO_VERSION_LABEL] == chosen.go_version


def test_resolve_against_the_real_proxy(tmp_path):
    result = versions.resolve("1.36", tmp_path)
    assert result.version.startswith("v1.36.") and result.go_version
    assert result.replaces["k8s.io/kube-scheduler"] == result.staging_version
    assert len(result.supported_minors) == 4
    # Cached .mod answers: a second resolve reads them from the cache directory.
    assert list((tmp_path / "goproxy").rglob("*.mod"))


def test_a_users_file_beside_the_build_survives_the_next_build_and_clean(built_scheduler, tmp_path):
    """The issue's reproduction, with the real build and the real `clean`: a NOTES.md beside build-info.json."""
    import os
    import shutil
    import sys

    dist = tmp_path / "dist"
    final = dist / built_scheduler.binary.parent.relative_to(built_scheduler.binary.parent.parent.parent.parent)
    shutil.copytree(built_scheduler.binary.parent, final)  # the build's output, as if built here (the next build: up to date)
    (final / "NOTES.md").write_text("my notes\n")
    build.run(build_request(dist))
    assert (final / "NOTES.md").read_text() == "my notes\n" and (final / "build-info.json").is_file()
    done = subprocess.run([sys.executable, "-m", "scheduler_build", "clean", "--dist"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300, env={**os.environ, "SCHEDULER_BUILD_PATHS_DIST_DIR": str(dist)})
    assert done.returncode == 0, done.stderr
    assert f"{final / 'NOTES.md'}  (not written by scheduler-build)" in done.stdout, done.stdout
    assert sorted(p.name for p in final.iterdir()) == ["NOTES.md"]
