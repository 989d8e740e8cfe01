"""The product's invoke collections, one per stage; `scheduler-build` serves exactly these.

Developer tasks that need the checkout (test, e2e, bench.*) are added by the
repository's tasks.py, the way invoke's own tasks.py composes its collections.

Each module is imported when its tasks are put in a namespace, not with this package: a task's module
brings its stages (the Docker SDK, the build pipeline, Jinja, the extender), and `scheduler-build build`
imports only build's (cli/program.py). `namespace()` without `only` is every task, as `inv` serves them.
"""

from __future__ import annotations

from importlib import import_module
from typing import Iterable

from invoke import Collection

from scheduler_build import settings
from scheduler_build.commands._common import accept_spec_on_stdin, add_inverse_flags

# The root namespace's entries, in listing order, and the module of this package that defines each:
# a task (the module's attribute of that name) or a collection (the module's `ns`).
TASKS = {"doctor": "doctor", "clean": "clean", "init": "init", "explain": "explain", "compare": "compare"}
COLLECTIONS = {"k8s": "k8s", "builder": "builder", "build": "build", "cluster": "cluster", "image": "image",
               "scaffold": "scaffold", "plugin": "plugin", "config": "config", "deploy": "deploy", "dev": "dev",
               "extender": "extender", "release": "release", "snapshot": "compare"}


def namespace(only: Iterable[str] | None = None) -> Collection:
    """Every task, or with `only` the root entries named (e.g. {"build"}: `build` and `build.check-patches`),
    importing only their modules. Unknown names are left out."""
    wanted = None if only is None else set(only)
    ns = Collection()
    for name, module in TASKS.items():
        if wanted is None or name in wanted:
            ns.add_task(getattr(_module(module), name))
    for name, module in COLLECTIONS.items():
        if wanted is None or name in wanted:
            ns.add_collection(_module(module).ns)
    ns.configure(settings.invoke_defaults())
    for task in _every_task(ns):
        add_inverse_flags(task)
        accept_spec_on_stdin(task)
    return ns


def _module(name: str):
    return import_module(f"{__name__}.{name}")


def _every_task(collection: Collection):
    yield from collection.tasks.values()
    for sub in collection.collections.values():
        yield from _every_task(sub)
