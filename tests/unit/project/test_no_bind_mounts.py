"""No bind mount of a host path in the product (issue 19) but one: the engine API is the path into
and out of a container, so the same code serves a local engine, a remote one (DOCKER_HOST=tcp://
or ssh://) and docker-in-docker. The one exception is the long-lived builder's /out (issue 30:
build/warm.py), tried when the builder is created (engine._create_idle, which creates it without
when the engine refuses) and trusted only after a probe proved the engine shares it. The checker
reads every module's syntax tree; the negative controls plant each form of a bind mount and
expect it to be caught."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[3] / "scheduler_build"
CLI_MOUNT_FLAGS = {"-v", "--volume", "--mount", "--volumes-from"}


def bind_mounts(source: str) -> list[str]:
    """Each bind mount the source asks for: a mount of type "bind", the SDK's `binds=`/`volumes=`
    (host paths) or a `docker run -v/--mount` argument list."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and _name(node.func).endswith("Mount"):
            kind = next((k.value for k in node.keywords if k.arg == "type"), None)
            if not (isinstance(kind, ast.Constant) and kind.value == "volume"):
                found.append(f"line {node.lineno}: a mount not of type volume")
        if isinstance(node, ast.keyword):
            value = node.value
            if node.arg in ("binds", "volumes") and isinstance(value, (ast.Dict, ast.List)) and _sdk_call(node):
                found.append(f"line {value.lineno}: the docker SDK's {node.arg}= (host paths)")
        if isinstance(node, ast.List) and any(isinstance(e, ast.Constant) and e.value == "docker" for e in node.elts[:1]):
            flags = [e.value for e in node.elts if isinstance(e, ast.Constant) and e.value in CLI_MOUNT_FLAGS]
            if flags:
                found.append(f"line {node.lineno}: docker CLI {flags[0]}")
    return found


def _name(func: ast.expr) -> str:
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _sdk_call(keyword: ast.keyword) -> bool:
    # `volumes=` is also our own Engine's keyword (named volumes only); the SDK's takes a dict or
    # a list of "host:container" strings.
    value = keyword.value
    return isinstance(value, ast.Dict) or any(isinstance(e, ast.Constant) and ":" in str(e.value) for e in value.elts)


def test_no_module_of_the_product_bind_mounts_a_host_path_but_the_builders_probed_out():
    offenders = {str(path.relative_to(PACKAGE.parent)): found for path in sorted(PACKAGE.rglob("*.py"))
                 if (found := bind_mounts(path.read_text()))}
    assert list(offenders) == ["scheduler_build/engine/__init__.py"] and len(offenders["scheduler_build/engine/__init__.py"]) == 1
    source = (PACKAGE / "engine" / "__init__.py").read_text()
    create_idle = ast.get_source_segment(source, next(
        node for node in ast.walk(ast.parse(source)) if isinstance(node, ast.FunctionDef) and node.name == "_create_idle"))
    assert 'type="bind"' in create_idle  # the one bind: ensure_running's, for the long-lived builder
    callers = [str(path.relative_to(PACKAGE.parent)) for path in sorted(PACKAGE.rglob("*.py"))
               if "bind=" in path.read_text() and path != PACKAGE / "engine" / "__init__.py"]
    assert callers == ["scheduler_build/build/warm.py"]
    assert "SHARED_PROOF" in (PACKAGE / "build" / "warm.py").read_text()  # trusted only once proven


def test_the_engine_creates_volume_mounts_and_the_one_bind():
    engine_source = (PACKAGE / "engine" / "__init__.py").read_text()
    assert 'type="volume"' in engine_source
    assert engine_source.count("docker.types.Mount(") == 2  # _mounts: named volumes; _create_idle: the /out


@pytest.mark.parametrize("planted", [
    'docker.types.Mount("/src", "/home/me/src", type="bind")',
    'client.containers.create("img", volumes={"/home/me": {"bind": "/src", "mode": "ro"}})',
    'client.containers.run("img", volumes=["/home/me:/src:ro"])',
    'client.api.create_host_config(binds=["/home/me:/src"])',
    'subprocess.run(["docker", "run", "-v", f"{here}:/src", "img"])',
    'subprocess.run(["docker", "run", "--mount", "type=bind,src=/x,dst=/y", "img"])',
    'docker.types.Mount("/src", path, type=kind)',
    'Mount("/src", "/home/me/src")',
])
def test_negative_control_each_form_of_a_bind_mount_is_caught(planted):
    assert bind_mounts(planted)


def test_named_volumes_pass():
    assert not bind_mounts('docker.types.Mount("/gocache", "scheduler-build-gocache", type="volume")')
    assert not bind_mounts('engine.run("img", ["go"], volumes=[Volume("/gocache", name)], environment={}, workdir="/")')
