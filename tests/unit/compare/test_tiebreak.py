"""The compare build's patch (compare/tiebreak.py): it changes only the tie order of the score heap and the
FitError message; applied by the build's own applier, to the real release source when the module cache has it."""

from __future__ import annotations

import dataclasses
import textwrap
from pathlib import Path

import pytest

from scheduler_build.build import patches
from scheduler_build.compare import tiebreak
from scheduler_build.errors import UserError
from scheduler_build.golang import toolchain
from scheduler_build.inputs.build import default_request
from scheduler_build.inputs.compare import compare_request
from scheduler_build.resolve.versions import Resolution

RES = Resolution(requested="1.36", version="v1.36.3", minor="1.36", go_version="1.26.0", staging_version="v0.36.3")
LESS = textwrap.dedent("""\
    func (h nodeScoreHeap) Less(i, j int) bool {
    \treturn (h[i].TotalScore > h[j].TotalScore ||
    \t\t(h[i].TotalScore == h[j].TotalScore && h[i].Randomizer > h[j].Randomizer))
    }
    """)
FIT = textwrap.dedent("""\
    \tpostFilterMsg := f.Diagnosis.PostFilterMsg
    \tif postFilterMsg != "" {
    \t\treasonMsg += fmt.Sprintf(" %v", postFilterMsg)
    \t}
    \treturn reasonMsg
    }
    """)


def _tree(root: Path, less: str = LESS) -> Path:
    (root / "pkg/scheduler/framework").mkdir(parents=True)
    (root / tiebreak.SCHEDULE_ONE).write_text("\n" * 1080 + less)
    (root / tiebreak.FRAMEWORK_TYPES).write_text("\n" * 960 + FIT)
    return root


def test_only_the_tie_clause_and_the_message_change(tmp_path):
    tree = _tree(tmp_path / "k")
    applied = patches.apply_series([tiebreak.patch_file(tmp_path / "cache", "1.36")], RES, source=lambda m, v: tree)
    less = applied.changes[("k8s.io/kubernetes", tiebreak.SCHEDULE_ONE)]
    assert "h[i].TotalScore > h[j].TotalScore ||" in less  # the higher score still wins
    assert "(h[i].TotalScore == h[j].TotalScore && h[i].Name < h[j].Name))" in less and "Randomizer" not in less
    fit = applied.changes[("k8s.io/kubernetes", tiebreak.FRAMEWORK_TYPES)]
    assert tiebreak.PLUGINS_MARK in fit and fit.rstrip().endswith("return reasonMsg\n}")


def test_a_minor_that_changed_the_heap_is_a_clear_patch_conflict(tmp_path):
    tree = _tree(tmp_path / "k", LESS.replace("Randomizer", "Shuffle"))
    with pytest.raises(patches.PatchConflict, match="zz-scheduler-build-tiebreak.patch.*schedule_one.go"):
        patches.apply_series([tiebreak.patch_file(tmp_path / "cache", "1.36")], RES, source=lambda m, v: tree)


@pytest.mark.parametrize("version, heap_file", [("v1.36.3", tiebreak.SCHEDULE_ONE), ("v1.37.2", tiebreak.SORTED_NODES)])
def test_the_patch_applies_to_each_real_release_the_suite_serves(tmp_path, version, heap_file):
    """The served releases' own source (tests/versions.yaml), fetched through the Go module proxy."""
    source = Path(toolchain.module_dir("k8s.io/kubernetes", version))
    minor = version[1:5]
    res = Resolution(requested=minor, version=version, minor=minor, go_version="1.26.0", staging_version="v0" + version[2:])
    applied = patches.apply_series([tiebreak.patch_file(tmp_path / "cache", minor)], res, source=lambda m, v: source)
    assert "h[i].Name < h[j].Name" in applied.changes[("k8s.io/kubernetes", heap_file)]
    assert tiebreak.PLUGINS_MARK in applied.changes[("k8s.io/kubernetes", tiebreak.FRAMEWORK_TYPES)]


def test_a_minor_before_the_score_heap_is_refused_in_one_line():
    with pytest.raises(UserError, match="compare builds need Kubernetes 1.36 or newer, not 1.34"):
        tiebreak.patch_text("1.34")
    assert tiebreak.SORTED_NODES in tiebreak.patch_text("1.38")  # the newest layout, checked by the build's applier


def test_a_compare_request_adds_the_patch_last_its_suffix_and_its_own_dist_name(tmp_path):
    request = dataclasses.replace(default_request(), name="underlay-scheduler", version_suffix="acme.1",
                                  patches=(Path("/p/0001.patch"),), cache_dir=tmp_path)
    out = compare_request(request, "1.36")
    assert out.patches[:-1] == (Path("/p/0001.patch"),) and out.patches[-1] == tiebreak.patch_file(tmp_path, "1.36")
    assert out.version_suffix == "acme.1.compare" and out.name == "underlay-scheduler-compare"
