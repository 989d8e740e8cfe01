"""Every served Kubernetes minor in CI: scaffolds compiled, vetted and tested in the builder, together.

The served minors are what the resolve stage served (versions.supported_minors of the proxy's
listing) when tests/versions.yaml was pinned (testkit/versions.py), never a hand list. Each
module is vendored on the host (`go mod vendor`, cached per
go.mod + go.sum under <cache>/test-vendor), then every module is compiled and vetted (and, when
asked, tested: `go test -count=1 -v`) in ONE container of the builder image, the way the build stage
compiles (build/compile.py): no network, GOPROXY=off, -mod=vendor, -trimpath, the build tags of a real
build, and the builds' Go build cache volume, so packages a build of the same release already compiled
are not compiled again, and a test binary's dependencies are the build's cache entries. The inputs
go in through the engine's archive API (`Container.put`); nothing is mounted from the host.

`compile_served` is the integration tier's one such run (tests/conftest.py `served_scaffolds`): every
served minor's all-points scaffold, a planted fault and the example plugin, compiled, vetted and tested
once per session for tests/integration/test_plugin_build.py and test_served_minors.py.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from scheduler_build import engine as engine_mod
from scheduler_build import platforms, settings
from scheduler_build.golang import gotool
from scheduler_build.build import builder_image
from scheduler_build.build.compile import BUILD_TAGS, GOCACHE, build_environment
from scheduler_build.build.workspace_image import _normalised, add_tree
from scheduler_build.engine import Volume
from scheduler_build.resolve import gomod
from testkit import versions as pinned

REPO = Path(__file__).resolve().parents[1]
MARK = "minors: exit "  # after each module: "<index> <exit code> <epoch seconds>"
STEP = "minors: step "  # after each step of a module: "<build|vet|test> <exit code>"
GO_FLAGS = ["-trimpath", "-tags", ",".join(BUILD_TAGS)]


def served() -> dict[str, str]:
    """Minor -> the patch of every served minor the suite compiles, oldest first: pinned in tests/versions.yaml
    (what the resolve stage served when it was pinned), the live proxy's under `inv test --canary`."""
    return dict(pinned.current().served)


def inv(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "invoke", *args], cwd=cwd, capture_output=True, text=True)


def scaffolding(version: str, out: Path, name: str = "MinorCheck", points: str = "",
                *extra: str) -> subprocess.CompletedProcess:
    """`inv scaffold.plugin` for `version` (every extension point unless `points`) into `out`."""
    from scheduler_build.scaffold.generate import POINT_KEYS

    return inv("scaffold.plugin", "--name", name, "--points", points or ",".join(POINT_KEYS),
               "--module", f"example.com/minors/{name.lower()}", "--k8s-version", version, "--out", str(out), *extra)


def scaffold(version: str, out: Path, name: str = "MinorCheck", points: str = "") -> Path:
    """`inv scaffold.plugin` for `version` (every extension point unless `points`) into `out`; it must succeed."""
    got = scaffolding(version, out, name, points)
    assert got.returncode == 0, f"scaffold.plugin --k8s-version {version}: {got.stderr[-3000:]}"
    return out


def vendored(module: Path) -> Path:
    """`go mod vendor` of `module`, cached per go.mod + go.sum (the module downloads: the host's module cache)."""
    key = hashlib.sha256((module / "go.mod").read_bytes() + b"\0" + (module / "go.sum").read_bytes()).hexdigest()[:32]
    target = settings.cache_dir() / "test-vendor" / key
    if (target / "modules.txt").is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=target.parent))
    try:
        gotool.check(["mod", "vendor", "-o", str(tmp / "vendor")], cwd=module, what=f"`go mod vendor` of {module}")
        try:
            os.rename(tmp / "vendor", target)
        except OSError:
            pass  # another run published the same tree first
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


@dataclass
class Compiled:
    label: str
    code: int = -1  # -1: never reached
    lines: list[str] = field(default_factory=list)  # its own output only: from its header to its exit mark
    seconds: int = 0  # wall time of its build, vet and test in the container
    steps: list[str] = field(default_factory=list)  # the steps it was given: build, vet[, test]
    passed: list[str] = field(default_factory=list)  # the steps that exited 0, in order

    @property
    def ok(self) -> bool:
        return self.code == 0

    @property
    def failed_step(self) -> str:
        """The first of its steps that did not pass (or never ran); "" when all passed."""
        return next((step for step in self.steps or ["build"] if step not in self.passed), "")

    def errors(self) -> list[str]:
        return [line for line in self.lines if ".go:" in line]

    def text(self) -> str:
        return "\n".join(self.lines)


