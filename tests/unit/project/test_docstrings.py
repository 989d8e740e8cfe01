"""Every name a docstring cites exists: `scheduler_build.x.y` (a module, or an attribute of one) and
`dir/module.py` paths (from the repository, the package, the docstring's own directory or templates/)."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
DOTTED = re.compile(r"\bscheduler_build(?:\.[A-Za-z_]\w*)+")
FILE = re.compile(r"(?<![\w./-])((?:[a-z_]+/)+[a-z_0-9]+\.py)\b")


def _docstrings(path: Path) -> list[str]:
    return [doc for n in ast.walk(ast.parse(path.read_text()))
            if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and (doc := ast.get_docstring(n))]


def _resolves(root: Path, dotted: str) -> bool:
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        base = root / Path(*parts[:i])
        if base.with_suffix(".py").is_file() or (base / "__init__.py").is_file():
            if i == len(parts):
                return True
            if root != REPO:  # a planted tree: its modules are not importable, so only modules are checked
                return False
            try:
                found: object = importlib.import_module(".".join(parts[:i]))
                for attr in parts[i:]:
                    found = getattr(found, attr)
            except (ImportError, AttributeError):
                return False
            return True
    return False


def cited_name_faults(root: Path) -> list[str]:
    faults = []
    for path in sorted((root / "scheduler_build").rglob("*.py")):
        for doc in _docstrings(path):
            faults += [f"{path.relative_to(root)}: {name}" for name in DOTTED.findall(doc) if not _resolves(root, name)]
            faults += [f"{path.relative_to(root)}: {rel}" for rel in FILE.findall(doc)
                       if not any(p.exists() for p in (root / rel, root / "scheduler_build" / rel, path.parent / rel,
                                                        root / "scheduler_build" / "templates" / rel))]
    return faults


def test_every_name_a_docstring_cites_exists():
    assert cited_name_faults(REPO) == []


def test_a_moved_home_is_caught(tmp_path):
    (tmp_path / "scheduler_build" / "dev").mkdir(parents=True)
    (tmp_path / "scheduler_build" / "__init__.py").write_text("")
    (tmp_path / "scheduler_build" / "dev" / "__init__.py").write_text("")
    (tmp_path / "scheduler_build" / "dev" / "loop.py").write_text(
        '"""The loop; the task is in tasks/dev.py, the decide step in scheduler_build.inputs.dev, the loop in\n'
        'scheduler_build.dev.loop and dev/loop.py."""\n')
    assert cited_name_faults(tmp_path) == ["scheduler_build/dev/loop.py: scheduler_build.inputs.dev",
                                           "scheduler_build/dev/loop.py: tasks/dev.py"]
