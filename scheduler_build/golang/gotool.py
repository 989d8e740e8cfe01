"""The host's Go toolchain: one environment, one runner, one `go mod download -json`.

Resolution, vendoring, patching, scaffolding, in-tree plugin names and SBOMs all
run the host's `go`; they do it through this edge so the environment and the
errors (missing toolchain, proxy refusals, network) are the same everywhere.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Callable

from scheduler_build.errors import UserError
from scheduler_build.progress import alive, stream_line
from scheduler_build.filelock import turn

# Where `go` is looked for after PATH: ci/setup.sh and the official tarball install it here.
FALLBACKS = ("/usr/local/go/bin/go",)
INSTALL_HINT = "install Go 1.26+ from https://go.dev/dl (found at /usr/local/go/bin without PATH) or put its bin/ on PATH"
DEFAULT_PROXY = "https://proxy.golang.org,direct"  # Go's own default GOPROXY
NETWORK_HINT = ("check the network and GOPROXY (`go env GOPROXY`); offline, give an exact version (--k8s-version v1.36.3 "
                "or kubernetes.version: v1.36.3), which needs no listing, and modules Go's cache already holds")
_NETWORK_WORDS = ("dial tcp", "lookup", "proxy", "timeout", "connection refused", "not available")


def find() -> str:
    """The `go` command: PATH first, then $GOROOT/bin/go, then where ci/setup.sh puts it; "" when none."""
    candidates = [os.path.join(os.environ["GOROOT"], "bin", "go")] if os.environ.get("GOROOT") else []
    for candidate in [shutil.which("go") or "", *candidates, *FALLBACKS]:
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return ""


def binary() -> str:
    """The `go` command every Go call runs (see find); one UserError with the fix when there is none."""
    found = find()
    if not found:
        raise UserError(missing(), INSTALL_HINT)
    return found


def missing() -> str:
    """What was searched, for the error when no `go` was found."""
    searched = ", ".join(["PATH", *(["$GOROOT/bin"] if os.environ.get("GOROOT") else []), *FALLBACKS])
    return f"no Go toolchain: `go` is not on {searched}"


def proxy_setting() -> str:
    """GOPROXY as Go would use it; without Go, $GOPROXY or Go's default (so reading the proxy needs no Go)."""
    if find():
        return env_value("GOPROXY")
    return os.environ.get("GOPROXY") or DEFAULT_PROXY


def environment(**overrides: str) -> dict[str, str]:
    """Module mode, the host's own toolchain only (no auto-download), no go.work from the cwd. The user's
    GOFLAGS are kept (e.g. -tags, -p, -trimpath), with -mod=mod added; one that sets another -mod is refused."""
    return {**os.environ, "GOFLAGS": goflags(os.environ.get("GOFLAGS", "")), "GOTOOLCHAIN": "local", "GO111MODULE": "on",
            "GOWORK": "off", **overrides}


def goflags(user: str) -> str:
    """The user's GOFLAGS with -mod=mod (the host's go steps read and write go.mod); another -mod refused."""
    flags = user.split()
    mods = [flag for flag in flags if flag.startswith(("-mod=", "--mod="))]
    if any(flag.split("=", 1)[1] != "mod" for flag in mods):
        raise UserError(f"GOFLAGS={user!r} sets {mods[0]}: scheduler-build's go steps on this host need -mod=mod "
                        "(they resolve and tidy modules)", "drop -mod from GOFLAGS for scheduler-build, e.g. "
                        "`env GOFLAGS= inv build ...`; the compile in the builder uses -mod=vendor itself")
    return " ".join(flags if mods else [*flags, "-mod=mod"])


def looks_like_network(detail: str) -> bool:
    return any(word in detail for word in _NETWORK_WORDS)


# `M@V: reading https://proxy/.../@v/V.zip: 403 Forbidden` (then `server response: ... not available`):
# the proxy answered and refused that version; the network is fine.
_REFUSED = re.compile(r"([\w.~/-]+)@(v[\w.+-]+): reading \S+: (40[34] [A-Za-z ]+|410 Gone)")


