"""The Go module proxy, through the host's Go toolchain and its GOPROXY setting.

Side effects live here: the rest of the version logic is pure. Immutable
answers (a version's go.mod and .info) are cached on disk, so a resolve of a
version seen before needs no network.
"""

from __future__ import annotations

import json
import os
import subprocess
import urllib.error
import urllib.request
from pathlib import Path

from scheduler_build.errors import UserError
from scheduler_build.atomic import write_atomic

NETWORK_HINT = "check the network and GOPROXY (`go env GOPROXY`); offline builds need versions resolved before"


def go_env(name: str) -> str:
    try:
        out = subprocess.run(["go", "env", name], capture_output=True, text=True, check=True)
    except FileNotFoundError:
        raise UserError("the Go toolchain is not on PATH", "install Go 1.26+ at /usr/local/go and add /usr/local/go/bin to PATH")
    return out.stdout.strip()


def list_versions(module: str) -> list[str]:
    """All versions the proxy knows for `module` (`go list -m -versions`)."""
    env = dict(os.environ, GO111MODULE="on", GOFLAGS="-mod=mod")
    try:
        proc = subprocess.run(
            ["go", "list", "-m", "-versions", "-json", module],
            capture_output=True,
            text=True,
            env=env,
            cwd=os.path.expanduser("~") if os.path.isdir(os.path.expanduser("~")) else "/",
            timeout=120,
        )
    except FileNotFoundError:
        raise UserError("the Go toolchain is not on PATH", "install Go 1.26+ and add it to PATH")
    except subprocess.TimeoutExpired:
        raise UserError(f"the Go module proxy did not answer listing {module} within 120s", NETWORK_HINT)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise UserError(f"cannot list versions of {module} from the Go module proxy: {last}", NETWORK_HINT)
    return json.loads(proc.stdout).get("Versions") or []


def _proxy_urls() -> list[str]:
    urls = []
    for entry in go_env("GOPROXY").replace("|", ",").split(","):
        entry = entry.strip()
        if entry.startswith(("http://", "https://")):
            urls.append(entry.rstrip("/"))
    return urls


def _escape(path: str) -> str:
    # The proxy protocol escapes upper-case letters as '!' + lower-case.
    return "".join("!" + ch.lower() if ch.isupper() else ch for ch in path)


def fetch(module: str, version: str, kind: str, cache_root: Path) -> str:
    """The proxy's `.mod` or `.info` file for module@version, cached forever."""
    cached = cache_root / "goproxy" / _escape(module) / f"{version}.{kind}"
    if cached.is_file():
        return cached.read_text()
    errors = []
    for base in _proxy_urls():
        url = f"{base}/{_escape(module)}/@v/{version}.{kind}"
        try:
            with urllib.request.urlopen(url, timeout=60) as resp:
                text = resp.read().decode()
        except urllib.error.HTTPError as exc:
            errors.append(f"{url}: HTTP {exc.code}")
            continue
        except (urllib.error.URLError, OSError) as exc:
            errors.append(f"{url}: {getattr(exc, 'reason', exc)}")
            continue
        write_atomic(cached, text)
        return text
    if not errors:
        return _fetch_with_go(module, version, kind, cached)
    raise UserError(f"cannot fetch {module}@{version}.{kind} from the Go module proxy: {errors[-1]}", NETWORK_HINT)


def _fetch_with_go(module: str, version: str, kind: str, cached: Path) -> str:
    # GOPROXY=direct (or a file:// proxy): let the go command fetch it.
    proc = subprocess.run(
        ["go", "mod", "download", "-json", f"{module}@{version}"], capture_output=True, text=True
    )
    info = json.loads(proc.stdout or "{}")
    if proc.returncode != 0 or info.get("Error"):
        raise UserError(f"cannot download {module}@{version}: {info.get('Error') or proc.stderr.strip()}", NETWORK_HINT)
    path = info["GoMod"] if kind == "mod" else info["Info"]
    text = Path(path).read_text()
    write_atomic(cached, text)
    return text