def _archive(modules: dict[str, Path], out) -> None:
    with tarfile.open(fileobj=out, mode="w") as archive:
        info = _normalised(tarfile.TarInfo("src"))
        info.type = tarfile.DIRTYPE
        archive.addfile(info)
        for index, module in enumerate(modules.values()):
            add_tree(archive, module, f"src/{index}", skip=frozenset({f"src/{index}/vendor"}))
            add_tree(archive, vendored(module), f"src/{index}/vendor")


def steps(pattern: str, test: str | None) -> list[tuple[str, str]]:
    """(step, command) of one module: `go build` and `go vet` of `pattern`, and `go test -count=1 -v` of
    `test` when given, all with the build's flags (so a test binary's dependencies are the build's cache entries)."""
    got = [(verb, shlex.join(["go", verb, *GO_FLAGS, pattern])) for verb in ("build", "vet")]
    if test:
        # -vet=off: `go vet` of these packages, test files included, just ran; go test's own vet subset has other
        # flags, so other cache keys (vet facts of every dependency again: docs/bench-perf.md).
        got.append(("test", shlex.join(["go", "test", *GO_FLAGS, "-vet=off", "-count=1", "-v", test])))
    return got


def script(labels: list[str], patterns: dict[str, str], tests: dict[str, str] | None = None) -> str:
    """One shell script: build, vet (and test) each module's packages in turn, each step ending in a marked
    step line, each module in a marked exit line; a failed step ends its module."""
    lines = [f"echo \"{MARK}- 0 $(date +%s)\""]
    for i, label in enumerate(labels):
        pattern = patterns.get(label, "./...")
        body = "; ".join(f"{command}; c=$?; echo \"{STEP}{step} $c\"; [ $c = 0 ] || exit $c"
                         for step, command in steps(pattern, (tests or {}).get(label)))
        lines.append(f"echo {shlex.quote(f'== {label}: {pattern}')}; (cd /src/{i} || exit 1; {body}) 2>&1; "
                     f"echo \"{MARK}{i} $? $(date +%s)\"")
    return "\n".join(lines)


def gocache_volume() -> str:
    """The builds' Go build cache volume: `build.gocache_volume`, from its environment variable as `inv` reads it."""
    return next((os.environ[name] for name in settings.env_vars("build.gocache_volume") if os.environ.get(name)),
                settings.gocache_volume(None))


def compile_and_vet(modules: dict[str, Path], patterns: dict[str, str] | None = None,
                    tests: dict[str, str] | None = None) -> dict[str, Compiled]:
    """`go build` and `go vet` of each module (label -> directory) in one builder container: of `./...`,
    or of `patterns[label]`; then `go test -count=1 -v tests[label]` for the modules `tests` names."""
    engine = engine_mod.connect()
    go = max((gomod.parse((m / "go.mod").read_text()).go or "1.0" for m in modules.values()),
             key=builder_image.parse_go_version)
    builder = builder_image.select(engine, go, pull=False)
    labels = list(modules)
    patterns, tests = patterns or {}, tests or {}
    results = {label: Compiled(label, steps=[step for step, _ in steps(patterns.get(label, "./..."), tests.get(label))])
               for label in labels}
    current: list[Compiled] = [results[labels[0]]]
    last = [0]

    def on_line(line: str) -> None:
        if line.startswith(STEP):
            step, code = line[len(STEP):].split()
            if code == "0":
                current[0].passed.append(step)
        elif line.startswith(MARK):
            index, code, now = line[len(MARK):].split()
            if index != "-":
                current[0].code, current[0].seconds = int(code), int(now) - last[0]
                current[0] = results[labels[min(int(index) + 1, len(labels) - 1)]]
            last[0] = int(now)
        else:
            current[0].lines.append(line)
        print(line, file=sys.stderr)

    env = build_environment("linux", platforms.host_arch(), False, 1)
    started = time.monotonic()
    with tempfile.TemporaryFile(prefix="sb-minors-") as archive:
        _archive(modules, archive)
        archive.seek(0)
        with engine.container(builder.image, ["sh", "-c", script(labels, patterns, tests)], environment=env,
                              volumes=[Volume(GOCACHE, gocache_volume())], workdir="/src", network="none") as box:
            box.put("/", archive)
            print(f"minors: {len(modules)} module(s) vendored and put in {time.monotonic() - started:.0f}s",
                  file=sys.stderr)
            box.run(on_line)
    print("minors: " + ", ".join(f"{r.label} {r.seconds}s" for r in results.values()), file=sys.stderr)
    return results


