"""`inv plugin.retarget`: rewrite a plugin module's go.mod for a target release, compile it there, explain.

Flow: resolve the target (the derivation a build uses) -> plan the go.mod edits (gomod_edit)
-> `go mod edit` + `go mod tidy -e` + `go mod vendor -e` in a temporary copy -> `go build ./...`
and `go vet ./...` in the builder container (no network; the module goes in through the engine
API, in_builder.py) -> on failure, the API
changes of the Kubernetes packages the plugin imports between its old release and the target
(apidiff) beside each compile error (explain). Only go.mod (and, once it compiles, go.sum) of
the module is ever written, and only with `write`.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from scheduler_build import engine as engine_mod
from scheduler_build.golang import gotool
from scheduler_build.golang import toolchain
from scheduler_build.atomic import write_atomic
from scheduler_build.build import builder_image
from scheduler_build.errors import UserError
from scheduler_build.progress import alive, log, phase, stream_line
from scheduler_build.resolve import framework_surface, gomod, goproxy, versions
from scheduler_build.retarget import advice, apidiff, explain, fix, gomod_edit, surface_diff
from scheduler_build.retarget.in_builder import InBuilder, prepare

_SKIP = {"vendor", ".git"}
HOME_MODULE = "k8s.io/kube-scheduler"  # where the framework's types moved (1.34, 1.35): candidate new homes


@dataclass
class RetargetRequest:
    path: Path
    k8s_version: str
    cache_dir: Path
    write: bool
    builder_image: str  # empty: the builder `inv build` would pick
    gocache_volume: str
    fix: bool = False  # also rewrite the module's code (retarget.fix), after showing the diff
    allow_dirty: bool = False  # --fix on a module with uncommitted changes (or outside a git work tree)


@dataclass
class RetargetResult:
    path: Path
    old_version: str | None
    version: str
    diff: str
    notes: list[str]
    compiled: bool
    errors: list[str] = field(default_factory=list)
    changes: list[apidiff.Change] = field(default_factory=list)
    report: list[str] = field(default_factory=list)
    written: list[str] = field(default_factory=list)
    advice: list[advice.Advice] = field(default_factory=list)
    api_changes: list[str] = field(default_factory=list)  # the framework's, old release -> target (surface_diff)
    code_diff: str = ""  # what --fix changes (or would change) in the module's Go files
    fixed: list[str] = field(default_factory=list)
    not_fixed: list[str] = field(default_factory=list)  # file:line: left to do by hand

    def to_dict(self) -> dict:
        return {"path": str(self.path), "from": self.old_version, "to": self.version, "compiles": self.compiled,
                "notes": self.notes, "diff": self.diff, "errors": self.errors,
                "changes": [c.line() for c in self.changes], "api_changes": self.api_changes, "written": self.written,
                "code_diff": self.code_diff, "fixed": self.fixed, "not_fixed": self.not_fixed,
                "advice": [{"kind": a.kind, "where": a.where, "text": a.text} for a in self.advice]}


def old_resolution(version: str, cache_dir: Path) -> versions.Resolution:
    """The release a plugin was written for, by exact version (the proxy may serve it unlisted)."""
    mod = goproxy.fetch(versions.KUBERNETES_MODULE, version, "mod", cache_dir)
    info = goproxy.fetch(versions.KUBERNETES_MODULE, version, "info", cache_dir)
    return versions.resolution_from(version, version, mod, info, [])


def _copy(source: Path, dest: Path, go_mod: str) -> Path:
    shutil.copytree(source, dest, ignore=lambda d, names: [n for n in names if n in _SKIP and Path(d) == source])
    (dest / "go.mod").write_text(go_mod)
    (dest / "go.sum").unlink(missing_ok=True)
    return dest


def edited(go_mod: str, flags: list[str]) -> str:
    """go.mod text after `go mod edit FLAGS` (run on a copy)."""
    with tempfile.TemporaryDirectory(prefix="sb-retarget-") as tmp:
        path = Path(tmp) / "go.mod"
        path.write_text(go_mod)
        gotool.check(["mod", "edit", *flags, str(path)], what="`go mod edit` of the plugin's go.mod")
        return path.read_text()


def in_builder(request: RetargetRequest, go_version: str, go: toolchain.Toolchain) -> InBuilder:
    engine = engine_mod.connect()
    chosen = builder_image.select(engine, go_version, configured=request.builder_image, pull=False, go=go)
    return InBuilder(chosen.image, request.gocache_volume, engine)


def compile_in_builder(work: Path, builder: InBuilder) -> tuple[bool, list[str]]:
    """`go build -v ./...` then `go vet ./...`; (compiles, output lines). A status line (packages compiled,
    time elapsed) at least every 10 s while the compile prints nothing of its own."""
    lines: list[str] = []
    with alive("compile") as progress:
        def keep(line: str) -> None:
            if progress.take(line):  # a package compiled: counted, not printed
                return
            lines.append(line)
            stream_line(line)

        for argv in (["go", "build", "-v", "./..."], ["go", "vet", "./..."]):
            stream_line(f"+ {' '.join(argv)}   ({builder.image})")
            if builder.run(argv, work, on_line=keep):
                return False, lines
    return True, lines


def retarget(request: RetargetRequest) -> RetargetResult:
    path = Path(request.path).absolute()
    if not (path / "go.mod").is_file():
        raise UserError(f"--path {path} has no go.mod", "point --path at the plugin module's root directory")
    if request.fix and not request.allow_dirty:
        fix.check_clean(path)
    text = (path / "go.mod").read_text()
    mod = gomod.parse(text)
    with phase("resolve", f"Kubernetes {request.k8s_version}"):
        target = versions.resolve(request.k8s_version, request.cache_dir)
    old_version = gomod_edit.kubernetes_version_of(mod)
    old = old_resolution(old_version, request.cache_dir) if old_version else None
    rewrite = gomod_edit.plan(mod, path, target, set(old.replaces) if old else set())
    new_text = edited(text, rewrite.flags)
    result = RetargetResult(path=path, old_version=old_version, version=target.version,
                            diff=gomod_edit.unified_diff(text, new_text), notes=rewrite.notes, compiled=False)
    for note in rewrite.notes:
        log(f"note: {note}")
    with phase("surface", f"optional interfaces and deprecated names of Kubernetes {target.version}"):
        surface = framework_surface.framework_surface(target.version, request.cache_dir)
        result.advice = advice.advise(_sources(path), surface)
        log(f"    {len(result.advice)} finding(s)")
    generated: dict[str, str] = {}
    if old_version:
        generated = _surface_changes(result, path, old_version, surface, request.cache_dir, request.fix)
    if (request.write or request.fix) and new_text != text:
        write_atomic(path / "go.mod", new_text)
        result.written.append("go.mod")
    if request.write and not request.fix:  # the scaffold's generated Handle fake follows the target, like go.mod
        for name, fresh in sorted(generated.items()):
            write_atomic(path / name, fresh)
            result.written.append(name)
    with tempfile.TemporaryDirectory(prefix="sb-retarget-") as tmp:
        work = _copy(path, Path(tmp) / "new", new_text)
        for name, fresh in generated.items():  # a dry run compiles what --write would leave
            (work / name).write_text(fresh)
        # The newer of the target's go line and the module's own: the host's Go, else the proxy's toolchain.
        needed = max(target.go_version, mod.go, key=toolchain.parse)
        go = toolchain.choose(needed, what=f"{mod.module} against Kubernetes {target.version}")
        try:
            prepare(work, f"the module for {target.version}", go.go)
        except UserError as exc:  # no compile possible (the proxy refuses a dependency): the API changes still stand
            if not gotool.refused_modules(exc.message) and "refuses" not in exc.message:
                raise
            log(f"error: {exc}")
            result.errors = [exc.message]
            return result
        builder = in_builder(request, needed, go)
        try:
            with phase("compile", f"{mod.module} against Kubernetes {target.version} in the builder") as step:
                result.compiled, output = compile_in_builder(work, builder)
                step["failed"] = not result.compiled
            if result.compiled:
                if request.write or request.fix:
                    for name in ("go.mod", "go.sum"):
                        write_atomic(path / name, (work / name).read_text())
                    result.written = sorted(set(result.written) | {"go.mod", "go.sum"})
                return result
            result.errors = explain.compile_errors(output)
            if old is not None:
                result.changes = _api_changes(path, text, old, work, Path(tmp), result.errors, request.cache_dir,
                                              builder, go.go)
        finally:
            builder.close()
        result.report = explain.report(explain.explain(result.errors, result.changes), result.changes,
                                       old_version or "?", target.version)
    return result


def _surface_changes(result: RetargetResult, path: Path, old_version: str, surface: framework_surface.FrameworkSurface,
                     cache_dir: Path, write: bool = False) -> dict[str, str]:
    """The framework's API changes from the plugin's release to the target, read from both sources (no compile),
    where the plugin's code meets them (file:line, as advice), and the code --fix rewrites (written with `write`).
    Returns the scaffold's generated Handle fakes regenerated for the target (file -> text, changed ones only)."""
    with phase("api", f"the framework of Kubernetes {old_version} against {surface.version}, from their sources"):
        try:
            old_surface = framework_surface.framework_surface(old_version, cache_dir)
        except UserError as exc:
            log(f"    not compared: {exc.message}")
            return {}
        changes = surface_diff.diff(old_surface, surface)
        result.api_changes = [c.line() for c in changes]
        sources = _sources(path)
        found = surface_diff.uses(sources, old_surface, surface, changes)
        result.advice += [advice.Advice("api", use.where, use.text) for use in found]
        log(f"    {len(changes)} change(s), {len(found)} in this module's code")
        still_there = (framework_surface.kubernetes_framework_names(surface.version, cache_dir)
                       if any(framework_surface.KUBERNETES_PACKAGE + '"' in t for t in sources.values()) else frozenset())
        fixes = fix.fix(sources, old_surface, surface, still_there)
        fixes.files = {name: fix.gofmt(text) for name, text in fixes.files.items()}
        result.code_diff, result.fixed, result.not_fixed = fixes.diff(sources), fixes.done, fixes.not_fixed
        if write:
            for name, text in sorted(fixes.files.items()):
                write_atomic(path / name, text)  # a path _sources listed: inside the module, never vendor
                result.written.append(name)
        regenerated = {name: fix.regenerated_fake(name, text, surface, fix.Fixes()) for name, text in sources.items()}
        return {name: text for name, text in regenerated.items() if text != sources[name]}


