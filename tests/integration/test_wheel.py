"""The product as pip users get it: a wheel, installed into a fresh virtualenv.

No editable install, no checkout on sys.path, run from a directory outside the
checkout: the console script must find its templates and Dockerfiles inside the
installed package and render exactly what the checkout renders.
"""

from __future__ import annotations

import filecmp
import os
import re
import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

from testkit import pythons


REPO = Path(__file__).resolve().parents[2]
# An exact, served version: rendering needs no proxy listing, and both sides agree.
K8S = "v1.36.3"
DEV_TASKS = ("test", "e2e", "bench.")


def _run(argv: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: float = 900) -> str:
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{' '.join(map(str, argv))} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    # A copy of the tree without build leftovers, so setuptools sees exactly what git holds.
    src = out / "src"
    files = _run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], REPO).split()
    for name in files:
        if (REPO / name).is_file():
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, src / name)
    # The copy has no .git: the commit `--version` shows comes from the checkout (setup.py reads it).
    commit = _run(["git", "rev-parse", "--short=12", "HEAD"], REPO).strip()
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(out), str(src)], out,
         env={**os.environ, "SCHEDULER_BUILD_COMMIT": commit})
    (built,) = out.glob("scheduler_build-*.whl")
    return built


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """A fresh virtualenv (no system site-packages, so no editable finder) with the wheel."""
    env_dir = tmp_path_factory.mktemp("venv") / "env"
    venv.EnvBuilder(with_pip=True, system_site_packages=False).create(env_dir)
    _run([str(env_dir / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check", str(wheel)],
         env_dir, _no_python_path())
    return env_dir


@pytest.fixture(scope="module", params=pythons.ends()[:1])
def installed_on_the_oldest(request, wheel, tmp_path_factory) -> Path:
    """The wheel in a fresh virtualenv of the oldest supported Python (issue 22: every command crashed on
    3.10, --version included). The newest is proven by `inv test`'s unit run on it (CI's time budget)."""
    python = pythons.interpreter(request.param)
    assert python is not None, f"Python {request.param} not found; pyproject.toml says it is supported"
    env_dir = tmp_path_factory.mktemp(f"venv{request.param}") / "env"
    _run([str(python), "-m", "venv", str(env_dir)], tmp_path_factory.getbasetemp())
    _run([str(env_dir / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check", str(wheel)],
         env_dir, _no_python_path())
    return env_dir


def _no_python_path() -> dict[str, str]:
    """pip must see the fresh venv only: with PYTHONPATH at a checkout it finds its egg-info "installed"."""
    return {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}


def _outside_env(env_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV", "INVOKE_"))}
    env["PATH"] = f"{env_dir / 'bin'}:/usr/local/go/bin:{env.get('PATH', '')}"
    return env


def test_wheel_ships_templates_and_dockerfiles_but_no_test_fixtures(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for needed in ("scheduler_build/templates/config/deployment.yaml.j2",
                   "scheduler_build/templates/wrapper/main.go.j2",
                   "scheduler_build/templates/scaffold/plugin.go.j2",
                   "scheduler_build/templates/policies/slsa-provenance.rego",
                   "scheduler_build/dockerfiles/scheduler.Dockerfile",
                   "scheduler_build/dockerfiles/builder.Dockerfile",
                   "scheduler_build/dockerfiles/extender.Dockerfile"):
        assert needed in names, needed
    leaked = [n for n in names if n.startswith(("tests/", "testkit/", "bench/")) or n.endswith(("apistub.py", "samples.py", "e2e.py", "harness.py"))]
    assert not leaked, leaked


def test_installed_console_script_renders_what_the_checkout_renders(installed, tmp_path):
    work = tmp_path / "elsewhere"  # outside the checkout, no tasks.py, no invoke.yaml
    shutil.copytree(REPO / "examples", work / "examples")
    env = _outside_env(installed)
    cli = str(installed / "bin" / "scheduler-build")

    assert _run([cli, "--version"], work, env).strip()
    listed = _run([cli, "--list"], work, env)
    for product in ("build", "config.render", "config.validate", "image.build", "image.push", "scaffold.plugin",
                    "deploy", "cluster.up", "extender.serve", "doctor"):
        assert product in listed, product
    task_names = [line.split()[0] for line in listed.splitlines()[1:] if line.strip()]
    assert not [t for t in task_names if t.startswith(DEV_TASKS)], task_names

    spec = work / "examples" / "underlay" / "scheduler.yaml"
    _run([cli, "config.render", "--spec", str(spec), "--out", str(work / "wheel-out"), "--k8s-version", K8S],
         work, env)
    # The checkout's own rendering of the same spec copy, through the checkout's code.
    _run([sys.executable, "-m", "scheduler_build", "config.render", "--spec", str(spec),
          "--out", str(tmp_path / "checkout-out"), "--k8s-version", K8S], REPO)
    rendered = sorted(p.name for p in (work / "wheel-out").iterdir())
    assert "kube-scheduler-config.yaml" in rendered and "deployment.yaml" in rendered
    match, mismatch, errors = filecmp.cmpfiles(work / "wheel-out", tmp_path / "checkout-out", rendered, shallow=False)
    assert not mismatch and not errors and sorted(p.name for p in (tmp_path / "checkout-out").iterdir()) == rendered

    _run([cli, "scaffold.plugin", "--name", "WheelCheck", "--points", "filter,score",
          "--module", "example.com/wheel/check", "--k8s-version", K8S, "--out", str(work / "plugin"), "--no-tidy"],
         work, env)
    _run([sys.executable, "-m", "scheduler_build", "scaffold.plugin", "--name", "WheelCheck",
          "--points", "filter,score", "--module", "example.com/wheel/check", "--k8s-version", K8S,
          "--out", str(tmp_path / "plugin"), "--no-tidy"], REPO)
    for generated in sorted(p for p in (work / "plugin").rglob("*") if p.is_file()):
        twin = tmp_path / "plugin" / generated.relative_to(work / "plugin")
        assert twin.is_file() and twin.read_bytes() == generated.read_bytes(), generated


def test_the_wheel_runs_on_the_oldest_python(installed_on_the_oldest, tmp_path):
    env = _outside_env(installed_on_the_oldest)
    cli = str(installed_on_the_oldest / "bin" / "scheduler-build")
    version = _run([cli, "--version"], tmp_path, env)
    assert re.search(r"\(commit [0-9a-f]{12}(-dirty)?, Python 3\.\d+", version), version
    assert "help" in _run([cli, "--list"], tmp_path, env)
    _run([cli, "init", "proj"], tmp_path, env)
    assert _run([cli, "config.validate", "proj/scheduler.yaml", "--fields-only"], tmp_path, env).startswith("ok: ")


def _fails(argv: list[str], cwd: Path, env: dict[str, str], substring: str) -> None:
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert proc.stderr.count("error:") == 1 and substring in proc.stderr, proc.stderr[-2000:]


def test_the_issues_examples_against_the_installed_wheel(installed, tmp_path):
    """Issue 22's examples as a pip user meets them: a wheel, an empty directory, no checkout."""
    env = _outside_env(installed)
    cli = str(installed / "bin" / "scheduler-build")
    assert "Usage: scheduler-build [--core-opts] image.keygen" in _run([cli, "image.keygen", "--help"], tmp_path, env)
    assert list(tmp_path.iterdir()) == []  # no key in ./--help
    _fails([cli, "image.keygen", "--out", "keys"], tmp_path, {**env, "COSIGN_PASSWORD": ""}, "--allow-empty-password")
    _fails([cli, "--dry", "build"], tmp_path, env, "unknown flag --dry")
    _fails([cli, "image.push", "--dry-run"], tmp_path, env, "unknown flag --dry-run for image.push")
    _run([cli, "init", "."], tmp_path, env)
    _fails([cli, "config.validate", "--binary", "/nonexistent"], tmp_path,
           {**env, "SCHEDULER_BUILD_CONFIG_FIELDS_ONLY": "false"}, "no kube-scheduler at /nonexistent")
    (tmp_path / "scheduler-build.yaml").write_text("spec: my.yaml\n")
    _fails([cli, "config.validate"], tmp_path, env, "write `spec: {path: my.yaml}`")
    (tmp_path / "scheduler-build.yaml").write_text("paths:\n  dist_dir: true\n")
    _fails([cli, "config.validate"], tmp_path, env, "paths.dist_dir true: a boolean where a text or path is meant")
    (tmp_path / "scheduler-build.yaml").unlink()
    home = tmp_path / "home"
    home.mkdir()
    (home / ".invoke.yaml").write_text("image: myorg/app\n")  # another invoke-based tool's: not read
    assert _run([cli, "config.validate", "--fields-only"], tmp_path, {**env, "HOME": str(home)}).startswith("ok: ")
    assert "SCHEDULER_BUILD_PUSH_INSECURE" in _run([cli, "help", "settings"], tmp_path, env)
    assert _run([str(installed / "bin" / "scheduler-extender"), "--version"], tmp_path, env).startswith(
        "scheduler-extender ")
