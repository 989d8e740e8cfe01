"""The debuggable build's inputs (build/debuggable.py): the recorder patch, main.go, the request, the spec section."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from scheduler_build.build import debuggable, patches
from scheduler_build.build.pipeline import _debuggable
from scheduler_build.inputs.build import default_request as BuildRequest
from scheduler_build.build.workspace import render_wrapper
from scheduler_build.errors import UserError
from scheduler_build.resolve.versions import Resolution
from scheduler_build.spec.load import loads

RES = Resolution(requested="1.36", version="v1.36.3", minor="1.36", go_version="1.26.0", staging_version="v0.36.3")
FRAMEWORK_TAIL = textwrap.dedent("""\
    package runtime

    func NewFramework() {
    \tlogger.V(2).Info("the scheduler starts to work with those plugins", "Plugins", *f.ListPlugins())
    \tf.setInstrumentedPlugins()
    \treturn f, nil
    }
    """)


SCHEDULER_NEW = textwrap.dedent("""\
    package scheduler

    func New() {
    \textenders, err := buildExtenders(logger, options.extenders, options.profiles)
    \tif err != nil {
    \t\treturn nil, fmt.Errorf("couldn't build extenders: %w", err)
    \t}

    \tfwk, err := frameworkruntime.NewFramework()
    }
    """)


def _tree(root: Path, framework: str, scheduler: str = "\n" * 300 + SCHEDULER_NEW) -> Path:
    runtime = root / debuggable.RUNTIME_DIR
    runtime.mkdir(parents=True)
    (runtime / "framework.go").write_text(framework)
    (root / debuggable.SCHEDULER_FILE).write_text(scheduler)
    return root


def test_the_patch_adds_one_call_after_the_frameworks_own_wrapping_and_one_file(tmp_path):
    tree = _tree(tmp_path / "k", "\n" * 400 + FRAMEWORK_TAIL)
    applied = patches.apply_series([debuggable.recorder_patch(tmp_path / "cache")], RES, source=lambda m, v: tree)
    framework = applied.changes[("k8s.io/kubernetes", f"{debuggable.RUNTIME_DIR}/framework.go")]
    assert "\tf.setInstrumentedPlugins()\n\tf.setRecordedPlugins()\n\treturn f, nil\n" in framework
    recorder = applied.changes[("k8s.io/kubernetes", debuggable.RECORDER_FILE)]
    assert recorder == debuggable.recorder_source() and "func (f *frameworkImpl) setRecordedPlugins()" in recorder
    scheduler = applied.changes[("k8s.io/kubernetes", debuggable.SCHEDULER_FILE)]
    assert ('\t\treturn nil, fmt.Errorf("couldn\'t build extenders: %w", err)\n\t}\n'
            "\textenders = frameworkruntime.RecordedExtenders(extenders)\n\n") in scheduler
    assert "func RecordedExtenders(extenders []fwk.Extender) []fwk.Extender" in recorder


def test_a_minor_whose_scheduler_new_moved_the_extenders_is_a_clear_patch_conflict(tmp_path):
    moved = SCHEDULER_NEW.replace("extenders, err := buildExtenders", "exts, err := makeExtenders")
    tree = _tree(tmp_path / "k", "\n" * 400 + FRAMEWORK_TAIL, moved)
    with pytest.raises(patches.PatchConflict, match="zz-scheduler-build-recorder.patch.*scheduler.go"):
        patches.apply_series([debuggable.recorder_patch(tmp_path / "cache")], RES, source=lambda m, v: tree)


def test_a_minor_that_moved_the_hook_is_a_clear_patch_conflict(tmp_path):
    tree = _tree(tmp_path / "k", FRAMEWORK_TAIL.replace("f.setInstrumentedPlugins()", "f.instrument()"))
    with pytest.raises(patches.PatchConflict, match="zz-scheduler-build-recorder.patch.*framework.go"):
        patches.apply_series([debuggable.recorder_patch(tmp_path / "cache")], RES, source=lambda m, v: tree)


def test_the_patch_file_is_content_addressed_and_stable(tmp_path):
    first = debuggable.recorder_patch(tmp_path)
    assert debuggable.recorder_patch(tmp_path) == first and first.read_text() == debuggable.patch_text()


def test_main_go_sets_the_recorder_only_in_a_debuggable_build():
    plain = render_wrapper(RES).files["main.go"]
    assert "DebugRecorder" not in plain and "framework/runtime" not in plain
    on = debuggable.Debuggable(enabled=True, pod_label="example.com/explain", top_nodes=7, rejected_nodes=0)
    main = render_wrapper(RES, debuggable=on).files["main.go"]
    assert 'frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"' in main
    assert 'PodLabel:      "example.com/explain"' in main and "TopNodes:      7," in main and "RejectedNodes: 0," in main
    assert render_wrapper(RES, debuggable=debuggable.Debuggable()).files["main.go"] == plain


def test_a_debuggable_request_appends_the_recorder_the_suffix_and_its_own_dist_name(tmp_path):
    spec_patch = tmp_path / "0001.patch"
    request = BuildRequest(name="underlay", version_suffix="acme.1", patches=(spec_patch,), cache_dir=tmp_path,
                           debuggable=debuggable.Debuggable(enabled=True))
    done = _debuggable(request)
    assert done.patches[0] == spec_patch and done.patches[-1].name == "zz-scheduler-build-recorder.patch"
    assert done.version_suffix == "acme.1.debug" and done.name == "underlay-debuggable"
    assert _debuggable(BuildRequest(cache_dir=tmp_path)) == BuildRequest(cache_dir=tmp_path)
    with pytest.raises(UserError, match="kube-apiserver"):
        _debuggable(BuildRequest(component="kube-apiserver", cache_dir=tmp_path, debuggable=debuggable.Debuggable(enabled=True)))


SPEC = "name: s\nversion: 0.1.0\nkubernetes: {version: '1.36'}\n"


def test_spec_debuggable_section_defaults_and_bounds(tmp_path):
    assert loads(SPEC, tmp_path / "s.yaml").debuggable == debuggable.Debuggable()
    got = loads(SPEC + "debuggable: {enabled: true, podLabel: example.com/explain, topNodes: 3, rejectedNodes: 0}\n",
                          tmp_path / "s.yaml").debuggable
    assert got == debuggable.Debuggable(True, "example.com/explain", 3, 0)


@pytest.mark.parametrize("section, field", [
    ("{enabled: yes please}", "debuggable.enabled"), ("{podLabel: 'bad label!'}", "debuggable.podLabel"),
    ("{topNodes: 0}", "debuggable.topNodes"), ("{rejectedNodes: -1}", "debuggable.rejectedNodes"),
    ("{topnodes: 3}", "debuggable.topnodes"), ("[1]", "debuggable"),
])
def test_spec_debuggable_section_errors_name_the_field(tmp_path, section, field):
    with pytest.raises(UserError) as err:
        loads(SPEC + f"debuggable: {section}\n", tmp_path / "s.yaml")
    assert field in str(err.value) + str(getattr(err.value, "hint", ""))
