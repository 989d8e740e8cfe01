"""What `--list`, `--complete` (TAB), `--help` and the parsing of a command line need of the tasks,
without importing them.

Importing the task modules imports every stage (the Docker SDK, the build pipeline, the extender):
about a second on a loaded 2-core machine. Their names, summaries, flags and parameters are all
`--list`, completion and the parser use, so after any run that imported them, scheduler-build keeps
that description in its cache, keyed by the installed package (its version, location and newest source
file time), invoke's version and the Python; the next `--list` or TAB is served from it, and a task's
command line is parsed with it, after which only the modules of the tasks to run are imported
(cli/program.py, which also checks their real arguments against the description). A stale or
unreadable entry is never used: the key changes with any edit, and a bad file means the real tasks
are imported. Standard library and invoke only.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import platform
import tempfile
from pathlib import Path
from typing import Any

import invoke
from invoke import Argument, Collection, Task

from scheduler_build import __version__

_PACKAGE = Path(__file__).resolve().parent
_KINDS = {"bool": bool, "str": str, "int": int, "list": list}
FORMAT = 2  # 2: each task's positional arguments and parameters (a command line is parsed with them)
_PLAIN = (bool, int, float, str, type(None))  # defaults kept as they are; any other is kept as None


def cache_file() -> Path:
    """The listing of this very installation: <cache>/cli-listing/<key>.json."""
    newest = max((entry.stat().st_mtime_ns for entry in _PACKAGE.rglob("*.py")), default=0)
    key = f"{FORMAT}|{__version__}|{_PACKAGE}|{newest}|{invoke.__version__}|{platform.python_version()}"
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "scheduler-build" / "cli-listing" / (hashlib.sha256(key.encode()).hexdigest()[:24] + ".json")


def describe(collection: Collection) -> dict:
    """A collection tree as plain data: names, aliases, defaults, docstrings and every argument."""
    return {"name": collection.name, "doc": collection.__doc__ if "__doc__" in vars(collection) else None,
            "tasks": [describe_task(name, task, collection.default == name) for name, task in collection.tasks.items()],
            "collections": [describe(sub) for sub in collection.collections.values()]}


def describe_task(name: str, task: Task, default: bool = False) -> dict:
    """One task as plain data: what parsing its command line needs (its arguments, its positional ones, and
    its body's parameters, which cli/rewrite.py reads to tell its own flags from core ones)."""
    # get_arguments() consumes the task's help texts (invoke pops them). A copy does not protect them:
    # add_inverse_flags' get_arguments is bound to the original task. So ask, then put them back, or
    # the `TASK --help` that follows in the same run shows its flags without help.
    kept = dict(task.help)
    try:
        arguments = task.get_arguments(ignore_unknown_help=True)
    finally:
        task.help = kept
    args = [{"names": list(arg.names), "kind": arg.kind.__name__, "default": arg.default, "help": arg.help,
             "positional": arg.positional, "optional": arg.optional, "incrementable": arg.incrementable,
             "attr_name": arg.attr_name} for arg in arguments]
    params = [[p.name, p.default is not p.empty, p.default if isinstance(p.default, _PLAIN) else None]
              for p in inspect.signature(task.body).parameters.values()]
    return {"name": name, "aliases": list(task.aliases), "doc": task.__doc__ or "", "default": default, "args": args,
            "positional": list(task.positional), "params": params}


class ListedTask(Task):
    """A task known by its description only: listed, completed and parsed, never run (cli/program.py runs
    the real one)."""

    def __init__(self, data: dict):
        def body(c: Any) -> None:
            raise RuntimeError("a listed task is not runnable")  # never reached: tasks run from the real namespace

        body.__doc__ = data["doc"]
        body.__name__ = data["name"].replace("-", "_")
        body.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
            [inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                               **({"default": value} if has_default else {})) for name, has_default, value in data["params"]])
        super().__init__(body, name=data["name"], aliases=tuple(data["aliases"]), default=data["default"],
                         positional=list(data["positional"]))
        self.data = data

    def get_arguments(self, ignore_unknown_help: bool | None = None) -> list[Argument]:
        return [Argument(names=tuple(a["names"]), kind=_KINDS[a["kind"]], default=a["default"], help=a["help"],
                         positional=a["positional"], optional=a["optional"], incrementable=a["incrementable"],
                         attr_name=a["attr_name"]) for a in self.data["args"]]


def build(data: dict) -> Collection:
    collection = Collection(data["name"]) if data["name"] else Collection()
    if data["doc"] is not None:
        collection.__doc__ = data["doc"]
    for task in data["tasks"]:
        collection.add_task(ListedTask(task), name=task["name"], default=task["default"])
    for sub in data["collections"]:
        collection.add_collection(build(sub))
    return collection


def load() -> Collection | None:
    """The cached listing of this installation, or None (none yet, or unreadable)."""
    try:
        return build(json.loads(cache_file().read_text()))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def forget() -> None:
    """Remove this installation's listing (it no longer describes the tasks); the next import writes it."""
    try:
        cache_file().unlink(missing_ok=True)
    except OSError:
        return  # best effort: a listing that cannot be removed is caught by the check again


def save(collection: Collection) -> None:
    """Keep the listing for the next `--list` or TAB (once per installation); a failure to write it
    only means the next one imports the tasks again."""
    try:
        target = cache_file()
        if target.is_file():
            return
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".listing-", suffix=".tmp")
        with os.fdopen(fd, "w") as handle:
            json.dump(describe(collection), handle)
        os.replace(tmp, target)
    except (OSError, TypeError, ValueError):
        return  # best effort, by design: the listing is a cache
