"""The architecture, enforced on the source (docs/ARCHITECTURE.md describes it).

- Outside the task layer (scheduler_build/commands/), no function imports anything but a named heavy
  optional package (HEAVY_OPTIONAL); in particular no function there imports a module of scheduler_build.
  The task layer, the top floor, may import its stage inside a task function (it can only point down).
- The module-level import graph of scheduler_build has no cycle.
- Core (everything outside extender/ and the task layer) never imports the extender at module level,
  and `inv` (the task layer) loads none of its heavy packages.
- No task module is imported outside the task layer (the console script's cli/ serves it; bench/commands.py
  and the checkout's tasks.py are the developer's task layer).

Each check is a function over a source tree; a planted tree shows each one catches its fault.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
PACKAGE = "scheduler_build"
TASK_LAYER = f"{PACKAGE}.commands"
FRONT_DOOR = {f"{PACKAGE}.cli", f"{PACKAGE}.entry"}
EXTENDER = f"{PACKAGE}.extender"
# Imported inside functions on purpose: heavy, and needed only on the paths that use them.
HEAVY_OPTIONAL = {
    "kubernetes": "the Kubernetes client: deploy, cluster, dev loop, the extender's API calls",
    "urllib3": "the Kubernetes client's transport errors, beside it",
    "cryptography": "certificates: only when a PKI or a TLS stand-in is made",
    "docker": "the registry credentials docker's config holds",
    "uvicorn": "the extender's server, only when one is made",
    "uvloop": "the extender's event loop, only when one runs",
    "yaml": "the extender's kubeconfig reader (the extender image imports it only with a kubeconfig)",
    "http.server": "the extender's plain-HTTP probe port, only when asked for",
    "matplotlib": "compare --chart's PNG, only when asked for",
    "matplotlib.pyplot": "beside it",
    "jinja2": "templates: only when one is rendered (a plugin edit's build reads its wrapper module back, build/workspace.py)",
}
EXTENDER_HEAVY = ("prometheus_client", "msgspec", "uvicorn", "uvloop", "httptools")


def modules(root: Path, package: str = PACKAGE) -> dict[str, Path]:
    """Every module of the package under `root`, by dotted name (templates and Dockerfiles hold none)."""
    out = {}
    for path in (root / package).rglob("*.py"):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _imported(node: ast.AST, known: dict[str, Path]) -> list[str]:
    """The modules an import statement names: `from a import b` is a.b when that is a module, else a."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    assert isinstance(node, ast.ImportFrom)
    base = node.module or ""
    if node.level:  # relative imports are not used in this package; resolve nothing
        return [base]
    return [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]


def _type_checking(node: ast.If) -> bool:
    return isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"


def module_level_imports(path: Path, known: dict[str, Path]) -> list[str]:
    """What a module imports when it is imported: its top-level statements (not under TYPE_CHECKING)."""
    found: list[str] = []

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                found.extend(_imported(node, known))
            elif isinstance(node, ast.If) and not _type_checking(node):
                visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.Try):
                visit(node.body)
                for handler in node.handlers:
                    visit(handler.body)

    visit(ast.parse(path.read_text()).body)
    return found


def function_imports(path: Path, known: dict[str, Path]) -> list[tuple[int, str, str]]:
    """(line, function, module) of every import inside a function."""
    found = []
    for fn in ast.walk(ast.parse(path.read_text())):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(fn):
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    found += [(node.lineno, fn.name, name) for name in _imported(node, known)]
    return sorted(set(found))


def function_import_faults(root: Path, package: str = PACKAGE) -> list[str]:
    known = modules(root, package)
    faults = []
    for name, path in sorted(known.items()):
        for line, fn, imported in function_imports(path, known):
            if name.startswith(f"{package}.commands"):
                ok = imported.startswith(f"{package}.") and not imported.startswith(f"{package}.commands")
            elif name in FRONT_DOOR or name.startswith(f"{package}.cli."):
                # The console script's front door sits above the task layer: it imports the task
                # collection, the settings-file reader and cli itself only when a task runs, so that
                # --version, --list and completion start fast (issue 22).
                ok = imported.startswith(f"{package}.")
            else:
                ok = imported.split(".")[0] != package and any(
                    imported == heavy or imported.startswith(heavy + ".") for heavy in HEAVY_OPTIONAL)
            if not ok:
                faults.append(f"{name}:{line} {fn}() imports {imported}")
    return faults