def report(results: dict[str, Compiled]) -> list[str]:
    """One line per module that does not compile, vet (and pass its tests), naming it, the step and its first error."""
    return [f"{r.label}: `go {r.failed_step or '?'}` fails: {(r.errors() or r.lines[-1:] or ['no output'])[0]}"
            for r in results.values() if not r.ok]


# The session's one run of every served minor (compile_served) ---------------------------------------------

SCORE = re.compile(r"(func \(pl \*\w+\) Score\([^)]*?)nodeInfo fwk\.NodeInfo\)")
EXAMPLE = "examples/underlay/plugin"  # the example spec's plugin: its label in compile_served's results
FACTORY_CHECK = """package {package}

import frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

// New is what cmd/scheduler registers: app.WithPlugin takes a frameworkruntime.PluginFactory.
var _ frameworkruntime.PluginFactory = New
"""


def plant_old_score_signature(module: Path, dest: Path) -> Path:
    """A copy of `module` whose Score takes the pre-1.34 `nodeName string`: a wrong signature for any served minor."""
    shutil.copytree(module, dest)
    [plugin] = [p for p in (dest / "pkg").rglob("*.go") if not p.name.endswith("_test.go") and p.name != "args.go"]
    text, count = SCORE.subn(r"\1nodeName string)", plugin.read_text())
    assert count == 1, "the scaffold's Score signature changed: update the planted fault"
    plugin.write_text(text)
    return dest


def plugin_only(module: Path, dest: Path) -> Path:
    """A copy of `module` whose plugin package also asserts that New is the minor's PluginFactory, the one
    thing cmd/scheduler/main.go checks (its text is the same for every minor)."""
    shutil.copytree(module, dest)
    [package] = (dest / "pkg").iterdir()
    (package / "factory_check.go").write_text(FACTORY_CHECK.format(package=package.name))
    return dest


@dataclass
class Scaffolded:
    """`inv scaffold.plugin --json` of one minor: where, and what it said."""

    path: Path
    made: subprocess.CompletedProcess

    @property
    def result(self) -> dict:
        return json.loads(self.made.stdout)


@dataclass
class ServedRun:
    scaffolds: dict[str, Scaffolded]  # minor -> its all-points scaffold
    results: dict[str, Compiled]  # label (a minor, `planted`, EXAMPLE) -> its steps in the one container
    planted: str  # the label of the newest minor's copy with the planted fault

    def of(self, label: str) -> Compiled:
        """Its result; never reached (code -1) when it was not in the run (its scaffold failed)."""
        return self.results.get(label) or Compiled(label)


def compile_served(out: Path, default_minor: str, name: str = "AllPoints") -> ServedRun:
    """Scaffold every served minor with every extension point (`inv scaffold.plugin --k8s-version <minor>
    --json`: the minor resolved by a fresh `inv`), then ONE builder container builds, vets and tests them:
    the whole module (`./...`, cmd/scheduler included) for the newest and the default minor, whose
    kube-scheduler packages the suite compiles anyway; for the others `./pkg/...` (every signature that
    differs between minors) with the PluginFactory check main.go makes (plugin_only): cmd/kube-scheduler/app
    would make it 1413 packages per minor instead of 869. `go test -v ./pkg/...` for each, and for the
    example plugin; the newest minor with a planted Score fault must fail at build (not tested)."""
    versions = served()
    newest = list(versions)[-1]
    scaffolds = {minor: Scaffolded(out / minor, scaffolding(minor, out / minor, name, "", "--json"))
                 for minor in versions}
    modules, patterns, tests = {}, {}, {}
    for minor, made in scaffolds.items():
        if made.made.returncode != 0:
            continue  # its test says why; the others still run
        if minor in (newest, default_minor):
            modules[minor] = made.path
        else:
            modules[minor], patterns[minor] = plugin_only(made.path, out / "plugin-only" / minor), "./pkg/..."
        tests[minor] = "./pkg/..."
    planted = f"{newest} with Score(..., nodeName string)"
    if newest in modules:
        modules[planted] = plant_old_score_signature(scaffolds[newest].path, out / "planted")
        patterns[planted] = "./pkg/..."
    modules[EXAMPLE] = REPO / EXAMPLE
    patterns[EXAMPLE] = tests[EXAMPLE] = "./pkg/..."
    return ServedRun(scaffolds, compile_and_vet(modules, patterns, tests), planted)