def _sources(path: Path) -> dict[str, str]:
    """The module's Go files (relative path -> text), vendor and VCS left out."""
    return {str(p.relative_to(path)): p.read_text() for p in sorted(path.rglob("*.go"))
            if not (set(p.relative_to(path).parts) & _SKIP)}


def _api_changes(path: Path, text: str, old: versions.Resolution, new_work: Path, tmp: Path,
                 errors: list[str], cache_dir: Path, builder: InBuilder, go: str = "") -> list[apidiff.Change]:
    """apidiff of each k8s.io/kubernetes package the plugin imports, and of each staging package whose
    names the errors mention; the old side
    is the module as written (`text`), its replaces derived for its own release the same way."""
    old_text = edited(text, gomod_edit.plan(gomod.parse(text), path, old, set(old.replaces)).flags)
    sources = [p.read_text() for p in sorted(path.rglob("*.go")) if not (set(p.relative_to(path).parts) & _SKIP)]
    used = explain.used_names(sources)
    words = set(explain.WORD.findall(" ".join(errors)))
    wanted = {pkg: names for pkg, names in used.items()
              if pkg.startswith(versions.KUBERNETES_MODULE + "/") or names & words or pkg.rsplit("/", 1)[-1] in words}
    if not wanted:
        return []
    old_work = _copy(path, tmp / "old", old_text)
    prepare(old_work, f"the module as written, for {old.version}", go)
    tool = apidiff.tool(cache_dir)

    def export(work: Path, package: str, out: Path) -> bool:
        return apidiff.export_data(builder, tool, work, package, out)

    homes = apidiff.list_packages(new_work, f"{HOME_MODULE}/...", go)
    changes: list[apidiff.Change] = []
    exports = tmp / "exports"
    exports.mkdir()
    with phase("apidiff", f"{len(wanted)} package(s): {old.version} -> the target"):
        for index, (package, names) in enumerate(sorted(wanted.items())):
            before = exports / f"{index}-old"
            if not export(old_work, package, before):
                continue
            after = exports / f"{index}-new"
            same = apidiff.compare(tool, before, after) if export(new_work, package, after) else None
            log(f"    {package}: {'compared with the target' if same is not None else 'not in the target'}")
            candidates = {}
            for home in homes:
                if home != package and home.rsplit("/", 1)[-1] == package.rsplit("/", 1)[-1]:
                    out = exports / f"{index}-{len(candidates)}-home"
                    if export(new_work, home, out):
                        candidates[home] = apidiff.compare(tool, before, out)
            changes += apidiff.moves_and_changes(package, names, same, candidates)
    return changes
