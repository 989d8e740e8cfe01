"""Every task that reads dist/ takes --dist (issue 42): found by walking the whole namespace and following each
task's calls into scheduler_build.inputs (the only reader of settings) to a read of `paths.dist_dir`; and every
such read in inputs/ takes the task's flag, so the flag is never ignored."""

from __future__ import annotations

import ast
import inspect
import types
from pathlib import Path

import pytest
from invoke import task

from scheduler_build.inputs.config import render_inputs
from tasks import ns as namespace
from testkit.invoke_tasks import walk

INPUTS = Path(__file__).resolve().parents[3] / "scheduler_build" / "inputs"

# Tasks whose inputs read paths.dist_dir and that take no --dist directory, each with why. An entry no longer
# needed fails the walk below, so this cannot go stale silently.
NO_DIST_FLAG = {
    "image.verify": "--rebuild builds into a temporary dist directory of its own; the user's is never read",
}
# Reads of paths.dist_dir in inputs/ without a flag, each with why.
FLAGLESS_READS = {"clean_inputs": "clean's --dist chooses the kind to remove; the directory is paths.dist_dir"}


def _codes(code: types.CodeType):
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _codes(const)


def reads_dist(fn, seen: set[int] | None = None) -> str:
    """The inputs function by which `fn` reads paths.dist_dir ("" when it does not): its own constants, then
    the scheduler_build.inputs and .commands functions it names (directly or as a module's attribute)."""
    seen = set() if seen is None else seen
    fn = inspect.unwrap(fn)
    if id(fn) in seen or not isinstance(fn, types.FunctionType):
        return ""
    seen.add(id(fn))
    codes = list(_codes(fn.__code__))
    if any(const == "paths.dist_dir" for code in codes for const in code.co_consts):
        return f"{fn.__module__}.{fn.__name__}"
    names = {name for code in codes for name in code.co_names}
    for name in names:
        obj = fn.__globals__.get(name)
        candidates = [obj] if isinstance(obj, types.FunctionType) else [
            getattr(obj, attr, None) for attr in names] if isinstance(obj, types.ModuleType) else []
        for candidate in candidates:
            if isinstance(candidate, types.FunctionType) and candidate.__module__.startswith(
                    ("scheduler_build.inputs", "scheduler_build.commands")) and (found := reads_dist(candidate, seen)):
                return found
    return ""


def test_every_task_that_reads_dist_takes_dist():
    readers, missing = {}, []
    for name, one in walk(namespace):
        if (via := reads_dist(one.body)):
            readers[name] = via
            if "dist" not in inspect.signature(inspect.unwrap(one.body)).parameters and name not in NO_DIST_FLAG:
                missing.append(f"{name} (reads it by {via})")
    assert missing == [], "tasks that read dist/ without --dist: " + ", ".join(missing)
    assert {"config.render", "config.chart", "config.validate", "cluster.load", "image.build"} <= set(readers)
    assert set(NO_DIST_FLAG) <= set(readers), "NO_DIST_FLAG names tasks that no longer read dist/"
    for name in set(NO_DIST_FLAG) & set(readers):
        assert "dist" not in inspect.signature(inspect.unwrap(dict(walk(namespace))[name].body)).parameters, \
            f"{name} takes --dist now: drop it from NO_DIST_FLAG"


def test_every_read_of_dist_in_inputs_takes_the_flag():
    """option(c, "paths.dist_dir") with no flag argument would ignore a task's --dist."""
    flagless = []
    for path in sorted(INPUTS.glob("*.py")):
        tree = ast.parse(path.read_text())
        for function in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)):
            for call in (n for n in ast.walk(function) if isinstance(n, ast.Call)):
                if getattr(call.func, "id", "") == "option" and len(call.args) >= 2 and \
                        getattr(call.args[1], "value", None) == "paths.dist_dir" and len(call.args) < 3:
                    flagless.append(function.name)
    assert sorted(set(flagless)) == sorted(FLAGLESS_READS)


def test_the_walk_catches_a_task_that_reads_dist_without_the_flag():
    """The negative control: a task calling config.render's inputs without a dist parameter is found."""
    @task
    def planted(c):
        return render_inputs(c)

    assert reads_dist(planted.body) == "scheduler_build.inputs.config.render_inputs"
    assert "dist" not in inspect.signature(planted.body).parameters
    assert reads_dist(lambda c: None) == ""


def test_the_dist_flag_wins_over_the_setting(tmp_path, monkeypatch):
    """config.render/chart/validate, cluster.load's spec layout and dev.run's build: --dist over paths.dist_dir."""
    from scheduler_build.inputs import cluster, config
    from scheduler_build.errors import UserError
    from tests.unit.settings.test_precedence import project

    c, spec = project(tmp_path, monkeypatch, f"paths: {{dist_dir: {tmp_path / 'setting'}, cache_dir: {tmp_path / 'cache'}}}\n")
    flag = tmp_path / "flag"
    assert config.render_inputs(c, spec=str(spec)).dist_dir == tmp_path / "setting"  # the negative control
    rendered = config.render_inputs(c, spec=str(spec), dist=str(flag))
    assert rendered.dist_dir == flag and rendered.out_dir.parent.parent == flag
    assert config.chart_inputs(c, spec=str(spec), dist=str(flag)).out_dir.parent.parent == flag
    assert config.validate_inputs(c, spec=str(spec), fields_only=True, dist=str(flag)).dist_dir == flag
    assert cluster.component_request(c, "kube-apiserver", "1.36.3", dist=str(flag)).dist_dir == flag
    with pytest.raises(UserError) as refused:  # nothing built there: the layout it names is under the flag's directory
        cluster.spec_images(c, str(spec), dist=str(flag))
    assert f"under {flag}/" in refused.value.message
