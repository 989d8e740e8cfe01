"""build: compile kube-scheduler (or another component) hermetically in a golang container."""

from invoke import Collection, task

from scheduler_build import platforms
from scheduler_build.config import batching_key, render
from scheduler_build.config import validate as config_validate
from scheduler_build.build import patches
from scheduler_build.build import pipeline as build_stage
from scheduler_build.errors import UserError
from scheduler_build.inputs.build import BuildInputs, build_inputs
from scheduler_build.inputs.common import cache_dir
from scheduler_build.progress import log
from scheduler_build.commands._common import emit, emit_json, load_spec, user_errors
from scheduler_build.settings import flag_help


@task(
    default=True,
    auto_shortflags=False,  # with many flags invoke's generated short ones collide (`--, --no-pull`)
    help={
        "k8s-version": flag_help("k8s.version", after="; a plain build unless --spec is given too", spec="kubernetes.version"),
        "arch": flag_help("build.arch", otherwise="the host architecture"),
        "os": flag_help("build.os"),
        "component": flag_help("build.component"),
        "name": flag_help("build.name", spec="name"),
        "cgo-static": flag_help("build.cgo_static"),
        "builder-image": flag_help("builder.image"),
        "go": flag_help("builder.go"),
        "no-pull": flag_help("builder.pull", before="turn off: "),
        "dist": flag_help("paths.dist_dir"),
        "source-date-epoch": flag_help("build.source_date_epoch", otherwise="$SOURCE_DATE_EPOCH, else the release time"),
        "version-suffix": flag_help("build.version_suffix", spec="versionSuffix"),
        "gocache-volume": flag_help("build.gocache_volume"),
        "json": "print build-info.json on stdout instead of the binary path",
        "spec": flag_help("spec.path", after="; --no-spec, --k8s-version or --component alone build a plain kube-scheduler"),
        "no-spec": "plain build: no plugins, no patches, even with spec.path set",
        "all-platforms": flag_help("build.all_platforms"),
        "cache-from": flag_help("build.cache_from"),
        "cache-to": flag_help("build.cache_to"),
        "debuggable": flag_help("build.debuggable"),
        "pgo": flag_help("build.pgo", spec="pgo"),
    },
)
@user_errors
def build(c, k8s_version=None, arch=None, os=None, component=None, name=None, cgo_static=False,
          builder_image=None, no_pull=False, dist=None, source_date_epoch=None, version_suffix=None,
          gocache_volume=None, json=False, spec=None, no_spec=False, all_platforms=False, cache_from=None, cache_to=None,
          debuggable=False, go=None, pgo=None):
    """Build a static, version-stamped kube-scheduler in a golang container with no network.

    With a build spec (the default: the bundled example), its out-of-tree plugins and
    patch series are compiled into the same hermetic build.
    """
    decided = build_inputs(c, spec=spec, no_spec=no_spec, all_platforms=all_platforms, k8s_version=k8s_version,
                           arch=arch, os=os, component=component, name=name, cgo_static=cgo_static,
                           builder_image=builder_image, no_pull=no_pull, dist=dist, source_date_epoch=source_date_epoch,
                           version_suffix=version_suffix, gocache_volume=gocache_volume, cache_from=cache_from,
                           cache_to=cache_to, debuggable=debuggable, go=go, pgo_profile=pgo)
    results = [build_stage.run(request) for request in decided.requests]
    if decided.spec is not None:
        _batching_summary(decided, results)
    if json:
        infos = [r.info.to_dict() for r in results]
        emit_json(infos[0] if len(infos) == 1 else infos)
    else:
        emit("\n".join(str(r.binary) for r in results))


def _batching_summary(decided: BuildInputs, results) -> None:
    """Whether each profile keeps opportunistic batching, from the binary just built (on stderr). Its verdict
    is kept per what it depends on (config/batching_key.py), not per binary: a plugin edit that keeps every
    method and signature reuses it rather than running the new binary once more."""
    for result in results:
        if result.info.arch != platforms.host_arch() or result.binary.name != "kube-scheduler":
            continue
        lines = config_validate.batching_summary(
            result.binary, lambda: batching_key.depends_on(result.binary, result.info, decided.cache_dir),
            render.config_text(decided.spec), result.info.builder.image, result.info.kubernetes.version,
            decided.cache_dir, decided.spec.feature_gates)
        for line in lines:
            log(line)
        return


@task(
    name="check-patches",
    help={
        "spec": flag_help("spec.path", after="; its patch series is checked"),
        "k8s-version": "check against this Kubernetes version instead of the spec's, e.g. 1.37 before an upgrade",
        "json": "print the per-patch report as JSON",
    },
)
@user_errors
def check_patches(c, spec=None, k8s_version=None, json=False):
    """Dry-run the spec's patch series against a Kubernetes version; nothing is written."""
    loaded = load_spec(c, spec)
    if loaded is None:
        raise UserError("no build spec to check", "pass --spec PATH or set spec.path")
    version = k8s_version or loaded.kubernetes_version
    report = patches.check_series(loaded.path, list(loaded.patches), version, cache_dir(c))
    if json:
        emit_json(report.to_dict())
    else:
        lines = [f"kubernetes {report.kubernetes}: {len(report.patches)} patch(es) apply cleanly"]
        for entry in report.patches:
            moved = [o for o in entry.offsets if o]
            lines.append(f"  ok  {entry.file}  {entry.hunks} hunk(s) in {len(entry.targets)} file(s)"
                         + (f", offsets {moved}" if moved else ""))
        emit("\n".join(lines))


ns = Collection("build", build, check_patches)
