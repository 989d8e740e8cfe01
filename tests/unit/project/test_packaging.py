"""pyproject.toml lists every package of the product, and nothing else ships."""

from __future__ import annotations

try:
    import tomllib
except ImportError:  # Python 3.10: the same parser, from PyPI (the test extra)
    import tomli as tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
MAPPED = {"scheduler_build.templates": "templates", "scheduler_build.dockerfiles": "dockerfiles"}


def _packages_on_disk() -> set[str]:
    found = set()
    for init in (REPO / "scheduler_build").rglob("__init__.py"):
        rel = init.parent.relative_to(REPO)
        if rel.parts[:2] in (("scheduler_build", "templates"), ("scheduler_build", "dockerfiles")):
            continue  # the checkout's symlinks to the mapped directories
        found.add(".".join(rel.parts))
    return found | set(MAPPED)


def test_pyproject_lists_every_package():
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert sorted(config["packages"]) == sorted(_packages_on_disk())
    assert config["package-dir"] == MAPPED


def test_every_directly_imported_distribution_is_declared():
    import ast
    import sys

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    # the dependencies, and the product's optional extras (`chart`: imported only when asked for); not `test`
    extras = [d for name, deps in project["optional-dependencies"].items() if name != "test" for d in deps]
    declared = " ".join(project["dependencies"] + extras).lower()
    # import name -> distribution name, where they differ
    dist = {"yaml": "pyyaml", "jinja2": "jinja2", "prometheus_client": "prometheus-client"}
    imported = set()
    for path in (REPO / "scheduler_build").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                imported |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                imported.add(node.module.split(".")[0])
    third_party = {m for m in imported if m not in sys.stdlib_module_names and m != "scheduler_build"}
    missing = [m for m in sorted(third_party) if dist.get(m, m) not in declared]
    assert not missing, f"imported but not declared in pyproject dependencies: {missing}"
