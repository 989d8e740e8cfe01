"""What an image build packages: the spec (or flags), the binaries dist/ holds, tags and labels.

The image stage reads the build's output (dist/<name>/<version>/<os>-<arch>/, with
its build-info.json) and never builds: a missing platform is a UserError naming
the command that builds it (the task layer may run that build first, visibly).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path

from scheduler_build import epoch as epoch_mod
from scheduler_build import platforms
from scheduler_build import spec as spec_mod
from scheduler_build.build.info import FILE_NAME, BuildInfo, sha256_file
from scheduler_build.errors import UserError
from scheduler_build.image import sbom
from scheduler_build.image.gomodules import Patch, SbomInputs
from scheduler_build.resolve import versions

LABEL_PREFIX = "org.scheduler-build"
_TAG_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$")
_SEMVER_IDENT = re.compile(r"^[0-9A-Za-z-]+$")


@dataclass(frozen=True)
class Options:
    """What to package, every value already decided (commands.image._options, by settings.decide):
    the stage applies no precedence of its own, only what an empty value means."""

    spec: spec_mod.Spec | None  # loaded once by the task (commands._common.load_spec)
    k8s_version: str  # the version asked for: a minor, a release or latest
    k8s_flag: bool  # given on the command line (the build command it suggests repeats it)
    platforms: str  # empty: the host's
    name: str
    spec_version: str
    version_flag: bool  # given on the command line: the spec's image.tag no longer applies
    repository: str  # empty: scheduler-build/<name>
    dist_dir: Path
    cache_dir: Path
    source_date_epoch: str
    licenses: str
    source: str
    force: bool
    debuggable: bool = False  # dist/<name>-debuggable (build --debuggable), tagged -debug (docs/explain.md)


@dataclass
class PlatformInput:
    platform: str  # linux/amd64
    arch: str
    binary: Path
    build_info: BuildInfo


@dataclass
class ImageRequest:
    name: str
    k8s_version: str  # resolved, e.g. v1.36.3
    spec_version: str
    repository: str  # local repository, e.g. scheduler-build/kube-scheduler
    inputs: list[PlatformInput]
    source_date_epoch: int
    dist_dir: Path
    source: str  # org.opencontainers.image.source; empty: "unknown"
    revision: str  # git commit; empty outside git
    dirty: bool
    licenses: str
    force: bool
    base_tag: str  # the spec's image.tag; empty: <k8s-version>-<spec-version>
    spec_sha256: str  # of the spec file's bytes (the provenance's external parameters); empty without a spec
    spec_dir: Path | None  # local sources are named relative to it (provenance, SBOMs); None without a spec
    sbom_inputs: SbomInputs  # the spec's supplier and author, the patch series


# --- platforms, versions, tags, git --------------------------------------------------


def parse_platforms(text: str) -> list[tuple[str, str]]:
    """'linux/amd64,linux/arm64' -> [('linux/amd64', 'amd64'), ...] (platforms.SUPPORTED only).

    A variant (linux/arm64/v8) is accepted and dropped: the image carries the one Go builds.
    """
    items = ["/".join(p.strip().split("/")[:2]) for p in str(text).split(",")]
    return [(f"{platforms.OS}/{arch}", arch) for arch in platforms.parse_list(",".join(items), "--platforms")]


def check_spec_version(version: str) -> str:
    """A SemVer-safe version for tags: dot-separated [0-9A-Za-z-], no '+', no leading zeros."""
    version = str(version).strip().lstrip("v")
    if "+" in version:
        raise UserError(f"version {version!r} contains '+', which image tags cannot carry", "use a pre-release form, e.g. 1.2.0-acme.1")
    if not version or not all(_SEMVER_IDENT.match(part) for part in version.split(".")):
        raise UserError(f"version {version!r} is not dot-separated alphanumerics", "e.g. 0.1.0 or 1.2.0-rc.1")
    for part in version.split("-")[0].split("."):
        if part.isdigit() and len(part) > 1 and part.startswith("0"):
            raise UserError(f"version {version!r} has a numeric part with a leading zero ({part!r})", "SemVer forbids it, e.g. 1.2.0 not 1.02.0")
    return version


def tags_for(k8s_version: str, spec_version: str, short_sha: str, dirty: bool, base_tag: str = "") -> list[str]:
    """['v1.36.3-0.1.0', 'v1.36.3-0.1.0-gabc1234[-dirty]']: SemVer pre-release forms, no '+'."""
    if base_tag and "+" in base_tag:
        raise UserError(f"image.tag {base_tag!r} contains '+', which image tags cannot carry", "use a pre-release form, e.g. v1.36.3-acme.1")
    base = base_tag or f"{k8s_version}-{check_spec_version(spec_version)}"
    tags = [base]
    if short_sha:
        tags.append(f"{base}-g{short_sha}{'-dirty' if dirty else ''}")
    for tag in tags:
        if not _TAG_RE.match(tag):
            raise UserError(f"image tag {tag!r} is not a valid tag", "tags are [A-Za-z0-9_.-], at most 128 characters")
    return tags


def git_state(cwd: Path | None = None) -> tuple[str, str, bool, str]:
    """(full sha, short sha, dirty, origin URL without credentials); empty outside git."""

    def git(*args: str) -> str:
        proc = subprocess.run(["git", *args], capture_output=True, text=True, cwd=cwd)
        return proc.stdout.strip() if proc.returncode == 0 else ""

    full = git("rev-parse", "HEAD")
    if not full:
        return "", "", False, ""
    short = git("rev-parse", "--short=7", "HEAD")
    dirty = bool(git("status", "--porcelain", "--untracked-files=no"))
    return full, short, dirty, strip_userinfo(git("remote", "get-url", "origin"))


def strip_userinfo(url: str) -> str:
    """https://user:token@host/x -> https://host/x: a remote's credentials never reach a label."""
    return re.sub(r"^([a-z][a-z0-9+.-]*://)[^/@]*@", r"\1", url.strip(), flags=re.I)


