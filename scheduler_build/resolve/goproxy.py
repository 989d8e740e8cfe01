"""The Go module proxy, through the host's Go toolchain and its GOPROXY setting.

Side effects live here: the rest of the version logic is pure. Immutable
answers (a version's go.mod and .info) are cached on disk, so a resolve of a
version seen before needs no network.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path

from scheduler_build.golang import gotool
from scheduler_build.golang import toolchain
from scheduler_build.errors import UserError
from scheduler_build.golang.gotool import NETWORK_HINT
from scheduler_build.atomic import write_atomic

class ProxyRefused(UserError):
    """Every proxy answered 4xx for module@version: `status` says how (404/410 gone, 403 refused)."""

    def __init__(self, message: str, hint: str | None, status: int):
        super().__init__(message, hint)
        self.status = status


KUBERNETES_PROBE = "k8s.io/kubernetes"  # what doctor asks the proxy for: the module every build resolves


def cached(module: str, version: str, kind: str, cache_root: Path) -> bool:
    return (cache_root / "goproxy" / _escape(module) / f"{version}.{kind}").is_file()


def list_versions(module: str) -> list[str]:
    """All versions the proxy knows for `module` (`go list -m -versions`; without Go, the proxy's @v/list)."""
    if not gotool.find():
        return _list_over_http(module)
    out = gotool.check(["list", "-m", "-versions", "-json", module],
                       what=f"listing versions of {module} from the Go module proxy", hint=NETWORK_HINT, timeout=120)
    return json.loads(out).get("Versions") or []


def _list_over_http(module: str) -> list[str]:
    errors = []
    for base in proxy_urls():
        try:
            with urllib.request.urlopen(f"{base}/{_escape(module)}/@v/list", timeout=60) as resp:
                return sorted({line.strip() for line in resp.read().decode().splitlines() if line.strip()})
        except (urllib.error.URLError, OSError) as exc:
            errors.append(f"{base}: {getattr(exc, 'reason', exc)}")
    detail = errors[-1] if errors else "GOPROXY names no HTTP proxy"
    raise UserError(f"listing versions of {module} from the Go module proxy failed: {detail}", NETWORK_HINT)


def proxy_urls() -> list[str]:
    urls = []
    for entry in gotool.proxy_setting().replace("|", ",").split(","):
        entry = entry.strip()
        if entry.startswith(("http://", "https://", "file://")):  # urllib reads a file:// proxy as Go does
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
    statuses = []
    for base in proxy_urls():
        url = f"{base}/{_escape(module)}/@v/{version}.{kind}"
        try:
            with urllib.request.urlopen(url, timeout=60) as resp:
                text = resp.read().decode()
        except urllib.error.HTTPError as exc:
            errors.append(f"{url}: HTTP {exc.code}")
            statuses.append(exc.code)
            continue
        except (urllib.error.URLError, OSError) as exc:
            errors.append(f"{url}: {getattr(exc, 'reason', exc)}")
            if base.startswith("file://"):  # a file proxy without the file: Go's 404, on to the next entry
                statuses.append(404)
            continue
        write_atomic(cached, text)
        return text
    if not errors:
        return _fetch_with_go(module, version, kind, cached)
    if statuses and len(statuses) == len(errors) and all(400 <= code < 500 for code in statuses):
        raise ProxyRefused(f"the Go module proxy answered HTTP {statuses[-1]} for {module}@{version}",
                           NETWORK_HINT, statuses[-1])
    raise UserError(f"cannot fetch {module}@{version}.{kind} from the Go module proxy: {errors[-1]}", NETWORK_HINT)


def _fetch_with_go(module: str, version: str, kind: str, cached: Path) -> str:
    # GOPROXY=direct (or a file:// proxy): let the go command fetch it.
    info = toolchain.mod_download(module, version)
    text = Path(info["GoMod"] if kind == "mod" else info["Info"]).read_text()
    write_atomic(cached, text)
    return text