def refused_modules(output: str) -> list[tuple[str, str, str]]:
    """(module, version, the proxy's status) of every module version the proxy refused, in order (pure)."""
    found: dict[tuple[str, str], str] = {}
    for match in _REFUSED.finditer(output):
        found.setdefault((match.group(1), match.group(2)), match.group(3).strip())
    return [(module, version, status) for (module, version), status in found.items()]


def failure(what: str, output: str, hint: str) -> UserError:
    """One line for a failed `go` command: the proxy's refusals by module and version when it refused
    some (not a network problem), else Go's last line with `hint` (the network's when it reads like one)."""
    refused = refused_modules(output)
    if refused:
        listed = ", ".join(f"{module} {version} ({status})" for module, version, status in refused)
        return UserError(f"{what} failed: the Go module proxy ({proxy_setting()}) refuses {listed}",
                         "the proxy does not serve those versions (yet: a pre-release's dependencies often reach it "
                         "later); use a release whose dependencies it serves, or a GOPROXY that has them")
    lines = [line for line in output.splitlines() if line.strip()]
    detail = lines[-1].strip() if lines else "no output"
    return UserError(f"{what} failed: {detail}", NETWORK_HINT if looks_like_network(detail) else hint)


def run(args: list[str], cwd: Path | str | None = None, timeout: float | None = None,
        stream: bool = False, env: dict[str, str] | None = None,
        on_line: Callable[[str], object] = stream_line, go: str = "") -> subprocess.CompletedProcess:
    """Run `go ARGS`; output is captured (and, with stream, handed to `on_line` line by line: echoed
    to stderr by default). `env` adds variables for this run only (the process environment is never
    changed). Stopped (Ctrl-C, SIGTERM), the go process is ended too. `go` is another toolchain's
    `go` (toolchain.py: one newer than the host's); its GOROOT is its own."""
    argv = [go or binary(), *args]
    own_root = {"GOROOT": str(Path(go).parent.parent)} if go else {}
    full_env = environment(**{**own_root, **(env or {})})
    if stream:
        stream_line("+ go " + " ".join(args))
        lines = []
        with subprocess.Popen(argv, cwd=cwd or tempfile.gettempdir(), env=full_env, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT) as proc:
            assert proc.stdout is not None
            try:
                for line in proc.stdout:
                    on_line(line.rstrip("\n"))
                    lines.append(line)
            except BaseException:
                proc.kill()
                raise
            return subprocess.CompletedProcess(argv, proc.wait(), "".join(lines), "")
    try:
        return subprocess.run(argv, cwd=cwd or tempfile.gettempdir(), env=full_env, capture_output=True,
                              text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise UserError(f"`go {' '.join(args)}` did not finish within {timeout:.0f}s", NETWORK_HINT) from None


def check(args: list[str], cwd: Path | str | None = None, what: str = "", stream: bool = False,
          hint: str = "Go's own error is above", timeout: float | None = None,
          env: dict[str, str] | None = None, go: str = "") -> str:
    """Run `go ARGS` and return its output; a failure is one UserError with Go's last line."""
    proc = run(args, cwd=cwd, stream=stream, timeout=timeout, env=env, go=go)
    if proc.returncode != 0:
        raise failure(what or "`go " + " ".join(args) + "`", proc.stdout + proc.stderr, hint)
    return proc.stdout


def env_value(name: str) -> str:
    """`go env NAME`."""
    return check(["env", name]).strip()


_NEEDS_GO = re.compile(r"requires go (?:>|\\u003e)= (\d+\.\d+(?:\.\d+)?)[^\n]*GOTOOLCHAIN=local")


def needs_go(output: str) -> str:
    """The Go a refusal names (`requires go >= 1.27.0 (running go 1.26.8; GOTOOLCHAIN=local)`), else ""."""
    found = _NEEDS_GO.search(output)
    return found.group(1) if found else ""


def mod_download(module: str, version: str, timeout: float = 900, go: str = "") -> dict:
    """`go mod download -json module@version`: the module cache entry (Dir, GoMod, Info, Sum).
    A module whose go line is newer than this Go is refused (toolchain.mod_download then retries)."""
    proc = run(["mod", "download", "-json", f"{module}@{version}"], timeout=timeout, go=go)
    try:
        info = json.loads(proc.stdout or "{}")
    except json.JSONDecodeError:
        info = {}
    if proc.returncode != 0 or info.get("Error") or not info.get("Dir"):
        if refused_modules(str(info.get("Error") or "") + proc.stderr):
            raise failure(f"downloading {module}@{version}", str(info.get("Error") or "") + "\n" + proc.stderr, "")
        detail = info.get("Error") or (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise UserError(f"cannot download {module}@{version}: {detail}", NETWORK_HINT)
    return info


def module_dir(module: str, version: str) -> Path:
    """The module's source in the Go module cache (downloaded through the proxy if missing)."""
    return Path(mod_download(module, version)["Dir"])


def installed_tool(cache_dir: Path, name: str, package: str, version: str) -> Path:
    """A Go tool `go install`ed once from the module proxy into <cache>/tools/<name>-<version>/
    (CGO off, -trimpath) and reused: the pinned version is the cache key. `package` is the
    import path of its main package; the binary is named after its last element."""
    return installed_programs(cache_dir, name, version, [package])[0]


def installed_programs(cache_dir: Path, name: str, version: str, packages: list[str],
                       tags: tuple[str, ...] = (), ldflags: str = "", cached_only: bool = False) -> list[Path]:
    """Several main packages of one module `go install`ed together (one compile of what they share)
    into <cache>/tools/<name>-<version>[-<flags key>]/, static (CGO off), -trimpath, and reused.
    The cache key is the pinned version plus, when given, the build tags and ldflags: other
    flags are another build. Returns the binaries in the order of `packages`; with
    cached_only, nothing is built and [] says they are not cached yet."""
    flags = " ".join(sorted(tags)) + "|" + ldflags if tags or ldflags else ""
    key = f"{name}-{version}" + (f"-{hashlib.sha256(flags.encode()).hexdigest()[:12]}" if flags else "")
    directory = Path(cache_dir) / "tools" / key
    targets = [directory / package.rstrip("/").rsplit("/", 1)[-1] for package in packages]
    if cached_only and not _all_built(targets):
        return []
    args = ["install", "-trimpath", *(["-tags", ",".join(tags)] if tags else []),
            *(["-ldflags", ldflags] if ldflags else []), *(f"{package}@{version}" for package in packages)]
    return _built_once(targets, f"{name} {version} from the Go module proxy", args, cwd=None)


def _all_built(targets: list[Path]) -> bool:
    return all(t.is_file() and os.access(t, os.X_OK) for t in targets)


def _built_once(targets: list[Path], what: str, args: list[str], cwd: Path | None) -> list[Path]:
    """`go ARGS` (CGO off) writes the binaries into a staging directory beside the targets, then one
    rename each: a killed build leaves nothing that looks finished. Built already: nothing runs."""
    if _all_built(targets):
        return targets
    directory = targets[0].parent
    # Another process building the same tool (`inv test`'s warm-up, a parallel run) goes first; this one
    # then finds it built instead of compiling it a second time beside it.
    with turn(directory / ".lock", f"building {what}"):
        if _all_built(targets):
            return targets
        stream_line(f"    building {what} into {directory} (once)")
        staging = Path(tempfile.mkdtemp(prefix=".gobin-", dir=directory))
        started = time.monotonic()
        try:
            compile_shown(args, cwd, f"building {what}",
                          env={"GOBIN": str(staging), "CGO_ENABLED": "0"})
            for target in targets:
                os.replace(staging / target.name, target)
            # How long it took here: `doctor` tells the next user of this cache what a first use costs.
            (directory / BUILD_SECONDS).write_text(f"{time.monotonic() - started:.0f}\n")
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return targets


def compile_shown(args: list[str], cwd: Path | None, what: str, env: dict[str, str]) -> None:
    """`go build|install ARGS` with `-v`, shown alive: packages compiled and the elapsed time whenever
    stderr has been silent for 10 s (progress.alive); a failure is one UserError with Go's last line."""
    with alive(what) as progress:
        proc = run([args[0], "-v", *args[1:]], cwd=cwd, env=env, stream=True,
                   on_line=lambda line: progress.take(line) or stream_line(line))
    if proc.returncode != 0:
        lines = [line for line in proc.stdout.splitlines() if line.strip() and not progress.take(line)]
        raise failure(what, "\n".join(lines), "Go's own error is above")


BUILD_SECONDS = ".build-seconds"  # beside a built tool: the seconds its first build took
