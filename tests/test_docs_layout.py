"""The documentation matches the tree: docs/ARCHITECTURE.md names every module once per stage,
the README's table of contents lists every section, and its design section every package."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "scheduler_build"
ARCHITECTURE = (REPO / "docs" / "ARCHITECTURE.md").read_text()
README = (REPO / "README.md").read_text()


def _modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py")
                  if p.name not in ("__init__.py", "__main__.py") and "templates" not in p.parts and "dockerfiles" not in p.parts)


def test_architecture_names_every_module():
    missing = [str(p.relative_to(REPO)) for p in _modules()
               if f"`{p.stem}`" not in ARCHITECTURE and f"{p.name}`" not in ARCHITECTURE and f"{p.name}," not in ARCHITECTURE]
    assert not missing, f"docs/ARCHITECTURE.md does not name: {missing}"


def test_architecture_tables_have_one_row_per_stage_and_module():
    for table in re.findall(r"\n\|[^\n]*\|\n\|---[^\n]*\n((?:\|[^\n]*\n)+)", ARCHITECTURE):
        keys = [row.split("|")[1].strip() for row in table.splitlines()]
        assert len(keys) == len(set(keys)), sorted(k for k in keys if keys.count(k) > 1)


def _anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to '-'."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_readme_table_of_contents_lists_every_section():
    toc = README.split("<!-- TOC -->", 1)[1].split("<!-- /TOC -->", 1)[0]
    listed = re.findall(r"\]\(#([^)]+)\)", toc)
    body = re.sub(r"```.*?```", "", README, flags=re.S)  # '# comments' in code blocks are not headings
    sections = [_anchor(h) for h in re.findall(r"^## (.+)$", body, flags=re.M)]
    assert listed == sections


def test_readme_design_section_names_every_package():
    design = README.split("\n## Design\n", 1)[1].split("\n## ", 1)[0]
    for entry in sorted(PACKAGE.iterdir()):
        if entry.is_dir() and not entry.is_symlink() and (entry / "__init__.py").is_file() and entry.name != "commands":
            assert f"`{entry.name}/" in design, entry.name
    assert "docs/ARCHITECTURE.md" in design
