"""Every served Kubernetes minor in CI: scaffolds compiled and vetted in the builder, together.

The served minors are what the resolve stage served (versions.supported_minors of the proxy's
listing) when tests/versions.yaml was pinned (testkit/versions.py), never a hand list. Each
module is vendored on the host (`go mod vendor`, cached per
go.mod + go.sum under <cache>/test-vendor), then every module is compiled and vetted in ONE
container of the builder image, the way the build stage compiles (build/compile.py): no network,
GOPROXY=off, -mod=vendor, -trimpath, the build tags of a real build, and the builds' Go build cache
volume, so packages a build of the same release already compiled are not compiled again. The inputs
go in through the engine's archive API (`Container.put`); nothing is mounted from the host.
"""

from __future__ import annotations

import hashlib
import os
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
from scheduler_build import gotool, platforms, settings
from scheduler_build.build import builder_image
from scheduler_build.build.compile import BUILD_TAGS, GOCACHE, build_environment
from scheduler_build.build.workspace_image import _normalised, add_tree
from scheduler_build.engine import Volume
from scheduler_build.resolve import gomod
from testkit import versions as pinned

REPO = Path(__file__).resolve().parents[1]
MARK = "minors: exit "
GO_FLAGS = ["-trimpath", "-tags", ",".join(BUILD_TAGS)]


def served() -> dict[str, str]:
    """Minor -> the patch of every served minor the suite compiles, oldest first: pinned in tests/versions.yaml
    (what the resolve stage served when it was pinned), the live proxy's under `inv test --canary`."""
    return dict(pinned.current().served)


def inv(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "invoke", *args], cwd=cwd, capture_output=True, text=True)


def scaffold(version: str, out: Path, name: str = "MinorCheck", points: str = "") -> Path:
    """`inv scaffold.plugin` for `version` (every extension point unless `points`) into `out`."""
    from scheduler_build.scaffold.generate import POINT_KEYS

    got = inv("scaffold.plugin", "--name", name, "--points", points or ",".join(POINT_KEYS),
              "--module", f"example.com/minors/{name.lower()}", "--k8s-version", version, "--out", str(out))
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
    lines: list[str] = field(default_factory=list)
    seconds: int = 0  # wall time of its build and vet in the container

    @property
    def ok(self) -> bool:
        return self.code == 0

    def errors(self) -> list[str]:
        return [line for line in self.lines if ".go:" in line]


def _archive(modules: dict[str, Path], out) -> None:
    with tarfile.open(fileobj=out, mode="w") as archive:
        info = _normalised(tarfile.TarInfo("src"))
        info.type = tarfile.DIRTYPE
        archive.addfile(info)
        for index, module in enumerate(modules.values()):
            add_tree(archive, module, f"src/{index}", skip=frozenset({f"src/{index}/vendor"}))
            add_tree(archive, vendored(module), f"src/{index}/vendor")


def script(labels: list[str], patterns: dict[str, str]) -> str:
    """One shell script: build and vet each module's packages in turn, each ending in a marked exit line."""
    steps = [f"echo \"{MARK}- 0 $(date +%s)\""]
    for i, label in enumerate(labels):
        pattern = patterns.get(label, "./...")
        build, vet = (shlex.join(["go", verb, *GO_FLAGS, pattern]) for verb in ("build", "vet"))
        steps.append(f"echo '== {label}: {pattern}'; (cd /src/{i} && {build} && {vet}) 2>&1; "
                     f"echo \"{MARK}{i} $? $(date +%s)\"")
    return "\n".join(steps)


def gocache_volume() -> str:
    """The builds' Go build cache volume: `build.gocache_volume`, from its environment variable as `inv` reads it."""
    return next((os.environ[name] for name in settings.env_vars("build.gocache_volume") if os.environ.get(name)),
                settings.DEFAULTS["build"]["gocache_volume"])


def compile_and_vet(modules: dict[str, Path], patterns: dict[str, str] | None = None) -> dict[str, Compiled]:
    """`go build` and `go vet` of each module (label -> directory) in one builder container: of `./...`,
    or of `patterns[label]`."""
    engine = engine_mod.connect()
    go = max((gomod.parse((m / "go.mod").read_text()).go or "1.0" for m in modules.values()),
             key=builder_image.parse_go_version)
    builder = builder_image.select(engine, go, pull=False)
    labels = list(modules)
    results = {label: Compiled(label) for label in labels}
    current: list[Compiled] = [results[labels[0]]]
    last = [0]

    def on_line(line: str) -> None:
        if line.startswith(MARK):
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
        with engine.container(builder.image, ["sh", "-c", script(labels, patterns or {})], environment=env,
                              volumes=[Volume(GOCACHE, gocache_volume())], workdir="/src", network="none") as box:
            box.put("/", archive)
            print(f"minors: {len(modules)} module(s) vendored and put in {time.monotonic() - started:.0f}s",
                  file=sys.stderr)
            box.run(on_line)
    print("minors: " + ", ".join(f"{r.label} {r.seconds}s" for r in results.values()), file=sys.stderr)
    return results


def report(results: dict[str, Compiled]) -> list[str]:
    """One line per module that does not compile and vet, naming it and its first error."""
    return [f"{r.label}: does not compile and vet: {(r.errors() or r.lines[-1:] or ['no output'])[0]}"
            for r in results.values() if not r.ok]
