"""The compare build: the spec's scheduler with score ties broken by node name, not at random.

kube-scheduler orders the scored nodes in a heap whose `Less` puts the higher TotalScore first and,
between equal totals, the higher `Randomizer` (a random number when extenders score, else the order the
parallel filter happened to find the nodes in). The same build twice can therefore place a pod on either
of two equal-score nodes, and `compare A A` would report moves that are noise. The patch replaces only the
tie clause: between equal totals the node whose name sorts first wins. Which nodes pass the filters and
how each scores is untouched (the patch changes no plugin and no score, only the order of equal totals).
A second hunk appends the plugins that rejected an unschedulable pod to the FitError message the pod's
PodScheduled condition carries (the scheduler knows them, Diagnosis.UnschedulablePlugins, but does not say
them), so the report names the plugin, not only its per-node reasons. It is applied after the spec's own series, like the debuggable recorder (build/debuggable.py).
"""

from __future__ import annotations

from pathlib import Path

from scheduler_build.build import patches
from scheduler_build.errors import UserError

SCHEDULE_ONE = "pkg/scheduler/schedule_one.go"
SORTED_NODES = "pkg/scheduler/framework/sorted_nodes.go"
# Where nodeScoreHeap lives, by minor (1.36 introduced the heap; 1.37 moved it). A newer minor gets the newest
# layout; if that moved again the build stops with the patch conflict naming the file.
HEAP_FILE = {(1, 36): (SCHEDULE_ONE, 1088), (1, 37): (SORTED_NODES, 61)}  # (major, minor) -> file, line
FRAMEWORK_TYPES = "pkg/scheduler/framework/types.go"
PLUGINS_MARK = "[unschedulable plugins: "  # what the FitError hunk appends; report.py reads it back
SUFFIX = "compare"  # appended to the stamped version: v1.36.3-acme.1.compare

PATCH = """\
--- a/{heap_file}
+++ b/{heap_file}
@@ -{line},4 +{line},5 @@
 func (h nodeScoreHeap) Less(i, j int) bool {{
+	// scheduler-build compare: equal totals are ordered by node name, so a replay is repeatable.
 	return (h[i].TotalScore > h[j].TotalScore ||
-		(h[i].TotalScore == h[j].TotalScore && h[i].Randomizer > h[j].Randomizer))
+		(h[i].TotalScore == h[j].TotalScore && h[i].Name < h[j].Name))
 }}
--- a/{types_file}
+++ b/{types_file}
@@ -972,5 +972,9 @@
 	postFilterMsg := f.Diagnosis.PostFilterMsg
 	if postFilterMsg != "" {{
 		reasonMsg += fmt.Sprintf(" %v", postFilterMsg)
 	}}
+	// scheduler-build compare: the plugins that rejected the pod, so the report can name them.
+	if len(f.Diagnosis.UnschedulablePlugins) != 0 {{
+		reasonMsg += " {mark}" + strings.Join(sets.List(f.Diagnosis.UnschedulablePlugins), ", ") + "]"
+	}}
 	return reasonMsg
"""


def patch_text(minor: str) -> str:
    """The patch for a Kubernetes minor ("1.36"); a minor before the score heap is one clear line."""
    try:
        major, number = (int(x) for x in minor.split(".")[:2])
    except ValueError:
        raise UserError(f"compare cannot tell the Kubernetes minor of {minor!r}", "name a minor such as 1.36") from None
    known = sorted(HEAP_FILE)
    if (major, number) < known[0]:
        raise UserError(f"compare builds need Kubernetes {known[0][0]}.{known[0][1]} or newer, not {minor}",
                        "build the sides for a newer minor, or pass built binaries (their ties stay random)")
    heap_file, line = HEAP_FILE.get((major, number), HEAP_FILE[known[-1]])
    return PATCH.format(heap_file=heap_file, line=line, types_file=FRAMEWORK_TYPES, mark=PLUGINS_MARK)


def patch_file(cache_root: Path, minor: str) -> Path:
    """The patch, content-addressed under the cache (the build's series key hashes its name and bytes)."""
    return patches.generated_patch(cache_root, "compare", "zz-scheduler-build-tiebreak.patch", patch_text(minor))


def stamped_suffix(suffix: str) -> str:
    """The version suffix of a compare build: the spec's, then `compare`."""
    return patches.stamped_suffix(suffix, SUFFIX)


def dist_name(name: str) -> str:
    """dist/<name>-compare: beside the release build, never over it."""
    return f"{name}-{SUFFIX}"
