"""What scheduler_build.cli (and settings_files, precedence) rely on inside invoke, beyond its public API.

cli overrides private members of invoke's Config and Program (the bounded YAML loader, the project-file
lookup, the parse steps it wraps) and reads its private config levels. A renamed member would silently
drop, say, the bounded loader: these tests fail first, and pyproject.toml pins invoke to the range they
passed on.
"""

from __future__ import annotations

import inspect
import re
from importlib import metadata
from pathlib import Path

import invoke
from invoke import Config, Program
from invoke.env import Environment
from invoke.exceptions import ParseError
from packaging.requirements import Requirement

REPO = Path(__file__).resolve().parents[3]

# (class, member, the parameters cli's override or call passes)
RELIED_ON = [
    (Config, "_load_yaml", ("path",)),
    (Config, "_load_py", ("path",)),
    (Config, "_load_file", ("prefix", "absolute", "merge")),
    (Config, "_set", ()),
    (Config, "load_project", ("merge",)),
    (Config, "set_runtime_path", ("path",)),
    (Config, "load_runtime", ("merge",)),
    (Config, "load_shell_env", ()),
    (Config, "merge", ()),
    (Environment, "_cast", ("old", "new")),
    (Environment, "load", ()),
    (Program, "parse_tasks", ()),
    (Program, "parse_cleanup", ()),
    (Program, "parse_collection", ()),
    (Program, "parse_core", ("argv",)),
    (Program, "update_config", ("merge",)),
    (Program, "execute", ()),
    (Program, "core_args", ()),
    (Program, "print_columns", ("tuples",)),
    (Program, "print_task_help", ("name",)),
]
# Private state read by the front door and the precedence notes (set by Config.__init__).
CONFIG_STATE = ("_project_prefix", "_project_found", "_project_path", "_system", "_system_path", "_user",
                "_user_path", "_project", "_env", "_runtime", "_runtime_path", "_overrides")


def missing(relied_on: list) -> list[str]:
    """The members (or parameters) of `relied_on` the installed classes lack."""
    faults = []
    for cls, name, params in relied_on:
        member = inspect.getattr_static(cls, name, None)
        if member is None:
            faults.append(f"{cls.__name__}.{name}")
            continue
        function = member.fget if isinstance(member, property) else member
        have = inspect.signature(function).parameters
        faults += [f"{cls.__name__}.{name}({param})" for param in params if param not in have]
    return faults


def test_every_private_member_cli_overrides_or_calls_exists():
    assert missing(RELIED_ON) == []
    assert isinstance(inspect.getattr_static(Program, "initial_context"), property)
    config = Config(lazy=True)
    assert [name for name in CONFIG_STATE if not hasattr(config, name)] == []
    assert "context" in inspect.signature(ParseError.__init__).parameters


def test_a_renamed_member_is_caught():
    """Negative control: a class without one member, or with a renamed parameter, is reported."""

    class Renamed:
        def _load_yml(self, path):  # renamed
            return path

        def load_project(self, merge_now=True):  # parameter renamed
            return merge_now

    assert missing([(Renamed, "_load_yaml", ("path",)), (Renamed, "load_project", ("merge",))]) == [
        "Renamed._load_yaml", "Renamed.load_project(merge)"]


def test_invoke_is_pinned_to_the_tested_range():
    text = (REPO / "pyproject.toml").read_text()
    (line,) = re.findall(r'"(invoke[^"]*)"', text)
    requirement = Requirement(line)
    assert any(spec.operator in ("<", "<=", "~=", "==") for spec in requirement.specifier), "no upper bound"
    assert requirement.specifier.contains(metadata.version("invoke")), invoke.__version__
