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

import hashlib
from pathlib import Path

from scheduler_build.atomic import write_atomic

SCHEDULE_ONE = "pkg/scheduler/schedule_one.go"
FRAMEWORK_TYPES = "pkg/scheduler/framework/types.go"
PLUGINS_MARK = "[unschedulable plugins: "  # what the FitError hunk appends; report.py reads it back
SUFFIX = "compare"  # appended to the stamped version: v1.36.3-acme.1.compare

PATCH = f"""\
--- a/{SCHEDULE_ONE}
+++ b/{SCHEDULE_ONE}
@@ -1088,4 +1088,5 @@
 func (h nodeScoreHeap) Less(i, j int) bool {{
+	// scheduler-build compare: equal totals are ordered by node name, so a replay is repeatable.
 	return (h[i].TotalScore > h[j].TotalScore ||
-		(h[i].TotalScore == h[j].TotalScore && h[i].Randomizer > h[j].Randomizer))
+		(h[i].TotalScore == h[j].TotalScore && h[i].Name < h[j].Name))
 }}
--- a/{FRAMEWORK_TYPES}
+++ b/{FRAMEWORK_TYPES}
@@ -972,5 +972,9 @@
 	postFilterMsg := f.Diagnosis.PostFilterMsg
 	if postFilterMsg != "" {{
 		reasonMsg += fmt.Sprintf(" %v", postFilterMsg)
 	}}
+	// scheduler-build compare: the plugins that rejected the pod, so the report can name them.
+	if len(f.Diagnosis.UnschedulablePlugins) != 0 {{
+		reasonMsg += " {PLUGINS_MARK}" + strings.Join(sets.List(f.Diagnosis.UnschedulablePlugins), ", ") + "]"
+	}}
 	return reasonMsg
"""


def patch_file(cache_root: Path) -> Path:
    """The patch, content-addressed under the cache (the build's series key hashes its name and bytes)."""
    digest = hashlib.sha256(PATCH.encode()).hexdigest()[:16]
    path = Path(cache_root) / "compare" / digest / "zz-scheduler-build-tiebreak.patch"
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, PATCH)
    return path


def stamped_suffix(suffix: str) -> str:
    """The version suffix of a compare build: the spec's, then `compare`."""
    suffix = suffix.strip().lstrip("-")
    return f"{suffix}.{SUFFIX}" if suffix else SUFFIX


def dist_name(name: str) -> str:
    """dist/<name>-compare: beside the release build, never over it."""
    return f"{name}-{SUFFIX}"
