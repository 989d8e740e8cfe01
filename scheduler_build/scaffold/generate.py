"""`inv scaffold.plugin`: generate an out-of-tree scheduling-framework plugin module.

Everything that depends on the Kubernetes version is read from that release's own framework
source (resolve.framework_surface): where the framework types live (`framework_api`) and every
method's exact signature (scaffold.signatures renders them into the templates), so a new minor
needs no code change. The exact release is resolved through versions.resolve(), so the generated
go.mod pins the same staging replaces a build of that version uses.

Validation happens before anything is written; the module is rendered (and
tidied) in a temporary sibling of the output directory and renamed into place;
into an existing directory only files an earlier scaffold wrote are replaced
(scaffold/manifest.py keeps the manifest).
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from scheduler_build.resolve import framework_surface, intree, vocabulary
from scheduler_build.resolve import versions
from scheduler_build.resolve.framework_surface import FrameworkSurface
from scheduler_build.errors import UserError
from scheduler_build.golang import gotool
from scheduler_build.golang import toolchain
from scheduler_build.scaffold import framework_points, handle_fake, manifest, signatures
from scheduler_build.scaffold.inputs import (POINT_KEYS, Point, check_out_dir, parse_points, points_of,  # noqa: F401
                                             split_points, validate_module, validate_name)
from scheduler_build.atomic import staging_dir
from scheduler_build.progress import log
from scheduler_build.templating import render



@dataclass(frozen=True)
class FrameworkAPI:
    """Where the framework's types live, for one release, as read from its source (framework_surface)."""

    version: str
    split: bool  # Plugin/Handle/results still in k8s.io/kubernetes/pkg/scheduler/framework
    types: dict[str, str] = field(default_factory=dict)  # Handle -> fwk.Handle (or framework.Handle)


def framework_api(surface: FrameworkSurface) -> FrameworkAPI:
    """The layout the templates need, from the release's own framework source: no table by minor."""
    if framework_surface.STAGING_PACKAGE not in surface.homes.values() or "FilterPlugin" not in surface.interfaces:
        raise UserError(f"the scaffold's templates need the {framework_surface.STAGING_PACKAGE} package with the "
                        f"plugin interfaces, which Kubernetes {surface.version} does not have",
                        "use --k8s-version 1.34 or newer")
    names = ("Plugin", "Handle", "PreFilterResult", "PostFilterResult", "NodeToStatusReader", "NodeScoreList",
             "PreFilterExtensions", "ScoreExtensions", "SignPlugin", *(p.interface for p in points_of(surface)))
    types = {name: f"{surface.home_alias(name)}.{name}" for name in names}
    return FrameworkAPI(version=surface.version, split=surface.homes.get("Plugin") == framework_surface.KUBERNETES_PACKAGE,
                        types=types)


def check_name_free(name: str, version: str, cache_dir: Path, fetch: bool) -> None:
    """A plugin named like an in-tree one makes the scheduler refuse to start. The names come from
    the cache, or (`fetch`) from the Kubernetes source that `go mod tidy` downloads anyway."""
    names = intree.in_tree_plugins(version, cache_dir) if fetch else intree.cached_in_tree_plugins(version, cache_dir)
    if names and name in names:
        raise UserError(f"--name {name!r} is an in-tree plugin of Kubernetes {version}",
                        f"choose another name, e.g. Acme{name}")


@dataclass
class ScaffoldRequest:
    name: str
    points: str
    module: str
    k8s_version: str
    out: Path
    cache_dir: Path
    force: bool = False
    tidy: bool = True
    dry_run: bool = False  # plan only: what would be created, replaced, removed, kept


@dataclass
class ScaffoldResult:
    out: Path
    k8s_version: str
    package: str  # Go import path of the plugin package
    files: list[str]
    plan: manifest.Plan | None = None


def _imports(groups: list[list[str]]) -> list[list[str]]:
    """Sorted, deduplicated import groups (stdlib first), as gofmt keeps them."""
    return [sorted(set(g), key=lambda s: s.split('"')[1]) for g in groups if g]


_FWK_IMPORT = '\tfwk "k8s.io/kube-scheduler/framework"'
_FRAMEWORK_IMPORT = '\t"k8s.io/kubernetes/pkg/scheduler/framework"'
_TEMPLATES = "scaffold/"


