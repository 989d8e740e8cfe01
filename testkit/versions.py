"""The Kubernetes versions the test suite builds: pinned in tests/versions.yaml, never today's proxy listing.

- `load()` reads the pinned file: the default build's release, the served minors the served-minor tests
  compile (minor -> patch), and the Go module proxy's listings of the modules the resolve stage lists
  (k8s.io/kubernetes, k8s.io/kube-scheduler) as they were when the file was written.
- `serve_listings()` puts those listings in front of GOPROXY for the whole suite (tests/conftest.py), so
  a minor such as "1.36" or `latest` resolves as it did when the file was pinned: a new upstream patch or
  minor changes nothing `inv test` builds. Everything else still comes from the real proxy behind it.
- `live()` is what the proxy serves now; `bump-test-versions` writes it, `inv test --canary` builds it and
  `changes()` says what differs from the pinned file.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from scheduler_build.resolve import goproxy, versions

PINNED = Path(__file__).resolve().parents[1] / "tests" / "versions.yaml"
LISTED = (versions.KUBERNETES_MODULE, "k8s.io/kube-scheduler")  # every module the product lists versions of
MARKER = ".scheduler-build-pinned-listings"  # names a front serve_listings wrote
CANARY_ENV = "SCHEDULER_BUILD_TEST_CANARY"  # set by `inv test --canary`: the suite follows the live proxy
HEADER = """\
# The Kubernetes versions the test suite builds (testkit/versions.py), pinned so that no upstream
# release changes what `inv test` and .ci/run build. Rewritten from the Go module proxy by
# `inv bump-test-versions` (commit that on its own); `inv test --canary` builds what the proxy serves now
# and says what is new. See docs/development.md.
"""


@dataclass(frozen=True)
class Versions:
    default: str  # the default build's exact release (the suite's built_scheduler, the e2e API server)
    served: dict[str, str]  # minor -> the patch the served-minor tests compile, oldest first
    listings: dict[str, list[str]] = field(default_factory=dict)  # module -> the proxy's listing

    @property
    def default_minor(self) -> str:
        return versions.minor_of(self.default)

    @property
    def newest(self) -> str:
        """The newest served minor's release."""
        return list(self.served.values())[-1]


def canary() -> bool:
    return os.environ.get(CANARY_ENV, "") not in ("", "0")


def load(path: Path = PINNED) -> Versions:
    doc = yaml.safe_load(path.read_text())
    return Versions(default=doc["default"], served={str(k): v for k, v in doc["served"].items()},
                    listings={module: list(listed) for module, listed in doc["listings"].items()})


def from_listings(listings: dict[str, list[str]], default_minor: str) -> Versions:
    """Pure: the versions a set of proxy listings gives, the default keeping its minor (a deliberate choice)."""
    known = listings[versions.KUBERNETES_MODULE]
    newest = versions.newest_patches(known)
    served = {minor: newest[minor] for minor in reversed(versions.supported_minors(known))}
    if default_minor not in served:
        raise ValueError(f"the default minor {default_minor} is no longer served ({', '.join(served)}): "
                         f"pick a served one in {PINNED.name} and examples/underlay/scheduler.yaml")
    return Versions(default=served[default_minor], served=served, listings=listings)


def live(default_minor: str) -> Versions:
    """What the Go module proxy serves now (the real proxy, not the pinned listings in front of it)."""
    return from_listings({module: sorted(goproxy.list_versions(module), key=versions.semver_key)
                          for module in LISTED}, default_minor)


def current() -> Versions:
    """The versions this run of the suite builds: the pinned file, or under the canary the live proxy."""
    pinned = load()
    return live(pinned.default_minor) if canary() else pinned


def dump(found: Versions) -> str:
    head = yaml.safe_dump({"default": found.default, "served": found.served}, sort_keys=False,
                          default_flow_style=False)
    listings = yaml.safe_dump({"listings": found.listings}, sort_keys=False, default_flow_style=None, width=100)
    return HEADER + head + "# the proxy's listings when pinned: the suite resolves through these (serve_listings)\n" + listings


def changes(pinned: Versions, now: Versions) -> list[str]:
    """One line per difference between the pinned versions and the proxy's now (empty: nothing new)."""
    out = []
    for minor in now.served:
        if minor not in pinned.served:
            out.append(f"new minor {minor}: {now.served[minor]}")
        elif now.served[minor] != pinned.served[minor]:
            out.append(f"new patch of {minor}: {now.served[minor]} (pinned {pinned.served[minor]})")
    out += [f"minor {minor} is no longer served (pinned {pinned.served[minor]})"
            for minor in pinned.served if minor not in now.served]
    if now.default != pinned.default:
        out.append(f"default: {now.default} (pinned {pinned.default})")
    for module, listed in now.listings.items():
        added = [v for v in listed if v not in pinned.listings.get(module, [])]
        if added:
            out.append(f"{module} lists {len(added)} new version(s): {', '.join(added)}")
    return out


def serve_listings(found: Versions, directory: Path | None = None) -> str:
    """Write `found`'s listings in GOPROXY's file layout and put it first in GOPROXY (this process and its
    children). The real proxy stays behind it for everything else. Returns the new GOPROXY."""
    from scheduler_build.golang import gotool

    if directory is None:
        directory = Path(tempfile.mkdtemp(prefix="sb-pinned-proxy-"))
        atexit.register(shutil.rmtree, directory, True)  # made here: removed when this process ends
    root = Path(directory)
    for module, listed in found.listings.items():
        target = root / goproxy._escape(module) / "@v"
        target.mkdir(parents=True, exist_ok=True)
        (target / "list").write_text("".join(f"{v}\n" for v in listed))
    (root / MARKER).write_text("")
    # a front a parent run put there (pytest started by a test) is replaced, any other proxy kept behind
    upstream = [entry for entry in gotool.proxy_setting().split(",")
                if not (entry.startswith("file://") and (Path(entry[len("file://"):]) / MARKER).is_file())]
    os.environ["GOPROXY"] = ",".join([f"file://{root}", *upstream])
    return os.environ["GOPROXY"]
