"""`inv release.step-image`: the image CI steps run in, built locally from what is here (no pull).

Debian's minimal root file system with python3 and git (debootstrap, cached like the
extender's base), the host's CA bundle (as the builder image carries it: the Go module
proxy and registries are reached through the host's trust), this package with its dependencies and test extra (binary wheels
for the base's CPython 3.11, `pip install --target`), and the host's Go toolchain.
Steps (Drone's docker runner, or any CI that runs steps in containers) mount the
host's Docker socket to reach the engine. The image is labelled with a digest of
its inputs and kept while they are unchanged.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from scheduler_build import __version__, engine as docker_api, resources
from scheduler_build.golang import gotool
from scheduler_build.errors import UserError
from scheduler_build.image import extender
from scheduler_build.image.layer import CA_BUNDLE
from scheduler_build.progress import log, phase

INCLUDE = ("python3", "ca-certificates", "git")
TAG = f"scheduler-build/ci:{__version__}"
WHEEL_PLATFORMS = ("manylinux2014_x86_64", "manylinux_2_17_x86_64", "manylinux_2_28_x86_64")
LABEL = "org.scheduler-build.inputs"
PROJECT_FILES = ("pyproject.toml", "README.md", "scheduler_build", "templates", "dockerfiles")  # what the wheel is built from


@dataclass
class StepImage:
    tag: str
    image_id: str
    built: bool


def requirements() -> list[str]:
    """The package's dependencies and its test extra, markers dropped (the image is Linux, CPython 3.11)."""
    wanted = []
    for req in importlib.metadata.requires("scheduler-build") or []:
        spec, _, marker = req.partition(";")
        if marker and "extra" in marker and '"test"' not in marker:
            continue
        wanted.append(spec.strip())
    return sorted(set(wanted))


def inputs_digest(project: Path, rootfs: Path, goroot: Path) -> str:
    digest = hashlib.sha256(f"{rootfs.name}|{goroot.resolve()}|{(goroot / 'VERSION').read_text()}|".encode()
                            + CA_BUNDLE.read_bytes())
    files = [project / "pyproject.toml", *(f for d in PROJECT_FILES[2:] for f in (project / d).rglob("*"))]
    for path in sorted(p for p in files if p.is_file()):
        if "__pycache__" not in path.parts:
            digest.update(str(path.relative_to(project)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def _pip(args: list[str], what: str) -> None:
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-compile", *args],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        detail = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else str(proc.returncode)
        raise UserError(f"pip could not install {what} for the step image: {detail}", "check access to PyPI")


def install_site(project: Path, context: Path) -> None:
    """site/: the dependencies (a layer that changes rarely); package/: scheduler-build itself."""
    platforms = [a for p in WHEEL_PLATFORMS for a in ("--platform", p)]
    _pip(["--only-binary=:all:", "--python-version", "3.11", "--implementation", "cp", *platforms,
          "--target", str(context / "site"), *requirements()], "the dependencies")
    # pip builds in the source tree (build/, *.egg-info): build from a copy, never write into the checkout.
    staged = context / "source"
    staged.mkdir()
    for name in PROJECT_FILES:
        (shutil.copytree if (project / name).is_dir() else shutil.copy2)(project / name, staged / name)
    _pip(["--no-deps", "--target", str(context / "package"), str(staged)], "scheduler-build")
    shutil.rmtree(staged)


def build(cache_dir: Path, project: Path, tag: str, force: bool, mirror: str) -> StepImage:
    """Build (or keep) the step image from the checkout at `project`."""
    if not (project / "pyproject.toml").is_file():
        raise UserError(f"{project} is not a scheduler-build checkout (no pyproject.toml)", "run it from the checkout")
    engine = docker_api.connect()
    goroot = Path(re.sub(r"/bin/go$", "", gotool.binary()))
    rootfs, _ = extender.base_rootfs(cache_dir, "amd64", mirror, include=INCLUDE)
    digest = inputs_digest(project, rootfs, goroot)
    existing = engine.inspect_image(tag)
    if existing is not None and not force and existing.labels.get(LABEL) == digest:
        log(f"    {tag} is already present ({existing.short_id}); --force rebuilds")
        return StepImage(tag, existing.id, False)
    with tempfile.TemporaryDirectory(prefix="sb-ci-step-") as tmp:
        context = Path(tmp)
        shutil.copy2(rootfs, context / "rootfs.tar")
        with phase("step-image.install", "scheduler-build, its dependencies and test extra"):
            install_site(project, context)
        shutil.copytree(goroot, context / "go", symlinks=True)
        shutil.copy2(CA_BUNDLE, context / "ca-certificates.crt")
        (context / "Dockerfile").write_bytes(resources.dockerfile("ci-step.Dockerfile"))
        with phase("step-image.build", tag):
            image_id = engine.build(context, tag, labels={
                "org.opencontainers.image.title": "scheduler-build CI step image", LABEL: digest})
    return StepImage(tag, image_id, True)