def render_files(name: str, points: tuple[str, ...], module: str, resolution: versions.Resolution,
                 surface: FrameworkSurface, config_points: tuple[str, ...] = ()) -> tuple[dict[str, str], str]:
    """Pure: the module's files (path -> text) and the plugin's import path; `surface` is the target's
    framework as read from its source (framework_surface), which decides SignPod and MaxScore;
    `config_points` its configuration API's plugin sets, which (with `surface`) give the points
    beyond the templated ones (framework_points)."""
    context = _context(name, points, module, resolution, surface, config_points)
    package = context["package"]
    files = {
        "go.mod": render(_TEMPLATES + "go.mod.j2", **context),
        f"pkg/{package}/{package}.go": render(_TEMPLATES + "plugin.go.j2", **context),
        f"pkg/{package}/args.go": render(_TEMPLATES + "args.go.j2", **context),
        f"pkg/{package}/{package}_test.go": render(_TEMPLATES + "plugin_test.go.j2", **context),
        f"pkg/{package}/handle_fake_test.go": render(_TEMPLATES + "handle_fake_test.go.j2", **context),
        "cmd/scheduler/main.go": render(_TEMPLATES + "main.go.j2", **context),
        "config/scheduler-config.yaml": _sample_config(name, context["chosen"] + context["generic"],
                                                       context["scheduler_name"]),
        "README.md": render(_TEMPLATES + "README.md.j2", **context),
    }
    return files, context["import_path"]


def _context(name: str, points: tuple[str, ...], module: str, resolution: versions.Resolution,
             surface: FrameworkSurface, config_points: tuple[str, ...]) -> dict:
    """What the templates see: names, the chosen points, the minor's framework API, the pinned versions."""
    api = framework_api(surface)
    further = framework_points.available(surface, config_points, POINT_KEYS, name)
    generic = [further[k] for k in points if k in further]
    points = tuple(k for k in points if k in POINT_KEYS)
    has = {k: (k in points) for k in POINT_KEYS}
    package = name.lower()
    owner = api.types["Plugin"].split(".")[0]
    # The points whose plugins the framework asks to sign (read from its docs, not listed here); the
    # placeholder policy reads the pod only at those, so reads_pod and sign go together.
    templated = points_of(surface)
    missing = [k for k in points if k not in {p.key for p in templated}]
    if missing:
        raise UserError(f"the framework of Kubernetes {surface.version} declares no interface for --points "
                        f"{', '.join(missing)}", "leave them out: this release no longer has those points")
    signed = [p for p in templated if p.key in points and p.interface in surface.sign_points()]
    reads_pod = any(has[k] for k in ("prefilter", "filter", "prescore", "score"))
    types = dict(api.types, MaxScore=f"{owner}.{surface.score_bound('Max')}")
    fake_methods = handle_fake.methods(surface)  # from the release's Handle: its new methods need no code change
    return dict(
        sign=bool(signed),
        reads_pod=reads_pod,
        kebab=kebab(name),
        name=name,
        package=package,
        module=module,
        import_path=f"{module}/pkg/{package}",
        points=points,
        chosen=[p for p in templated if p.key in points],
        generic=generic,
        has=has,
        api=api,
        T=types,
        sig=lambda interface, method, names="": signatures.head(surface, interface, method, names),
        ret=lambda interface, method, *leading: signatures.returns(surface, interface, method, *leading),
        ptype=lambda interface, method, index: signatures.param_type(surface, interface, method, index),
        results=lambda interface, method: signatures.method(surface, interface, method).results,
        k8s_version=resolution.version,
        minor=resolution.minor,
        go_version=resolution.go_version,
        staging_version=resolution.staging_version,
        replaces=resolution.replaces,
        plugin_imports=_plugin_imports(points, has, api, any("v1." in m for g in generic for m in g.methods),
                                       queue_sort_pod=has["queuesort"] and signatures.param_type(
                                           surface, "QueueSortPlugin", "Less", 0).endswith("QueuedPodInfo")),
        test_imports=_test_imports(has, bool(signed)),
        args_imports=_imports([['\t"fmt"'], ['\t"k8s.io/apimachinery/pkg/runtime"',
                                              '\tframeworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"']]),
        scheduler_name=kebab(name) + "-scheduler",
        handle_fake=handle_fake.FAKE,
        handle_methods=fake_methods,
        handle_imports=handle_fake.imports(surface, fake_methods),
    )


def _plugin_imports(points: tuple[str, ...], has: dict[str, bool], api: FrameworkAPI,
                    generic_v1: bool = False, queue_sort_pod: bool = False) -> list[list[str]]:
    """The plugin file's imports: only what the chosen points use (Go refuses unused imports)."""
    std = ['\t"context"']
    if has["filter"] or has["enqueueextensions"]:
        std.append('\t"fmt"')
    if has["permit"]:
        std.append('\t"time"')
    if has["reserve"]:
        std.append('\t"sync"')
    third = ['\t"k8s.io/apimachinery/pkg/runtime"', _FWK_IMPORT]
    if set(points) - {"queuesort"} or generic_v1:
        third.append('\tv1 "k8s.io/api/core/v1"')
    if has["reserve"]:
        third.append('\t"k8s.io/apimachinery/pkg/types"')
    if queue_sort_pod:  # Less takes pods (before 1.37): their priority through corev1helpers
        third.append('\tcorev1helpers "k8s.io/component-helpers/scheduling/corev1"')
    if has["enqueueextensions"]:
        third.append('\t"k8s.io/klog/v2"')
    if api.split:  # Plugin / Handle types still in k8s.io/kubernetes
        third.append(_FRAMEWORK_IMPORT)
    return _imports([std, third])