def import_graph(root: Path, package: str = PACKAGE) -> dict[str, set[str]]:
    known = modules(root, package)
    return {name: {m for m in module_level_imports(path, known) if m in known and m != name}
            for name, path in known.items()}


def cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import cycle (its modules, first repeated last), or [] when the graph has none."""
    state: dict[str, int] = {}  # 1: on the path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return []

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return []


def core_extender_imports(root: Path, package: str = PACKAGE) -> list[str]:
    extender = f"{package}.extender"
    leaves = {extender, f"{extender}.config"}  # the package's docstring and its configuration leaf load nothing heavy
    graph = import_graph(root, package)
    return [f"{name} imports {m}" for name, imported in sorted(graph.items())
            if not (name == extender or name.startswith(extender + ".") or name.startswith(f"{package}.commands"))
            for m in sorted(imported) if (m == extender or m.startswith(extender + ".")) and m not in leaves]


def task_module_imports(files: list[Path], root: Path, package: str = PACKAGE) -> list[str]:
    """Imports of the task layer from files that are not part of it."""
    known = modules(root, package)
    faults = []
    for path in files:
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for name in _imported(node, known):
                    if name == f"{package}.commands" or name.startswith(f"{package}.commands."):
                        faults.append(f"{path.relative_to(root)}:{node.lineno} imports {name}")
    return faults


# The stages in the order data flows through them (spec → resolve → workspace/vendor/patch/compile/verify
# → image → push → render → deploy; scaffold writes a plugin before the build, retarget moves one between
# minors, cluster runs what was built). A stage imports only itself and earlier stages; above them sit
# flows/ (conductors), inputs/ (decided inputs) and commands/ (tasks).
STAGES = ("spec", "resolve", "scaffold", "build", "retarget", "image", "publish", "config", "deploy", "cluster", "compare",
          "doctor", "clean", "dev")
ABOVE_STAGES = ("flows", "inputs", "commands")
# What reads settings: no stage or flow imports these (their values arrive decided, in a request).
SETTINGS_PACKAGE = "settings"  # the table, settings files, value parsing and the precedence rule


def _layer(module: str, package: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 2 and parts[0] == package else None


def stage_order_faults(root: Path, package: str = PACKAGE) -> list[str]:
    """Imports (at module level or in a function) from a stage of a later stage, of flows/inputs/commands,
    and from a stage or flow of a module that reads settings."""
    known = modules(root, package)
    faults = []
    for name, path in sorted(known.items()):
        layer = _layer(name, package)
        if layer not in STAGES and layer != "flows":
            continue
        imported = module_level_imports(path, known) + [m for _, _, m in function_imports(path, known)]
        for target in sorted(set(imported)):
            other = _layer(target, package)
            if target == f"{package}.{SETTINGS_PACKAGE}" or target.startswith(f"{package}.{SETTINGS_PACKAGE}."):
                faults.append(f"{name} reads settings ({target})")
            elif layer in STAGES and other in ABOVE_STAGES:
                faults.append(f"{name} (a stage) imports {target} ({other})")
            elif layer in STAGES and other in STAGES and STAGES.index(other) > STAGES.index(layer):
                faults.append(f"{name} imports {target}, a later stage")
    return faults


# --- decide first: who reads settings, the environment and $KUBECONFIG -------------------------------

# Where inputs are decided: every setting, environment variable and $KUBECONFIG is read there.
DECIDERS = ("inputs", "settings")
# Ground modules that read the environment themselves, each for a reason (docs/ARCHITECTURE.md).
READS_ENVIRONMENT = {
    f"{PACKAGE}.golang.gotool": "Go's own variables (GOROOT, GOPROXY) and the environment every go command "
                                "inherits: the toolchain reads them itself, so the host's go and ours agree",
    f"{PACKAGE}.engine.credentials": "the one home of registry credentials (SCHEDULER_BUILD_REGISTRY_USERNAME/"
                                     "_PASSWORD, else docker's config): not settings, so no file holds a password",
    f"{PACKAGE}.extender.cli": "the scheduler-extender program's own front door: its flags and environment, read "
                               "once into a ServeConfig (its image runs no settings or invoke)",
    f"{PACKAGE}.extender.config": "pure: the extender's default kubeconfig from the environment its two front doors "
                                  "pass in",
    f"{PACKAGE}.cli.listing": "the --list/completion cache's directory ($XDG_CACHE_HOME) before any setting is loaded, "
                              "so the front door starts fast",
}
# Reading a setting: the precedence rule and the table's lookups (a help text may name a setting; reading its
# value is deciding it).
SETTING_READS = {"option", "decide", "cache_dir", "get", "lookup"}  # settings.default reads the table, for help
SETTING_MODULES = {"settings", "precedence", "options", "common", "_common", "task_api"}


def _reads(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, what) of each read of a setting, `os.environ`/`os.getenv` or the name KUBECONFIG in a tree."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "os" \
                and node.attr in ("environ", "environb", "getenv", "putenv", "unsetenv"):
            found.append((node.lineno, f"os.{node.attr}"))
        elif isinstance(node, ast.ImportFrom) and node.module == "os" \
                and {a.name for a in node.names} & {"environ", "getenv"}:
            found.append((node.lineno, "os.environ"))
        elif isinstance(node, ast.Constant) and node.value in ("KUBECONFIG", "$KUBECONFIG"):
            found.append((node.lineno, "$KUBECONFIG"))
        elif isinstance(node, ast.Call):
            fn = node.func
            if isinstance(fn, ast.Name) and fn.id == "option":
                found.append((node.lineno, "option()"))
            elif isinstance(fn, ast.Attribute) and fn.attr in SETTING_READS and isinstance(fn.value, ast.Name) \
                    and fn.value.id in SETTING_MODULES:
                found.append((node.lineno, f"{fn.value.id}.{fn.attr}()"))
    return sorted(found)


def decide_first_faults(root: Path, package: str = PACKAGE, exceptions: dict[str, str] = READS_ENVIRONMENT) -> list[str]:
    """Reads of a setting, the environment or $KUBECONFIG outside inputs/ and settings/ (the named ground
    modules may read the environment, never a setting)."""
    faults = []
    for name, path in sorted(modules(root, package).items()):
        if _layer(name, package) in DECIDERS or name == f"{package}.settings":
            continue
        for line, what in _reads(ast.parse(path.read_text())):
            if name in exceptions and not what.endswith("()"):
                continue
            faults.append(f"{name}:{line} reads {what}")
    return faults


# Literals that equal a setting's default but state another fact, each with the fact it states.
OTHER_FACTS = {
    "kube-scheduler": "the component Kubernetes names so (build.component chooses among components)",
    "default-scheduler": "Kubernetes' own scheduler name, which pods without a schedulerName go to",
    "127.0.0.1": "loopback: every server here listens there (extender.host's default too)",
    "underlay-ip": "the reference extender's policy table's key",
    "Apache-2.0": "the reference extender's own licence, the toolkit's (image.licenses is the scheduler image's)",
}


def _distinctive(value: object) -> bool:
    """A default worth finding restated: a name or path with punctuation, or a number of four digits and more."""
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        return value >= 1000
    return isinstance(value, str) and len(value) >= 6 and any(ch in value for ch in "./-:")


def _docstrings(tree: ast.AST) -> set[int]:
    return {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}


def restated_default_faults(root: Path, defaults: dict[str, object], package: str = PACKAGE,
                            leaves: tuple[str, ...] = (f"{PACKAGE}.extender.config",)) -> list[str]:
    """Literals outside the settings table (and `leaves`, the homes the table reads its defaults from) equal to
    a setting's distinctive default; docstrings may name one."""
    wanted = {repr(v): k for k, v in defaults.items() if _distinctive(v) and v not in OTHER_FACTS}
    faults = []
    for name, path in sorted(modules(root, package).items()):
        if name in leaves or _layer(name, package) == "settings" or name == f"{package}.settings" \
                or name == package:  # __version__ is no setting
            continue
        tree = ast.parse(path.read_text())
        docstrings = _docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and id(node) not in docstrings and not isinstance(node.value, bool) \
                    and repr(node.value) in wanted:
                faults.append(f"{name}:{node.lineno} restates {wanted[repr(node.value)]}'s default {node.value!r}")
    return faults


