"""The platforms a custom scheduler is built for: one table, read by every stage.

The spec's `platforms`, `--platforms`, the binary check (ELF machine, qemu) and the
dist/ layout all come from here, so a platform one stage accepts no other refuses.
"""

from __future__ import annotations

import platform as _platform
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from scheduler_build.errors import UserError

OS = "linux"  # kube-scheduler images are Linux images


@dataclass(frozen=True)
class Arch:
    name: str  # GOARCH and the OCI architecture
    machines: tuple[str, ...]  # platform.machine() spellings of this architecture
    qemu: str  # Debian's qemu-user-static binary that runs it on another host


# The architectures Kubernetes releases kube-scheduler for (a pure table).
ARCHES: dict[str, Arch] = {a.name: a for a in (
    Arch("amd64", ("x86_64", "amd64"), "qemu-x86_64-static"),
    Arch("arm64", ("aarch64", "arm64"), "qemu-aarch64-static"),
    Arch("ppc64le", ("ppc64le",), "qemu-ppc64le-static"),
    Arch("s390x", ("s390x",), "qemu-s390x-static"),
)}
SUPPORTED = tuple(f"{OS}/{name}" for name in ARCHES)
HINT = f"supported platforms: {', '.join(SUPPORTED)}"


def host_arch() -> str:
    """This machine's architecture in Go's spelling (amd64, arm64, ...)."""
    machine = _platform.machine().lower()
    for arch in ARCHES.values():
        if machine in arch.machines:
            return arch.name
    return machine


def is_supported(platform: str) -> bool:
    return platform in SUPPORTED


def arch_of(platform: str, origin: str = "--platforms") -> str:
    """'linux/arm64' -> 'arm64'; anything outside the table is one clear error naming `origin`."""
    text = str(platform).strip()
    os_name, _, arch = text.partition("/")
    if os_name != OS or arch not in ARCHES:
        raise UserError(f"{origin}: unsupported platform {text!r}", HINT)
    return arch


def parse_list(text: str, origin: str = "--platforms") -> list[str]:
    """'linux/amd64,linux/arm64' -> ['amd64', 'arm64'] (order kept, duplicates dropped)."""
    arches: list[str] = []
    for item in (p.strip() for p in str(text).split(",")):
        if item and (arch := arch_of(item, origin)) not in arches:
            arches.append(arch)
    if not arches:
        raise UserError(f"{origin} is empty", "e.g. linux/amd64,linux/arm64")
    return arches


def qemu_for(arch: str) -> str | None:
    """The qemu-user binary that runs `arch` here, or None when it is the host's or absent."""
    if arch == host_arch() or arch not in ARCHES:
        return None
    return shutil.which(ARCHES[arch].qemu)


_DIST_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def check_dist_name(name: str, origin: str = "--name") -> str:
    """A name that stays one directory under dist/ (no '/', '..', spaces): `--name ../x` wrote outside it."""
    if not _DIST_NAME.match(str(name)) or ".." in str(name):
        raise UserError(f"{origin} {name!r}: not a name for dist/<name>/", "use letters, digits, '.', '_' and '-', "
                        "e.g. acme-scheduler")
    return name


def dist_dir_for(dist_dir: Path | str, name: str, version: str, arch: str, os_name: str = OS) -> Path:
    """dist/<name>/<version>/<os>-<arch>/: where a build puts a binary and the image stage reads it."""
    return Path(dist_dir) / check_dist_name(name) / version / f"{os_name}-{arch}"