def _test_imports(has: dict[str, bool], sign: bool) -> list[list[str]]:
    test_std = ['\t"context"', '\t"fmt"', '\t"testing"'] + (['\t"encoding/json"'] if sign else [])
    if has["filter"] or has["score"]:  # the parallel benchmark of Filter and Score
        test_std += ['\tgoruntime "runtime"', '\t"sync/atomic"']
    test_third = [
        '\tv1 "k8s.io/api/core/v1"',
        '\t"k8s.io/apimachinery/pkg/runtime"',
        _FWK_IMPORT,
        _FRAMEWORK_IMPORT,
        '\tst "k8s.io/kubernetes/pkg/scheduler/testing"',
    ]
    if has["enqueueextensions"]:
        test_third.append('\t"k8s.io/klog/v2"')
    return _imports([test_std, test_third])


def kebab(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "-", name).lower()


def _sample_config(name: str, chosen: list, scheduler_name: str) -> str:
    """A KubeSchedulerConfiguration with a profile of its own enabling the plugin (YAML via safe_dump)."""
    plugins: dict = {}
    for point in chosen:
        if not point.config:
            continue
        entry: dict = {"name": name}
        if point.key == "score" or getattr(point, "weighted", False):
            entry["weight"] = 1
        if point.key == "queuesort":
            # One queue sort per scheduler: replace PrioritySort.
            plugins[point.config] = {"enabled": [entry], "disabled": [{"name": "*"}]}
        elif point.key == "bind":
            # Binders run in order until one binds: ours first, DefaultBinder for its Skip.
            plugins[point.config] = {"enabled": [entry, {"name": "DefaultBinder"}], "disabled": [{"name": "*"}]}
        else:
            plugins[point.config] = {"enabled": [entry]}
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "leaderElection": {"leaderElect": False},
        "profiles": [
            {
                "schedulerName": scheduler_name,
                "plugins": plugins,
                "pluginConfig": [{"name": name, "args": {"limit": 10}}],
            }
        ],
    }
    header = f"# Sample configuration: pods with `schedulerName: {scheduler_name}` use {name}.\n"
    return header + yaml.safe_dump(config, sort_keys=True, default_flow_style=False)


def _tidy(directory: Path, resolution: versions.Resolution) -> None:
    # The release's go line decides the Go: the host's, else the Go module proxy's toolchain.
    go = toolchain.choose(resolution.go_version, what=f"Kubernetes {resolution.version}")
    gotool.check(["mod", "tidy"], cwd=directory, stream=True, what="`go mod tidy` of the scaffold",
                 hint="nothing was written to --out", go=go.go)


def scaffold(request: ScaffoldRequest) -> ScaffoldResult:
    """Validate everything, render into a temporary sibling, tidy, then move into place.

    Only files this scaffold wrote before (manifest.py) are ever replaced."""
    name = validate_name(request.name)
    templated, others = split_points(request.points)
    if not templated and not others:
        parse_points("")  # the error naming the valid points
    module = validate_module(request.module)
    out = Path(request.out).absolute()
    check_out_dir(out, request.force)
    resolution = versions.resolve(request.k8s_version, request.cache_dir)
    surface = framework_surface.framework_surface(resolution.version, request.cache_dir)
    framework_api(surface)  # refuses a release whose framework the templates cannot use
    check_name_free(name, resolution.version, request.cache_dir, fetch=request.tidy and not request.dry_run)
    config_points: tuple[str, ...] = ()
    points = templated
    if others:  # judged by the target's own framework and configuration API
        config_points = vocabulary.config_api(resolution.version, request.cache_dir).extension_points
        further = framework_points.available(surface, config_points, POINT_KEYS, name)
        points = parse_points(request.points, tuple(further), resolution.version)
    files, import_path = render_files(name, points, module, resolution, surface, config_points)
    expected = sorted(files) + (["go.sum"] if request.tidy else [])
    steps = manifest.plan(out, expected, request.force)  # refuses clashes before the slow tidy
    if request.dry_run:
        return ScaffoldResult(out=out, k8s_version=resolution.version, package=import_path, files=expected,
                              plan=steps)
    tmp = staging_dir(out, f".{out.name}.scaffold-")
    try:
        for rel, text in sorted(files.items()):
            target = tmp / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
        if request.tidy:
            log(f"    go mod tidy for k8s.io/kubernetes {resolution.version}")
            _tidy(tmp, resolution)
        os.chmod(tmp, 0o755)
        written = sorted(str(p.relative_to(tmp)) for p in tmp.rglob("*") if p.is_file())
        steps = manifest.plan(out, written, request.force)
        for line in steps.lines():
            if not line.startswith("create"):
                log(f"    {line}")
        manifest.apply(tmp, out, steps)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return ScaffoldResult(out=out, k8s_version=resolution.version, package=import_path, files=written, plan=steps)