def setting_defaults() -> dict[str, object]:
    from scheduler_build import settings

    return {row.key: row.default for row in settings.SETTINGS}


ENTRY_POINTS = ("cli/app.py", "cli/entry.py", "cli/files.py", "cli/program.py", "cli/rewrite.py", "__main__.py")  # `scheduler-build` itself: the program that serves the task layer


def outside_the_task_layer(root: Path) -> list[Path]:
    product = [p for p in (root / PACKAGE).rglob("*.py") if "commands" not in p.relative_to(root / PACKAGE).parts
               and p.relative_to(root / PACKAGE).as_posix() not in ENTRY_POINTS]
    bench = [p for p in (root / "bench").rglob("*.py") if p.name != "commands.py"]
    return sorted(product + bench + sorted((root / "testkit").rglob("*.py")))


# --- the checks on this tree ------------------------------------------------------------------


def test_no_function_outside_the_task_layer_imports_but_a_named_heavy_package():
    assert function_import_faults(REPO) == []


def test_the_import_graph_has_no_cycle():
    graph = import_graph(REPO)
    assert len(graph) > 100 and sum(map(len, graph.values())) > 300  # the graph is really read
    assert cycle(graph) == []


def test_core_never_imports_the_extender_at_module_level():
    assert core_extender_imports(REPO) == []


