"""Verify a compiled binary: static ELF of the right architecture, right version.

`--version` runs natively when the architecture matches the host, under
qemu-user (qemu-<arch>-static) when it is installed, and otherwise falls back to
finding the stamped version string in the binary (recorded as such).
"""

from __future__ import annotations

import subprocess
from dataclasses import asdict, dataclass
from pathlib import Path

from scheduler_build import platforms
from scheduler_build.golang import gotool
from scheduler_build.build import elf
from scheduler_build.errors import BuildFailed



@dataclass
class Verified:
    arch: str
    static: bool
    elf_type: str
    version_output: str
    version_method: str  # native | qemu | embedded-string

    def as_dict(self) -> dict:
        return asdict(self)


def check_elf(path: Path, arch: str, allow_dynamic: bool = False) -> elf.ElfInfo:
    try:
        info = elf.inspect_file(path)
    except (OSError, elf.NotELF) as exc:
        raise BuildFailed(f"{path} is not a usable ELF binary: {exc}")
    if info.arch != arch:
        raise BuildFailed(f"{path} is built for {info.arch}, not the requested {arch}")
    if not allow_dynamic and not info.is_static:
        why = f"interpreter {info.interpreter}" if info.interpreter else "a dynamic section"
        raise BuildFailed(f"{path} is not statically linked: it has {why}")
    return info


def version_command(path: Path, arch: str) -> tuple[list[str], str] | None:
    if arch == platforms.host_arch():
        return [str(path), "--version"], "native"
    qemu = platforms.qemu_for(arch)
    return ([qemu, str(path), "--version"], "qemu") if qemu else None


def check_version(path: Path, arch: str, expected: str) -> tuple[str, str]:
    """Return (output, method); raise when the binary does not report `expected`."""
    command = version_command(path, arch)
    if command is None:
        if expected.encode() in path.read_bytes():
            return f"(not executed: no qemu for {arch}) contains {expected}", "embedded-string"
        raise BuildFailed(f"{path} does not contain the version string {expected}")
    argv, method = command
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise BuildFailed(f"running `{path.name} --version` failed: {exc}")
    output = (proc.stdout + proc.stderr).strip()
    if proc.returncode != 0 or expected not in output.split():
        raise BuildFailed(f"`{path.name} --version` printed {output!r} (exit {proc.returncode}); expected {expected}")
    return output, method


def verify(path: Path, arch: str, expected_version: str, allow_dynamic: bool = False) -> Verified:
    info = check_elf(path, arch, allow_dynamic)
    output, method = check_version(path, arch, expected_version)
    return Verified(arch=info.arch, static=info.is_static, elf_type=info.elf_type, version_output=output, version_method=method)


def check_go(path: Path, expected: str) -> str:
    """`go version FILE` (the Go that built it, from its build info); raise unless it is go`expected`."""
    said = gotool.check(["version", str(path)], what=f"`go version {path.name}`").strip()
    found = said.rsplit(" ", 1)[-1]
    if found != f"go{expected}":
        raise BuildFailed(f"{path} was built by {found or 'an unknown Go'}, not the go{expected} chosen for it")
    return found
