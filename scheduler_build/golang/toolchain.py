"""Which Go runs a build: the host's when it is new enough, else Go's own toolchain module.

A Kubernetes release (or a scaffold, a plugin, bench.perf's harness) names the Go it needs in
its go.mod's `go` line. When the host's Go is older, or `--go` (builder.go) asks for an exact
patch, the toolchain comes from the Go module proxy as the `go` command itself fetches it:
`golang.org/toolchain@v0.0.1-go<version>.linux-<arch>`, downloaded by the host's `go` through
the configured GOPROXY and checked against the checksum database (Go checks a toolchain module
there even when GOSUMDB=off or GONOSUMDB names it; only a lone file:// GOPROXY is exempt), then
kept in the module cache, one directory per version. Its GOROOT runs the host-side steps
(tidy, vendor, `go list`) and seeds the bootstrapped builder image; the compile itself stays
GOTOOLCHAIN=local with no network.

With no `--go`, a go line the host does not satisfy picks the newest patch of that minor the
proxy lists, as the `go` command does (GOTOOLCHAIN=auto); offline, the newest one cached.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace
from pathlib import Path

from scheduler_build import platforms
from scheduler_build.golang import gotool
from scheduler_build.errors import UserError

MODULE = "golang.org/toolchain"
EXACT = re.compile(r"^(?:go)?(\d+)\.(\d+)\.(\d+)$")


@dataclass(frozen=True)
class Toolchain:
    version: str  # 1.27.3
    root: Path  # its GOROOT
    source: str  # host | proxy
    module: str = ""  # golang.org/toolchain@v0.0.1-go1.27.3.linux-amd64 (source proxy)
    sum: str = ""  # that module's h1: hash, as the checksum database has it
    pinned: bool = False  # asked for by `--go` (builder.go): a builder must have exactly this version

    @property
    def go(self) -> str:
        """The `go` command to run host-side steps with ("" for the host's own, found as usual)."""
        return str(self.root / "bin" / "go") if self.source == "proxy" else ""

    @property
    def identity(self) -> str:
        """What a cache keys on: the module and its hash; the host's Go is keyed by version, as before."""
        return f"{self.module} {self.sum}" if self.source == "proxy" else ""


def parse(text: str) -> tuple[int, ...]:
    """'go1.26.8' / '1.26' / '1.26.0' -> (1, 26, 8); pre-release suffixes are ignored."""
    match = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", text or "")
    if not match:
        return ()
    return tuple(int(part) for part in match.groups(default="0"))


def satisfies(have: str, need: str) -> bool:
    return bool(parse(have)) and parse(have) >= parse(need)


def module_version(version: str, arch: str = "") -> str:
    return f"v0.0.1-go{version}.linux-{arch or platforms.host_arch()}"


def check_exact(version: str, where: str = "--go") -> str:
    """An exact Go release (1.27.3; a leading `go` is dropped), or one UserError naming the flag."""
    match = EXACT.match((version or "").strip())
    if not match:
        raise UserError(f"{where} {version!r} is not an exact Go release", "give major.minor.patch, e.g. --go 1.27.3")
    return ".".join(match.groups())


def host(goroot: str = "") -> Toolchain:
    """The host toolchain (builder.goroot, else `go env GOROOT`)."""
    root = goroot or gotool.env_value("GOROOT")
    version_file = Path(root) / "VERSION"
    if not version_file.is_file():
        raise UserError(f"{root} is not a Go root (no VERSION file)", "set builder.goroot / --goroot to the directory `go env GOROOT` prints")
    version = version_file.read_text().splitlines()[0].strip().removeprefix("go")
    return Toolchain(version, Path(root), "host")


def module_cache() -> Path:
    return Path(gotool.env_value("GOMODCACHE"))


def cached(version: str, arch: str = "") -> Toolchain | None:
    """The toolchain of this version if the module cache holds it ready to run (no network)."""
    name = module_version(version, arch)
    cache = module_cache()
    root = cache / f"{MODULE}@{name}"
    ziphash = cache / "cache" / "download" / MODULE / "@v" / f"{name}.ziphash"
    go = root / "bin" / "go"
    if not (go.is_file() and os.access(go, os.X_OK) and ziphash.is_file()):
        return None
    return Toolchain(version, root, "proxy", f"{MODULE}@{name}", ziphash.read_text().strip())


def cached_versions(minor: tuple[int, ...], arch: str = "") -> list[str]:
    """Versions of this minor the module cache holds, oldest first."""
    suffix = f".linux-{arch or platforms.host_arch()}"
    found = []
    for entry in module_cache().glob(f"{MODULE}@v0.0.1-go{minor[0]}.{minor[1]}.*{suffix}"):
        version = entry.name.split("-go", 1)[1].removesuffix(suffix)
        if EXACT.match(version) and cached(version, arch):
            found.append(version)
    return sorted(found, key=parse)


def listed_versions(minor: tuple[int, ...], arch: str = "") -> list[str]:
    """Releases of this minor the Go module proxy lists for this platform, oldest first; [] offline."""
    proc = gotool.run(["list", "-m", "-versions", MODULE], timeout=60)
    if proc.returncode != 0:
        return []
    suffix = f".linux-{arch or platforms.host_arch()}"
    found = []
    for item in proc.stdout.split()[1:]:
        version = item.removeprefix("v0.0.1-go").removesuffix(suffix)
        if item.endswith(suffix) and EXACT.match(version) and parse(version)[:2] == minor[:2]:
            found.append(version)
    return sorted(found, key=parse)


def fetch(version: str, arch: str = "") -> Toolchain:
    """The toolchain module of this exact version, downloaded and verified by the host's `go` once."""
    ready = cached(version, arch)
    if ready is not None:
        return ready
    name = module_version(version, arch)
    # The `go` command's own switch: download through GOPROXY, check the checksum database,
    # unpack into the module cache and make its programs executable, then run it once.
    proc = gotool.run(["version"], env={"GOTOOLCHAIN": f"go{version}"}, timeout=900)
    said = proc.stdout.strip()
    ready = cached(version, arch)
    if proc.returncode != 0 or f"go{version} " not in said + " " or ready is None:
        lines = [line for line in (proc.stdout + proc.stderr).splitlines() if line.strip()]
        detail = lines[-1] if lines else "no output"
        raise UserError(f"cannot fetch Go {version} ({MODULE}@{name}) through GOPROXY={gotool.proxy_setting()}: {detail}",
                        offline_hint(version, exact=True))
    return ready


def offline_hint(version: str, exact: bool = False) -> str:
    release = ".".join(map(str, parse(version))) or version
    return (f"install Go {version}{'' if exact else ' or newer'} on the host (https://go.dev/dl), or set GOPROXY to a Go module proxy "
            f"that serves {MODULE} (once online, `GOTOOLCHAIN=go{release} go version` caches it)")


def choose(required: str, exact: str = "", goroot: str = "", what: str = "this Kubernetes version") -> Toolchain:
    """The Go to build with: `exact` (--go) if given, else the host's if it satisfies `required`
    (a go line), else the newest patch of that minor the proxy lists (offline: the newest cached)."""
    local = host(goroot)
    if exact:
        exact = check_exact(exact)
        if required and not satisfies(exact, required):
            raise UserError(f"--go {exact} is older than the go {required} {what} requires",
                            f"give --go {'.'.join(map(str, parse(required)[:2]))}.N or newer")
        return replace(local if local.version == exact else fetch(exact), pinned=True)
    if not required or satisfies(local.version, required):
        return local
    minor = parse(required)
    candidates = [v for v in listed_versions(minor) or cached_versions(minor) if satisfies(v, required)]
    if not candidates:
        raise UserError(f"the host's Go {local.version} is older than the go {required} {what} requires, and no Go "
                        f"{minor[0]}.{minor[1]}.x at or above it is cached or served by GOPROXY={gotool.proxy_setting()}",
                        offline_hint(required))
    return fetch(candidates[-1])



def need_line(minor: str, required: str, host_version: str, cached_list: list[str]) -> str:
    """One served minor's Go, for `doctor`: its go line, and which Go builds it and whether that is at hand."""
    if satisfies(host_version, required):
        return f"{minor}: go {required} (the host's go{host_version})"
    fits = [v for v in cached_list if satisfies(v, required)]
    if fits:
        return f"{minor}: go {required} (go{fits[-1]} cached from {MODULE})"
    return f"{minor}: go {required} (not cached: the first build fetches it from {MODULE})"



def mod_download(module: str, version: str, timeout: float = 900) -> dict:
    """gotool.mod_download; a module whose go line the host's Go is too old for is downloaded again by
    the Go that line needs (choose), as `go` itself would switch with GOTOOLCHAIN=auto."""
    try:
        return gotool.mod_download(module, version, timeout)
    except UserError as exc:
        needed = gotool.needs_go(exc.message)
        if not needed:
            raise
    newer = choose(needed, what=f"{module}@{version}")
    return gotool.mod_download(module, version, timeout, go=newer.go)


def module_dir(module: str, version: str) -> Path:
    """The module's source in the Go module cache (downloaded through the proxy if missing)."""
    return Path(mod_download(module, version)["Dir"])