def test_inv_loads_none_of_the_extenders_heavy_packages():
    code = ("import sys, scheduler_build.commands, scheduler_build.settings, scheduler_build.settings.options; "
            f"print(sorted(m for m in sys.modules if m.split('.')[0] in {EXTENDER_HEAVY!r}))")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"}).stdout
    assert out.strip() == "[]"


def test_stages_import_only_earlier_stages_and_read_no_setting():
    faults = stage_order_faults(REPO)
    # The maintainer's table generator (`python -m scheduler_build.resolve.version_table`) names the cache
    # in its __main__ block; nothing a task runs goes through it.
    assert faults == [f"{PACKAGE}.resolve.version_table reads settings ({PACKAGE}.settings)"]


def test_only_inputs_and_settings_read_settings_the_environment_and_kubeconfig():
    # The maintainer's table generator names the cache in its __main__ block (as in the stage-order rule).
    assert decide_first_faults(REPO) == [f"{PACKAGE}.resolve.version_table:58 reads settings.cache_dir()"]


def test_no_setting_default_is_restated_outside_the_settings_table():
    defaults = setting_defaults()
    assert len([v for v in defaults.values() if _distinctive(v)]) >= 8  # the rule has something to find
    assert restated_default_faults(REPO, defaults) == []


def test_no_task_module_is_imported_outside_the_task_layer():
    files = outside_the_task_layer(REPO)
    assert any(p.name == "image_bench.py" for p in files)
    assert task_module_imports(files, REPO) == []


# --- negative controls: a planted tree with each fault ----------------------------------------


