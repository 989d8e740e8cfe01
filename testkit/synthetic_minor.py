"""A synthetic next Kubernetes minor, served by a local file-based Go module proxy (issue 27, Day-0).

The newest served release (say v1.37.2) and every staging module its go.mod replaces are renumbered
to the next minor (v1.38.0 and v0.38.0): each module zip is rewritten under the new module@version
prefix, and each go.mod requires a Go one minor newer than the host's (its staging requirements
renumbered too). The Go toolchain module of that minor is served beside them, linked from the real
module cache after one download through the real proxy (verified against the checksum database).

The renumbered k8s.io/kube-scheduler carries the real next framework's plugin-API changes (issue 41),
and k8s.io/kubernetes follows them, with a removed feature gate (testkit/next_framework.py).

GOPROXY is then `file://<synthetic>,file://<real module cache>/cache/download,<the real proxy>`:
the synthetic modules come first, everything else from what the machine already downloaded. A
module cache (GOMODCACHE) and a toolkit cache (paths.cache_dir) of the test's own keep the synthetic
v1.38.0 out of the real ones, where it would collide with the real release. They are kept under
<cache>/test-day0/<key> (a second run neither rewrites the zips nor unpacks the modules again),
except the newer Go's toolchain, which every run fetches through the proxy afresh.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from scheduler_build.golang import gotool
from scheduler_build.golang import toolchain
from scheduler_build.errors import UserError
from scheduler_build.resolve import gomod, versions
from testkit import next_framework

STAGING_PREFIX = "./staging/src/"
FORMAT = "3"  # bump when the synthetic proxy's layout changes
COMPLETE = ".complete"


@dataclass(frozen=True)
class Synthetic:
    source: str  # the real release it is made from, e.g. v1.37.2
    version: str  # the synthetic one, e.g. v1.38.0
    go: str  # its go line, e.g. 1.27.0
    toolchain: str  # the Go it is bootstrapped with, e.g. 1.27.3
    staging: tuple[str, ...]  # the renumbered staging modules
    env: dict[str, str]  # GOPROXY, GONOSUMDB, GOMODCACHE, the toolkit cache

    @property
    def minor(self) -> str:
        return versions.minor_of(self.version)


def next_version(version: str) -> str:
    """v1.37.2 -> v1.38.0."""
    major, minor, _ = version.lstrip("v").split(".")
    return f"v{major}.{int(minor) + 1}.0"


def staging_version(version: str) -> str:
    """v1.38.0 -> v0.38.0 (the staging modules' numbering)."""
    return "v0." + version.lstrip("v").split(".", 1)[1]


def newer_go(source_go: str) -> tuple[str, str] | None:
    """(go line, toolchain release) one minor above the host's Go (or the release's own go line, when
    newer), from the real proxy; None if it serves none."""
    host = toolchain.parse(toolchain.host().version)
    wanted = max((host[0], host[1] + 1), toolchain.parse(source_go)[:2])
    listed = toolchain.listed_versions(wanted)
    return (f"{wanted[0]}.{wanted[1]}.0", listed[-1]) if listed else None


def edit_gomod(text: str, go: str, renumber: dict[str, tuple[str, str]]) -> str:
    """The go line set to `go`; each `module old` requirement in `renumber` given its new version."""
    text = re.sub(r"(?m)^go \d+\.\d+(\.\d+)?$", f"go {go}", text)
    text = re.sub(r"(?m)^toolchain .*\n", "", text)
    for module, (old, new) in renumber.items():
        text = re.sub(rf"(?m)^(\s*(?:require\s+)?){re.escape(module)} {re.escape(old)}(\s|$)", rf"\g<1>{module} {new}\2", text)
    return text


def rewrite_zip(src: Path, dst: Path, module: str, old: str, new: str, go_mod: bytes,
                patch: next_framework.Patch | None = None) -> None:
    """The module zip under `module@new/`, its go.mod replaced by `go_mod`, each file through `patch`
    (path in the module, bytes -> bytes; next_framework.py) when given."""
    old_prefix, new_prefix = f"{module}@{old}/", f"{module}@{new}/"
    tmp = dst.with_suffix(".tmp")
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zout:
        for info in zin.infolist():
            rel = info.filename[len(old_prefix):]
            name = new_prefix + rel
            data = go_mod if name == new_prefix + "go.mod" else zin.read(info)
            if patch is not None and rel != "go.mod":
                data = patch(rel, data)
            out = zipfile.ZipInfo(name, info.date_time)
            out.external_attr, out.compress_type = info.external_attr, zipfile.ZIP_DEFLATED
            zout.writestr(out, data, compresslevel=1)
    os.replace(tmp, dst)


def publish(proxy: Path, module: str, old: str, new: str, go: str, renumber: dict[str, tuple[str, str]],
            listed: list[str] | None = None, patch: next_framework.Patch | None = None) -> None:
    """module@old from the real module cache, renumbered to `new`, into the file proxy."""
    found = gotool.mod_download(module, old)
    at = proxy / module / "@v"
    at.mkdir(parents=True, exist_ok=True)
    go_mod = edit_gomod(Path(found["GoMod"]).read_text(), go, renumber)
    (at / f"{new}.mod").write_text(go_mod)
    info = json.loads(Path(found["Info"]).read_text())
    (at / f"{new}.info").write_text(json.dumps({"Version": new, "Time": info.get("Time", "")}))
    rewrite_zip(Path(found["Zip"]), at / f"{new}.zip", module, old, new, go_mod.encode(), patch)
    (at / "list").write_text("\n".join([*(listed or []), new]) + "\n")


def serve_toolchain(proxy: Path, release: str) -> None:
    """Go's toolchain module of `release` (downloaded and verified through the real proxy) into the file proxy."""
    name = toolchain.module_version(release)
    found = gotool.mod_download(toolchain.MODULE, name)
    at = proxy / toolchain.MODULE / "@v"
    at.mkdir(parents=True, exist_ok=True)
    for kind in ("info", "mod", "zip"):
        link = at / f"{name}.{kind}"
        if not link.exists():
            link.symlink_to(found[{"info": "Info", "mod": "GoMod", "zip": "Zip"}[kind]])
    (at / "list").write_text(name + "\n")


def build(cache_root: Path, source: str, listed: list[str]) -> Synthetic | None:
    """The synthetic next minor of the real release `source`, kept under <cache>/test-day0/<key> (the
    proxy and the test's module cache: made once per key); None if no newer Go is served. The newer Go's
    toolchain is removed from the test's module cache each time, so every run fetches it through the proxy."""
    k8s_mod = gomod.parse(Path(gotool.mod_download(versions.KUBERNETES_MODULE, source)["GoMod"]).read_text())
    go = newer_go(k8s_mod.go)
    if go is None:
        return None
    go_line, release = go
    new = next_version(source)
    staging = tuple(sorted(m for m, (path, _) in k8s_mod.replaces.items() if path.startswith(STAGING_PREFIX)))
    key = hashlib.sha256(repr((FORMAT, source, go_line, release, sorted(listed))).encode()).hexdigest()[:16]
    root = Path(cache_root) / "test-day0" / key
    if not (root / "proxy" / COMPLETE).is_file():
        _make_proxy(root, source, new, go_line, release, staging, listed)
    forget(root / "gomodcache", f"{toolchain.MODULE}@{toolchain.module_version(release)}")
    real_cache = gotool.env_value("GOMODCACHE")
    env = {
        "GOPROXY": f"file://{root / 'proxy'},file://{real_cache}/cache/download,{gotool.proxy_setting()}",
        "GONOSUMDB": ",".join((versions.KUBERNETES_MODULE, *staging)),  # the checksum database does not know them
        "GOMODCACHE": str(root / "gomodcache"),
        "SCHEDULER_BUILD_PATHS_CACHE_DIR": str(root / "cache"),
    }
    return Synthetic(source, new, go_line, release, staging, env)


def _make_proxy(root: Path, source: str, new: str, go_line: str, release: str, staging: tuple[str, ...],
                listed: list[str]) -> None:
    """The file proxy, built beside its place and renamed into it (a concurrent run keeps the first)."""
    root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".proxy-", dir=root))
    try:
        renumber = {m: (staging_version(source), staging_version(new)) for m in staging}
        publish(tmp, versions.KUBERNETES_MODULE, source, new, go_line, renumber, listed, next_framework.kubernetes_patch)
        real = next_framework.real_framework_dir()  # the real next framework, applied to the renumbered tree
        for module in staging:
            patch = next_framework.staging_patch(real) if module == next_framework.REAL_MODULE else None
            try:
                publish(tmp, module, staging_version(source), staging_version(new), go_line, renumber, patch=patch)
            except UserError:  # refused by the proxy (sample-cli-plugin, ...): no build needs it, as for the real release
                continue
        serve_toolchain(tmp, release)
        (tmp / COMPLETE).write_text("")
        shutil.rmtree(root / "proxy", ignore_errors=True)  # an interrupted earlier attempt
        os.rename(tmp, root / "proxy")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def forget(modcache: Path, module_at_version: str) -> None:
    """Remove one module version from a module cache (read-only directories, as Go leaves them)."""
    module, version = module_at_version.split("@", 1)
    tree = modcache / module_at_version
    for directory, _, _ in os.walk(tree):
        os.chmod(directory, 0o755)
    shutil.rmtree(tree, ignore_errors=True)
    for item in (modcache / "cache" / "download" / module / "@v").glob(f"{version}.*"):
        item.unlink()
