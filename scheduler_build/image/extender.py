"""`inv image.extender`: the reference extender's image on a locally bootstrapped Python base.

No image is ever pulled: the base is a minimal Debian root file system made by
debootstrap (`--variant=minbase`, plus python3) from the Debian mirror, cached
as a tarball under the toolkit's cache keyed by suite, architecture, mirror and
package list. The extender (scheduler_build.extender with scheduler_build's
`__init__`, `errors` and `extender_config`, nothing else of the toolkit) and its runtime wheels
(`pip install --target`, binary wheels for the base's CPython) go into their
own directory; the image runs as 65532:65532.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from scheduler_build import platforms
from scheduler_build.engine import connect
from scheduler_build import resources
from scheduler_build.errors import UserError
from scheduler_build.progress import log, phase, stream_line

SUITE = "bookworm"
INCLUDE = ("python3", "ca-certificates")
# The distributions the extender imports at run time; their version ranges come from the package's own
# requirement metadata (pyproject.toml's dependencies), so the image gets the pinned, tested uvicorn.
EXTENDER_DISTRIBUTIONS = ("msgspec", "prometheus-client", "uvicorn", "uvloop", "httptools", "kubernetes")
_REQUIREMENT_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
EXTENDER_FILES = ("__init__.py", "errors.py", "cli/__init__.py", "cli/about.py")  # outside extender/, what it imports
DEBIAN_ARCH = {"amd64": "amd64", "arm64": "arm64"}


@dataclass
class ExtenderImage:
    tag: str
    image_id: str
    rootfs: Path
    rootfs_cached: bool


def rootfs_key(arch: str, mirror: str, suite: str = SUITE, include: tuple[str, ...] = INCLUDE) -> str:
    return hashlib.sha256(f"{suite}|{arch}|{mirror}|{','.join(sorted(include))}|minbase|1".encode()).hexdigest()[:16]


def base_rootfs(cache_dir: Path, arch: str, mirror: str, include: tuple[str, ...] = INCLUDE) -> tuple[Path, bool]:
    """The cached rootfs tarball (Debian minbase + `include`), bootstrapping it on a miss: (path, was_cached)."""
    if arch not in DEBIAN_ARCH:
        raise UserError(f"no Debian architecture for {arch!r}", "supported: amd64, arm64")
    target = Path(cache_dir) / "rootfs" / f"debian-{SUITE}-python3-{arch}-{rootfs_key(arch, mirror, include=include)}.tar"
    if target.is_file():
        return target, True
    if os.geteuid() != 0:
        raise UserError("debootstrap needs root to make the Python base", "run as root, or copy a cached rootfs into " + str(target.parent))
    debootstrap = shutil.which("debootstrap") or ("/usr/sbin/debootstrap" if os.path.exists("/usr/sbin/debootstrap") else "")
    if not debootstrap:
        raise UserError("debootstrap is not installed", "apt-get install -y debootstrap")
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".rootfs-", dir=target.parent) as tmp:
        root = Path(tmp) / "root"
        argv = [debootstrap, "--variant=minbase", f"--include={','.join(include)}", f"--arch={DEBIAN_ARCH[arch]}"]
        if arch != platforms.host_arch():
            argv.append("--foreign")  # second stage would need qemu in the chroot
        argv += [SUITE, str(root), mirror]
        with phase("extender.rootfs", " ".join(argv[1:])):
            proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            for line in proc.stdout:
                stream_line(line.rstrip("\n"))
            if proc.wait() != 0:
                raise UserError(f"debootstrap of {SUITE} for {arch} failed (exit {proc.returncode}); its output is above", f"check that {mirror} is reachable")
            # Drop what a runtime never needs: apt lists and caches, docs, man pages.
            for sub in ("var/cache/apt", "var/lib/apt/lists", "usr/share/doc", "usr/share/man", "usr/share/info", "usr/share/locale"):
                shutil.rmtree(root / sub, ignore_errors=True)
            partial = Path(tmp) / "rootfs.tar"
            subprocess.run(["tar", "--numeric-owner", "--sort=name", "-C", str(root), "-cf", str(partial), "."], check=True)
            os.replace(partial, target)
    return target, False


def source_digest() -> str:
    """A digest of the extender code that goes into the image: a present image with another
    digest was built from other code and is rebuilt (it is the tag, not the content, that
    names it)."""
    root = resources.package()
    digest = hashlib.sha256()
    files = [root.joinpath(name) for name in EXTENDER_FILES]
    files += sorted((e for e in root.joinpath("extender").iterdir() if e.name.endswith(".py")), key=lambda e: e.name)
    for entry in files:
        digest.update(f"{entry.name}\0".encode() + entry.read_bytes() + b"\0")
    digest.update("\n".join(runtime_wheels()).encode())  # a new pin rebuilds the image
    return digest.hexdigest()[:16]


def runtime_wheels(requirements: list[str] | None = None) -> list[str]:
    """The extender's requirements as pip takes them (name and version range), read from the metadata of the
    installed scheduler-build; a distribution missing there is a packaging error, named."""
    if requirements is None:
        requirements = importlib.metadata.requires("scheduler-build") or []
    found: dict[str, str] = {}
    for line in requirements:
        spec, _, marker = line.partition(";")
        match = _REQUIREMENT_NAME.match(spec)
        if match and "extra" not in marker:
            found[_canonical(match.group(1))] = spec.strip()
    missing = [name for name in EXTENDER_DISTRIBUTIONS if _canonical(name) not in found]
    if missing:
        raise UserError(f"scheduler-build's requirements lack {', '.join(missing)}, which the extender imports",
                        "reinstall the package (pip install -e .) so its metadata matches pyproject.toml")
    return [found[_canonical(name)] for name in EXTENDER_DISTRIBUTIONS]


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def install_extender(dest: Path) -> None:
    """The extender package and its runtime wheels, importable from `dest`."""
    # Only the extender's own code: the package marker, the error type it raises and
    # scheduler_build.extender (test fixtures live in tests/, never in the package).
    root = resources.package()
    pkg = dest / "scheduler_build"
    (pkg / "extender").mkdir(parents=True)
    for name in EXTENDER_FILES:
        (pkg / name).parent.mkdir(parents=True, exist_ok=True)
        (pkg / name).write_bytes(root.joinpath(name).read_bytes())
    for entry in root.joinpath("extender").iterdir():
        if entry.name.endswith(".py"):
            (pkg / "extender" / entry.name).write_bytes(entry.read_bytes())
    argv = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-compile",
            "--only-binary=:all:", "--python-version", "3.11", "--implementation", "cp",
            "--platform", "manylinux2014_x86_64", "--platform", "manylinux_2_17_x86_64", "--platform", "manylinux_2_28_x86_64",
            "--target", str(dest), *runtime_wheels()]
    proc = subprocess.run(argv, capture_output=True, text=True)
    if proc.returncode != 0:
        raise UserError(f"pip could not fetch the extender's wheels: {proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else proc.returncode}", "check access to PyPI")


def build(cache_dir: Path, tag: str, arch: str, force: bool, mirror: str) -> ExtenderImage:
    if arch != "amd64":
        raise UserError(f"the extender image is built for amd64 only, not {arch}", "the wheels and the bootstrap are host-native")
    engine = connect()
    existing = engine.inspect_image(tag)
    rootfs, cached = base_rootfs(cache_dir, arch, mirror)
    source = source_digest()
    if (existing is not None and not force and existing.labels.get("org.scheduler-build.rootfs") == rootfs.name
            and existing.labels.get("org.scheduler-build.source") == source):
        log(f"    {tag} is already present ({existing.short_id}); --force rebuilds")
        return ExtenderImage(tag, existing.id, rootfs, cached)
    with tempfile.TemporaryDirectory(prefix="sb-extender-") as tmp:
        context = Path(tmp)
        os.link(rootfs, context / "rootfs.tar") if os.stat(rootfs).st_dev == os.stat(context).st_dev else shutil.copy2(rootfs, context / "rootfs.tar")
        with phase("extender.install", "scheduler_build.extender and its wheels"):
            install_extender(context / "app")
        (context / "Dockerfile").write_bytes(resources.dockerfile("extender.Dockerfile"))
        with phase("extender.image", tag):
            image_id = engine.build(context, tag, labels={
                "org.opencontainers.image.title": "scheduler-build reference extender",
                "org.opencontainers.image.licenses": "Apache-2.0",
                "org.scheduler-build.rootfs": rootfs.name,
                "org.scheduler-build.source": source,
            })
    return ExtenderImage(tag, image_id, rootfs, cached)