def _plant(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_each_check_catches_its_planted_fault(tmp_path):
    root = _plant(tmp_path, {
        f"{PACKAGE}/__init__.py": "",
        f"{PACKAGE}/spec/__init__.py": "",
        f"{PACKAGE}/spec/model.py": (
            "def all_extenders():\n    from scheduler_build.config import render\n    return render\n"
            "def fine():\n    import kubernetes\n    return kubernetes\n"),
        f"{PACKAGE}/config/__init__.py": "",
        f"{PACKAGE}/config/render.py": "from scheduler_build.config import validate\n",
        f"{PACKAGE}/config/validate.py": "from scheduler_build.config import render\n",
        f"{PACKAGE}/settings.py": "from scheduler_build.extender import app\n",
        f"{PACKAGE}/extender/__init__.py": "",
        f"{PACKAGE}/extender/app.py": "import msgspec\n",
        f"{PACKAGE}/commands/__init__.py": "",
        f"{PACKAGE}/commands/image.py": "def build(c):\n    from scheduler_build.config import render\n    return render\n",
        "bench/__init__.py": "",
        "bench/image_bench.py": "from scheduler_build.commands import image as image_tasks\n",
        "bench/commands.py": "from scheduler_build.commands import image\n",
        "testkit/__init__.py": "",
        f"{PACKAGE}/build/__init__.py": "",
        f"{PACKAGE}/build/pipeline.py": "from scheduler_build.spec import model\n",
        f"{PACKAGE}/build/compile.py": "from scheduler_build.image import assemble\n",
        f"{PACKAGE}/image/__init__.py": "",
        f"{PACKAGE}/image/assemble.py": "from scheduler_build.build import pipeline\nfrom scheduler_build import settings\n",
        f"{PACKAGE}/flows/__init__.py": "",
        f"{PACKAGE}/flows/image.py": "from scheduler_build.image import assemble\nfrom scheduler_build.publish import registry\n",
    })
    assert function_import_faults(root) == [f"{PACKAGE}.spec.model:2 all_extenders() imports {PACKAGE}.config.render"]
    found = cycle(import_graph(root))
    assert found[0] == found[-1] and set(found) == {f"{PACKAGE}.config.render", f"{PACKAGE}.config.validate"}
    assert core_extender_imports(root) == [f"{PACKAGE}.settings imports {PACKAGE}.extender.app"]
    assert task_module_imports(outside_the_task_layer(root), root) == [
        f"bench/image_bench.py:1 imports {PACKAGE}.commands.image"]
    # build → spec and flows → any stage are allowed; a later stage, or a setting read, is not.
    assert stage_order_faults(root) == [
        f"{PACKAGE}.build.compile imports {PACKAGE}.image.assemble, a later stage",
        f"{PACKAGE}.image.assemble reads settings ({PACKAGE}.settings)",
        f"{PACKAGE}.spec.model imports {PACKAGE}.config.render, a later stage"]


def test_the_decide_first_rules_catch_their_planted_faults(tmp_path):
    root = _plant(tmp_path, {
        f"{PACKAGE}/__init__.py": "",
        f"{PACKAGE}/inputs/__init__.py": "",
        f"{PACKAGE}/inputs/deploy.py": "import os\ndef kubeconfig(c):\n    return option(c, 'x') or os.environ['KUBECONFIG']\n",
        f"{PACKAGE}/deploy/__init__.py": "",
        f"{PACKAGE}/deploy/apply.py": ("import os\nfrom os import environ\n"
                                       "def kubeconfig():\n    return os.environ.get('KUBECONFIG')\n"
                                       "def cache(config):\n    return settings.cache_dir(config)\n"
                                       "def home():\n    return os.getenv('HOME')\n"),
        f"{PACKAGE}/commands/__init__.py": "",
        f"{PACKAGE}/commands/clean.py": ("def clean(c, volume=None):\n    \"default: scheduler-build-gocache\"\n"
                                        "    return option(c, 'build.gocache_volume', volume)\n"),
        f"{PACKAGE}/golang/__init__.py": "",
        f"{PACKAGE}/golang/gotool.py": "import os\ndef proxy():\n    return os.environ.get('GOPROXY')\n",
        f"{PACKAGE}/cluster/__init__.py": "",
        f"{PACKAGE}/cluster/controlplane.py": "def up(etcd='/usr/bin/etcd', timeout=180.0, kind='kube-scheduler'):\n    pass\n",
    })
    assert decide_first_faults(root, exceptions={f"{PACKAGE}.golang.gotool": "Go's own"}) == [
        f"{PACKAGE}.commands.clean:3 reads option()",
        f"{PACKAGE}.deploy.apply:2 reads os.environ",
        f"{PACKAGE}.deploy.apply:4 reads $KUBECONFIG",
        f"{PACKAGE}.deploy.apply:4 reads os.environ",
        f"{PACKAGE}.deploy.apply:6 reads settings.cache_dir()",
        f"{PACKAGE}.deploy.apply:8 reads os.getenv"]
    # Without its named exception, the ground module is caught too.
    assert f"{PACKAGE}.golang.gotool:3 reads os.environ" in decide_first_faults(root, exceptions={})
    defaults = {"cluster.etcd": "/usr/bin/etcd", "cluster.timeout": 180, "build.component": "kube-scheduler",
                "build.gocache_volume": "scheduler-build-gocache"}
    # A docstring may name a default and another fact's name is not one; a signature may not restate one.
    assert restated_default_faults(root, defaults) == [
        f"{PACKAGE}.cluster.controlplane:1 restates cluster.etcd's default '/usr/bin/etcd'"]


def bench_imports(root: Path) -> list[str]:
    """Imports of bench/ from testkit/: test fixtures are shared by bench/, never the other way round."""
    faults = []
    for path in sorted((root / "testkit").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            faults += [f"{path.relative_to(root)}:{node.lineno} imports {n}" for n in names
                       if n == "bench" or n.startswith("bench.")]
    return faults


def test_testkit_imports_nothing_of_bench(tmp_path):
    assert len(list((REPO / "testkit").rglob("*.py"))) > 5 and bench_imports(REPO) == []
    root = _plant(tmp_path, {"testkit/warmup.py": "def etcd():\n    from bench.perf import etcd\n"})
    assert bench_imports(root) == ["testkit/warmup.py:2 imports bench.perf"]