# --- labels ------------------------------------------------------------------------------


def patch_digest(build_info: BuildInfo) -> str:
    """The patch series' digest the build recorded (sha256 of nothing for an unpatched build)."""
    return build_info.patch_series_digest


def labels_for(req: ImageRequest, item: PlatformInput, go_version: str, sbom_sha: str, version_tag: str) -> dict[str, str]:
    return {
        "org.opencontainers.image.source": req.source or "unknown",
        "org.opencontainers.image.revision": (req.revision + ("-dirty" if req.dirty else "")) if req.revision else "unknown",
        "org.opencontainers.image.version": version_tag,
        "org.opencontainers.image.created": epoch_mod.utc_stamp(req.source_date_epoch),
        "org.opencontainers.image.title": req.name,
        "org.opencontainers.image.licenses": req.licenses,
        f"{LABEL_PREFIX}.kubernetes.version": req.k8s_version,
        f"{LABEL_PREFIX}.go.version": go_version,
        f"{LABEL_PREFIX}.patches.digest": patch_digest(item.build_info),
        f"{LABEL_PREFIX}.binary.sha256": item.build_info.binary.sha256,
        f"{LABEL_PREFIX}.sbom.sha256": sbom_sha,
        f"{LABEL_PREFIX}.sbom.media-type": sbom.MEDIA_TYPE,
        **({f"{LABEL_PREFIX}.debuggable": "true"} if item.build_info.debuggable else {}),
    }


# --- inputs: the spec (or flags) and the binaries under dist/ -------------------------------


@dataclass
class Plan:
    """The spec and flags resolved: what to package and where dist/ holds each platform."""

    opts: Options
    spec: spec_mod.Spec | None
    requested: str  # the Kubernetes version asked for (a minor, a release, latest)
    version: str  # resolved release, e.g. v1.36.3
    name: str
    spec_version: str
    repository: str
    platforms: list[tuple[str, str]]

    def platform_dir(self, arch: str) -> Path:
        return platforms.dist_dir_for(Path(self.opts.dist_dir).resolve(), self.name, self.version, arch)

    def missing(self) -> list[tuple[str, str]]:
        """The (platform, arch) pairs dist/ holds no build of."""
        return [(plat, arch) for plat, arch in self.platforms if not (self.platform_dir(arch) / FILE_NAME).is_file()]

    def build_command(self, arch: str) -> str:
        """The `inv build` that puts this platform's binary where the image stage reads it."""
        args = ["inv", "build"]
        if self.spec is not None:
            args += ["--spec", str(self.spec.path)]
            if self.opts.k8s_flag:
                args += ["--k8s-version", self.opts.k8s_version]
        else:
            args += ["--no-spec", "--k8s-version", self.requested]
        if self.opts.debuggable:
            args += ["--debuggable"]
        elif self.name != (self.spec.name if self.spec is not None else "kube-scheduler"):
            args += ["--name", self.name]
        if Path(self.opts.dist_dir) != Path("dist"):
            args += ["--dist", str(self.opts.dist_dir)]
        return shlex.join(args + ["--arch", arch])


def plan(opts: Options, host_arch: str) -> Plan:
    """What to package from the decided options (only what an empty value means); reads no binary."""
    if not opts.k8s_version:
        raise UserError("no Kubernetes version to package", "pass --k8s-version or set k8s.version")
    parsed = parse_platforms(opts.platforms or f"linux/{host_arch}")
    spec_version = check_spec_version(opts.spec_version)
    repository = opts.repository or spec_mod.default_repository(opts.name)
    version = versions.resolve(opts.k8s_version, opts.cache_dir).version
    return Plan(opts, opts.spec, opts.k8s_version, version, opts.name, spec_version, repository, parsed)


