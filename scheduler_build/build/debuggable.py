"""A debuggable build: the same scheduler with a recorder in its framework (docs/explain.md).

Why the framework and not the registry: `app.WithPlugin` registers out-of-tree plugins only
(the in-tree registry rejects a second factory under an existing name), and a factory wrapper
would have to implement every interface its plugin does (QueueSort, EnqueueExtensions,
SignPlugin...), which Go cannot compose at run time. The target's own framework already wraps
each extension point's plugin list after building it (`setInstrumentedPlugins`, for metrics);
the recorder adds one call beside that one and one new file in the same package, so every
plugin the profiles enable (in-tree, out-of-tree, patched) is recorded under its own name,
with no list of names here. Extenders are called outside the framework, so a second hook wraps
the extenders scheduler.New built (their filter verdicts and scores join the record). All of it is
applied as a patch after the spec's own series.
"""

from __future__ import annotations

from pathlib import Path

from scheduler_build import resources
from scheduler_build.build import patches
from scheduler_build.spec.model import Debuggable  # noqa: F401 - the spec declares it, the build reads it

RUNTIME_DIR = "pkg/scheduler/framework/runtime"
RECORDER_FILE = f"{RUNTIME_DIR}/zz_scheduler_build_recorder.go"
SUFFIX = "debug"  # appended to the stamped version: v1.36.3-acme.1.debug
LABEL = "scheduler-build.io/debuggable"  # on the image and the manifests

SCHEDULER_FILE = "pkg/scheduler/scheduler.go"

# The hooks: the line the framework ends NewFramework with, and the call added after it; and the
# extenders scheduler.New built (called outside the framework, schedule_one.go), wrapped as built.
_HOOK = """\
--- a/{runtime}/framework.go
+++ b/{runtime}/framework.go
@@ -500,3 +500,4 @@
 	logger.V(2).Info("the scheduler starts to work with those plugins", "Plugins", *f.ListPlugins())
 	f.setInstrumentedPlugins()
+	f.setRecordedPlugins()
 	return f, nil
--- a/{scheduler}
+++ b/{scheduler}
@@ -309,4 +309,5 @@
 	extenders, err := buildExtenders(logger, options.extenders, options.profiles)
 	if err != nil {
 		return nil, fmt.Errorf("couldn't build extenders: %w", err)
 	}
+	extenders = frameworkruntime.RecordedExtenders(extenders)
"""


def recorder_source() -> str:
    return resources.templates().joinpath("debuggable", "recorded_plugins.go").read_text(encoding="utf-8")


def patch_text() -> str:
    """The recorder as a unified diff against the kubernetes tree: the hook hunk, then the new file."""
    source = recorder_source()
    lines = source.splitlines(keepends=True)
    added = "".join("+" + line for line in lines)
    new_file = (f"--- /dev/null\n+++ b/{RECORDER_FILE}\n@@ -0,0 +1,{len(lines)} @@\n{added}")
    return _HOOK.replace("{runtime}", RUNTIME_DIR).replace("{scheduler}", SCHEDULER_FILE) + new_file


def recorder_patch(cache_root: Path) -> Path:
    """The patch file, content-addressed under the cache (the series key hashes its name and bytes)."""
    return patches.generated_patch(cache_root, "debuggable", "zz-scheduler-build-recorder.patch", patch_text())


def stamped_suffix(suffix: str) -> str:
    """The version suffix of a debuggable build: the spec's, then `debug`."""
    return patches.stamped_suffix(suffix, SUFFIX)


def dist_name(name: str) -> str:
    """dist/<name>-debuggable: beside the release build, never over it."""
    return f"{name}-debuggable"
