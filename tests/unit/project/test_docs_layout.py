"""The documentation matches the tree: docs/ARCHITECTURE.md names every module once per stage, the
README's table of contents lists every section and its tour every package, the README stays a front
door (<= 250 lines), there is a page per task family, and every task and flag is documented on one."""

from __future__ import annotations

import re
from pathlib import Path
from testkit.invoke_tasks import walk

REPO = Path(__file__).resolve().parents[3]
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


def test_readme_tour_names_every_package():
    tour = README.split("\n## A tour of the pipeline\n", 1)[1].split("\n## ", 1)[0]
    for entry in sorted(PACKAGE.iterdir()):
        if entry.is_dir() and not entry.is_symlink() and (entry / "__init__.py").is_file() and entry.name != "commands":
            assert f"`{entry.name}/" in tour, entry.name
    assert "docs/ARCHITECTURE.md" in tour and "](docs/pipeline.svg)" in tour


def test_readme_is_a_front_door():
    assert README.count("\n") <= 250
    assert all((REPO / "docs" / page).is_file() for page in PAGES)
    for link in re.findall(r"\]\((docs/[^)#]+)", README):
        assert (REPO / link).is_file(), link


PAGES = ["build.md", "plugins.md", "config.md", "images.md", "deploy.md", "cluster.md", "extender.md", "benchmarks.md",
         "settings.md", "troubleshooting.md", "development.md"]


def _docs() -> dict[str, str]:
    """Every page: the family pages above and the topic pages beside them (e.g. gitops-helm.md)."""
    return {path.name: path.read_text() for path in sorted((REPO / "docs").rglob("*.md"))}




def _short(name: str) -> str:
    """`build.build` is run as `build`, `deploy.deploy` as `deploy` (the collection's default task)."""
    head, _, tail = name.partition(".")
    return head if head == tail else name


def test_every_task_and_flag_is_documented_on_a_page():
    """Each task has a heading on a docs page (### `inv TASK ...` or `scheduler-build TASK`), and
    each of its flags appears on that page."""
    from scheduler_build.cli.app import _namespace

    docs = _docs()
    missing = []
    for name, task in walk(_namespace()):
        short = _short(name)
        heading = re.compile(rf"^#+ .*`(inv|scheduler-build) {re.escape(short)}( [^`]*)?`", re.M)
        pages = [page for page, text in docs.items() if heading.search(text)]
        if not pages:
            missing.append(f"task {short}")
            continue
        # settings.md documents the global flags and every boolean flag's inverse (--no-force, --wait, ...).
        text = "\n".join(docs[page] for page in [*pages, "settings.md"])
        for arg in task.get_arguments():
            flag = "--" + arg.name.replace("_", "-")
            if flag not in text and not arg.positional:
                missing.append(f"{short} {flag} (on {', '.join(pages)})")
    assert not missing, missing


# Pages a pip user reads show the program pip installs; the developer pages (tests, benchmarks, the
# toolkit's own CI and design) keep `inv`, which only a checkout has.
USER_PAGES = ["index.md", "build.md", "cluster.md", "compare.md", "config.md", "deploy.md", "explain.md", "extender.md", "gitops-helm.md",
              "images.md", "minors.md", "plugins.md", "remote-engine.md", "sbom-provenance.md", "settings.md",
              "troubleshooting.md"]
DEVELOPER_TASK = re.compile(r"`inv (test|e2e|bench)\b")  # checkout-only tasks, named as a checkout runs them
INV_TASK = re.compile(r"(?<![\w./-])inv [a-z-]")


def test_user_pages_show_scheduler_build_with_a_note_on_inv():
    docs = _docs()
    assert set(USER_PAGES) | {"development.md", "benchmarks.md", "ci.md", "contracts.md", "ARCHITECTURE.md",
                              "bench-perf.md", "history.md"} == set(docs), "classify the new page here"
    wrong = []
    for page in USER_PAGES:
        # A ```yaml block is a file of the checkout's examples/ shown verbatim (tests/unit/spec/test_load.py).
        text = re.sub(r"```yaml\n.*?```", "", docs[page], flags=re.S)
        for number, line in enumerate(text.splitlines(), 1):
            rest = DEVELOPER_TASK.sub("", line)
            if INV_TASK.search(rest) and "checkout" not in line:
                wrong.append(f"{page}:{number}: {line.strip()[:100]}")
        if page != "index.md":
            assert "in a checkout, `inv TASK` is the same" in docs[page], page
    assert not wrong, wrong


def test_developer_pages_keep_inv():
    docs = _docs()
    for page in ("development.md", "benchmarks.md"):
        assert "`inv " in docs[page] and "`scheduler-build test" not in docs[page], page