def read_input(planned: Plan, plat: str, arch: str) -> PlatformInput:
    """One platform's binary and record from dist/; a missing or stale one is a UserError."""
    platform_dir = planned.platform_dir(arch)
    info_path = platform_dir / FILE_NAME
    if not info_path.is_file():
        raise UserError(f"no {plat} build of {planned.name} {planned.version} at {platform_dir}",
                        f"build it first: `{planned.build_command(arch)}` (or `inv image.build`, which builds missing platforms)")
    info = BuildInfo.from_file(info_path)
    binary = platform_dir / info.component
    if not binary.is_file():
        raise UserError(f"{info_path} names {binary.name}, which is missing", f"rebuild with `{planned.build_command(arch)}`")
    if sha256_file(binary) != info.binary.sha256:
        # The skip decision and the labels trust build-info: make sure it describes this binary.
        raise UserError(f"{binary} does not match the sha256 in {info_path} (changed after the build?)",
                        f"rebuild with `{planned.build_command(arch)}`")
    return PlatformInput(plat, arch, binary, info)


def check_inputs_agree(inputs: list[PlatformInput]) -> None:
    """Binaries built on other machines (a release's per-platform jobs) must come from the same inputs."""
    first = inputs[0]
    for item in inputs[1:]:
        for what, get in (("Kubernetes version", lambda i: i.build_info.kubernetes.stamped_version),
                          ("patch series", lambda i: i.build_info.patch_series_digest),
                          ("recorder", lambda i: i.build_info.debuggable),
                          ("plugins", lambda i: [_where_free(p.to_dict()) for p in i.build_info.plugins])):
            if get(item) != get(first):
                raise UserError(f"{item.platform} was built with {what} {get(item)} but {first.platform} with {get(first)}",
                                "rebuild every platform from the same spec and sources")


def _where_free(plugin: dict) -> dict:
    """A plugin's identity without its local path: each job of a release checks the sources out at a
    path of its own, and the content digest already says whether they are the same."""
    return {key: value for key, value in plugin.items() if key != "path"}


def prepare(planned: Plan) -> ImageRequest:
    """Read each planned platform's binary from dist/ and return the request (no second spec load or resolve)."""
    opts = planned.opts
    inputs = [read_input(planned, plat, arch) for plat, arch in planned.platforms]
    check_inputs_agree(inputs)
    chosen = epoch_mod.chosen(str(opts.source_date_epoch or "").strip())
    # Without one: the binary's own build date, the image is as old as what it ships.
    epoch = chosen if chosen is not None else inputs[0].build_info.source_date_epoch
    spec = planned.spec
    full, _short, dirty, origin = git_state(spec.path.parent if spec else None)
    return ImageRequest(
        name=planned.name, k8s_version=planned.version, spec_version=planned.spec_version, repository=planned.repository,
        inputs=inputs, source_date_epoch=epoch, dist_dir=Path(opts.dist_dir), source=opts.source or origin,
        revision=full, dirty=dirty, licenses=opts.licenses, force=opts.force,
        base_tag=(spec.image.tag if spec is not None and spec.image.tag and not opts.version_flag else ""),
        spec_sha256=sha256_file(spec.path) if spec is not None else "",
        spec_dir=spec.path.parent if spec is not None else None, sbom_inputs=sbom_inputs(spec, inputs[0].build_info),
    )


def sbom_inputs(spec: spec_mod.Spec | None, info: BuildInfo) -> SbomInputs:
    """The spec's supplier and author, and the compiled patch series (diffs from the spec's files, which must
    be the bytes the build applied; without a spec, only the names and digests the build recorded)."""
    by_name = {path.name: path for path in (spec.patches if spec is not None else ())}
    patches = []
    for recorded in info.patches:
        modules = tuple(sorted({_target_module(t) for t in recorded.targets}))
        path = by_name.get(recorded.file)
        if path is None:
            patches.append(Patch(recorded.file, recorded.sha256, modules=modules))
            continue
        if sha256_file(path) != recorded.sha256:
            raise UserError(f"{path} changed since the build (the binary was patched with sha256 {recorded.sha256[:12]}...)",
                            "rebuild with `inv build --spec ...` so the SBOMs describe the patch that was compiled")
        uri = os.path.relpath(path, spec.path.parent).replace(os.sep, "/")
        patches.append(Patch(recorded.file, recorded.sha256, uri, path.read_text(encoding="utf-8", errors="replace"), modules))
    if spec is None:
        return SbomInputs(patches=tuple(patches))
    return SbomInputs(supplier=spec.sbom.supplier, author=spec.sbom.author, patches=tuple(patches))


def _target_module(target: str) -> str:
    """The module of a patch target `k8s.io/<module>/<path in it>` (build-info's `targets`)."""
    return "/".join(str(target).split("/")[:2])
