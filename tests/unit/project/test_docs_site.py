"""The documentation site builds without a warning (mkdocs --strict: broken links and anchors, pages
left out of the nav), and BENCHMARKS.md opens with one current table whose every row names its
figure, baseline, ratio, command and date; the history lives in docs/benchmarks/."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
ENV = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}  # mkdocs-material 9.7+ prints an end-of-life banner


def test_mkdocs_builds_strictly(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=REPO, capture_output=True, text=True, timeout=600, env=ENV)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert (tmp_path / "site" / "settings" / "index.html").is_file()
    assert "WARNING" not in proc.stderr, proc.stderr[-4000:]


def test_a_broken_link_fails_the_strict_build(tmp_path):
    """Negative control: the same build with one broken link in a copy of the docs fails."""
    copy = tmp_path / "repo"
    (copy / "docs").mkdir(parents=True)
    for path in (REPO / "docs").rglob("*"):
        if path.is_file():
            (copy / path.relative_to(REPO)).parent.mkdir(parents=True, exist_ok=True)
            (copy / path.relative_to(REPO)).write_bytes(path.read_bytes())
    (copy / "mkdocs.yml").write_text((REPO / "mkdocs.yml").read_text())
    page = copy / "docs" / "troubleshooting.md"
    page.write_text(page.read_text() + "\nSee [nowhere](no-such-page.md).\n")
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=copy, capture_output=True, text=True, timeout=600, env=ENV)
    assert proc.returncode != 0 and "no-such-page.md" in proc.stderr


def test_benchmarks_opens_with_one_current_table():
    # The file is generated (bench/report.py; tests/unit/bench/test_report.py checks it matches its raw
    # files): one current table at the top; older rows only under the historical heading.
    text = (REPO / "BENCHMARKS.md").read_text()
    current = text.split("## Historical")[0]
    tables = re.findall(r"(?:^\|.*\|\n)+", current, flags=re.M)
    assert tables, "the current table opens the file; history goes to docs/benchmarks/history.md"
    header, rule, *rows = tables[0].splitlines()
    columns = [c.strip() for c in header.strip("|").split("|")]
    assert columns == ["measure", "figure", "baseline", "ratio", "runs per side", "load", "command",
                       "raw file, commit, machine", "date"]
    assert rows
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert len(cells) == len(columns) and all(cells), row
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", cells[-1]), row
        assert cells[6].startswith("`") and cells[5].startswith("load ") and cells[4].startswith("n="), row
    assert text.index(tables[0]) < 2000  # it opens the file
    assert (REPO / "docs" / "benchmarks" / "history.md").is_file()


def test_history_cites_a_raw_file_only_when_it_is_kept_or_says_it_is_not():
    """A citation of bench/results/X.json in the history is a raw file in the repository, or says "not kept"
    (in the same sentence). The negative control: a citation planted without it is caught."""
    import re

    def uncited(text: str) -> list[str]:
        missing = []
        for match in re.finditer(r"bench/results/([\w.-]+\.json)", text):
            after = text[match.end():match.end() + 120].split(". ")[0]
            if not (REPO / "bench" / "results" / match.group(1)).is_file() and "not kept" not in after:
                missing.append(match.group(1))
        return missing

    history = (REPO / "docs" / "benchmarks" / "history.md").read_text()
    assert uncited(history) == []
    assert uncited("the figure (bench/results/never-committed.json) says so") == ["never-committed.json"]
