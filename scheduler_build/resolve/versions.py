"""Resolve a requested Kubernetes version to an exact release and its build pins.

Pure functions (parsing, choosing, nearest versions) plus `resolve()`, which asks
the Go module proxy (goproxy.py) for the version list and that release's go.mod.
Nothing here keeps a list of versions or staging modules: both come from the proxy.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from scheduler_build.resolve import goproxy
from scheduler_build.resolve import gomod
from scheduler_build.errors import UserError
from scheduler_build.progress import log

KUBERNETES_MODULE = "k8s.io/kubernetes"
SUPPORTED_MINORS = 4  # how many of the newest released minors are supported

_REQUEST = re.compile(
    r"^v?(?P<major>\d+)\.(?P<minor>\d+)(?:\.(?P<patch>\d+)(?:-(?P<pre>[0-9A-Za-z.-]+))?)?$"
)
_SEMVER = re.compile(r"^v(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?$")


@dataclass(frozen=True)
class Requested:
    text: str
    major: int
    minor: int | None = None  # None: "latest"
    patch: int | None = None
    pre: str | None = None

    @property
    def exact(self) -> str | None:
        if self.patch is None:
            return None
        return f"v{self.major}.{self.minor}.{self.patch}" + (f"-{self.pre}" if self.pre else "")


@dataclass
class Resolution:
    requested: str
    version: str  # exact k8s.io/kubernetes version, e.g. v1.36.3
    minor: str  # "1.36"
    go_version: str  # the `go` directive of that version's go.mod
    staging_version: str  # v0.36.3
    replaces: dict[str, str] = field(default_factory=dict)
    release_time: str = ""  # from the proxy's .info: the default build date
    supported_minors: list[str] = field(default_factory=list)

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2, sort_keys=True)


def parse_request(text: str) -> Requested:
    """Accept `1.36`, `v1.36`, `v1.36.2`, `v1.37.0-rc.1` and `latest`."""
    cleaned = (text or "").strip()
    if cleaned.lower() == "latest":
        return Requested(text=cleaned, major=1)
    match = _REQUEST.match(cleaned)
    if not match:
        raise UserError(
            f"malformed Kubernetes version {text!r}",
            "use a minor such as 1.36, an exact release such as v1.36.2 or v1.37.0-rc.1, or 'latest'",
        )
    major = int(match["major"])
    if major != 1:
        raise UserError(f"unsupported Kubernetes major version in {text!r}", "Kubernetes versions start with 1., e.g. 1.36")
    return Requested(
        text=cleaned,
        major=major,
        minor=int(match["minor"]),
        patch=int(match["patch"]) if match["patch"] is not None else None,
        pre=match["pre"],
    )


def semver_key(version: str) -> tuple:
    """Sort key for vX.Y.Z[-pre]: a pre-release sorts before its release."""
    match = _SEMVER.match(version)
    if not match:
        return (-1, -1, -1, 0, ())
    major, minor, patch, pre = int(match[1]), int(match[2]), int(match[3]), match[4]
    pre_key: tuple = ()
    if pre:
        pre_key = tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in pre.split("."))
    return (major, minor, patch, 0 if pre else 1, pre_key)


def minor_of(version: str) -> str:
    match = _SEMVER.match(version)
    if not match:
        raise ValueError(version)
    return f"{match[1]}.{match[2]}"


def releases(versions: list[str]) -> list[str]:
    """Released (non pre-release) 1.x versions, oldest first."""
    return sorted((v for v in versions if _SEMVER.match(v) and "-" not in v and v.startswith("v1.")), key=semver_key)


def supported_minors(versions: list[str], count: int = SUPPORTED_MINORS) -> list[str]:
    """The newest `count` released minors, newest first."""
    minors: list[str] = []
    for version in reversed(releases(versions)):
        minor = minor_of(version)
        if minor not in minors:
            minors.append(minor)
    return minors[:count]


def newest_patches(versions: list[str]) -> dict[str, str]:
    """Minor -> its newest release."""
    newest: dict[str, str] = {}
    for version in releases(versions):
        newest[minor_of(version)] = version
    return newest


def choose(request: Requested, versions: list[str]) -> str:
    """Pick the exact version for a request, or raise naming the nearest valid ones."""
    known = [v for v in versions if _SEMVER.match(v)]
    newest = newest_patches(known)
    supported = supported_minors(known)
    if not supported:
        raise UserError("the Go module proxy lists no Kubernetes releases", goproxy.NETWORK_HINT)
    if request.minor is None:
        return newest[supported[0]]
    minor = f"{request.major}.{request.minor}"
    if request.exact:
        if request.exact in known:
            if minor not in supported and minor_of(request.exact) not in _upcoming(known, supported):
                raise _unsupported(request.text, supported, newest)
            return request.exact
        same_minor = [v for v in known if minor_of(v) == minor]
        nearest = _nearest(request.exact, same_minor or known)
        raise UserError(
            f"unknown Kubernetes version {request.text!r}: the Go module proxy has no {request.exact}",
            f"nearest valid versions: {', '.join(nearest)}",
        )
    if minor in newest:
        if minor not in supported:
            raise _unsupported(request.text, supported, newest)
        return newest[minor]
    pre = sorted((v for v in known if minor_of(v) == minor), key=semver_key)
    if pre:
        raise UserError(
            f"Kubernetes {minor} has no release yet, only pre-releases",
            f"name one exactly, e.g. {pre[-1]}, or use a released minor: {', '.join(supported)}",
        )
    raise UserError(
        f"unknown Kubernetes version {request.text!r}",
        "nearest valid versions: " + ", ".join(newest[m] for m in _nearest_minors(minor, supported)),
    )


def _upcoming(known: list[str], supported: list[str]) -> set[str]:
    """Minors newer than the newest release (alpha/beta/rc only): allowed when named exactly."""
    top = semver_key(f"v{supported[0]}.0")
    return {minor_of(v) for v in known if semver_key(v)[:2] > top[:2]}


def _unsupported(text: str, supported: list[str], newest: dict[str, str]) -> UserError:
    return UserError(
        f"Kubernetes version {text!r} is older than the supported minors",
        "supported: " + ", ".join(f"{m} ({newest[m]})" for m in supported),
    )


def _nearest(target: str, candidates: list[str], count: int = 3) -> list[str]:
    key = semver_key(target)

    def distance(version: str) -> tuple:
        other = semver_key(version)
        return (abs(other[1] - key[1]), abs(other[2] - key[2]), other[3] != key[3])

    return sorted(sorted(candidates, key=distance)[:count], key=semver_key)


def _nearest_minors(minor: str, supported: list[str], count: int = 2) -> list[str]:
    wanted = int(minor.split(".")[1])
    return sorted(supported, key=lambda m: abs(int(m.split(".")[1]) - wanted))[:count]


def check_exact(text: str, cache_root: Path) -> str:
    """An exact version (v1.36.3) confirmed to exist, cheaply and offline-friendly: a cached
    .info answers at once; otherwise the proxy's list, then the version itself (the proxy may
    serve a version it does not list). Unreachable proxy: accepted with a warning."""
    exact = parse_request(text).exact
    if exact is None:
        raise ValueError(f"{text!r} is not an exact version")
    if goproxy.cached(KUBERNETES_MODULE, exact, "info", cache_root):
        return exact
    try:
        versions = goproxy.list_versions(KUBERNETES_MODULE)
    except UserError as exc:
        log(f"warning: cannot confirm Kubernetes {exact} exists (offline?): {exc.message}")
        return exact
    if exact not in versions:
        _unlisted(text, exact, versions, cache_root)
    return exact


def _unlisted(text: str, exact: str, versions: list[str], cache_root: Path) -> None:
    """Accept a version the proxy serves though it does not list it; else refuse, saying
    whether the proxy refused it (403: it may exist) or it does not exist (404/410)."""
    try:
        goproxy.fetch(KUBERNETES_MODULE, exact, "info", cache_root)
        return
    except goproxy.ProxyRefused as exc:
        how = ("does not exist (the Go module proxy answered HTTP %d)" % exc.status if exc.status in (404, 410)
               else "is not listed and was refused by the proxy (HTTP %d): it may not exist, "
                    "or this proxy does not serve it" % exc.status)
    minor = f"{parse_request(text).major}.{parse_request(text).minor}"
    same_minor = [v for v in releases(versions) if minor_of(v) == minor]
    nearest = _nearest(exact, same_minor or releases(versions))
    raise UserError(f"Kubernetes {exact} {how}", f"nearest valid versions: {', '.join(nearest)}")


def resolve(text: str, cache_root: Path) -> Resolution:
    """Resolve a version request through the Go module proxy (offline: an exact version already cached)."""
    request = parse_request(text)
    try:
        versions = goproxy.list_versions(KUBERNETES_MODULE)
    except UserError:
        if not (request.exact and all(goproxy.cached(KUBERNETES_MODULE, request.exact, kind, cache_root) for kind in ("mod", "info"))):
            raise
        # Offline, an exact version resolved before needs no listing: its go.mod and .info are cached.
        log(f"warning: the Go module proxy cannot be listed; {request.exact} from the cache")
        mod_text, info_text = (goproxy.fetch(KUBERNETES_MODULE, request.exact, kind, cache_root) for kind in ("mod", "info"))
        return resolution_from(text, request.exact, mod_text, info_text, [])
    if request.exact and request.exact not in versions:
        _unlisted(text, request.exact, versions, cache_root)
        versions = [*versions, request.exact]  # served though unlisted
    exact = choose(request, versions)
    mod_text = goproxy.fetch(KUBERNETES_MODULE, exact, "mod", cache_root)
    info_text = goproxy.fetch(KUBERNETES_MODULE, exact, "info", cache_root)
    return resolution_from(text, exact, mod_text, info_text, supported_minors(versions))


def resolution_from(requested: str, exact: str, mod_text: str, info_text: str, supported: list[str]) -> Resolution:
    """Pure: build the Resolution from that release's go.mod and .info text."""
    parsed = gomod.parse(mod_text)
    if parsed.module != KUBERNETES_MODULE:
        raise UserError(f"the go.mod served for {KUBERNETES_MODULE}@{exact} names module {parsed.module!r}")
    try:
        release_time = json.loads(info_text).get("Time", "")
    except json.JSONDecodeError:
        release_time = ""
    return Resolution(
        requested=requested,
        version=exact,
        minor=minor_of(exact),
        go_version=parsed.go,
        staging_version=gomod.staging_version(exact),
        replaces=gomod.staging_replaces(parsed, exact),
        release_time=release_time,
        supported_minors=supported,
    )
