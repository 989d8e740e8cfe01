"""`cd scheduler_build && inv ...`: invoke searches upwards for a `tasks` module and finds
this package before the checkout's tasks.py. Serve the checkout's collection instead, with
its invoke.yaml, and settings' relative paths anchored at the checkout root."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from invoke import Collection

from scheduler_build import safeyaml
from scheduler_build.errors import UserError
from scheduler_build.tasks import _common, namespace

ROOT = Path(__file__).resolve().parents[1]


def checkout_namespace() -> Collection:
    _common.PROJECT_DIR[:] = [ROOT]
    tasks_py = ROOT / "tasks.py"
    if not tasks_py.is_file():  # an installed package: the product's tasks only
        return namespace()
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))  # tasks.py imports bench/ and tests/ of the checkout
    spec = importlib.util.spec_from_file_location("_checkout_tasks", tasks_py)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    ns = module.ns
    project_yaml = ROOT / "invoke.yaml"
    if project_yaml.is_file():
        # invoke looks for invoke.yaml next to the tasks it found (scheduler_build/): apply the root's.
        try:
            ns.configure(safeyaml.load_yaml(safeyaml.read_text(project_yaml)) or {})
        except (OSError, ValueError) as exc:
            raise UserError(f"{project_yaml}: cannot read: {exc}") from None
    return ns
