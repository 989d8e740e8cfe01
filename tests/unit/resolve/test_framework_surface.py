"""Unit tests for scheduler_build.resolve.framework_surface: what a release's framework source offers plugins."""

from __future__ import annotations

import json

from scheduler_build.resolve import framework_surface

# Excerpts of k8s.io/kube-scheduler v0.37.2 framework/interface.go, as written there.
SOURCE = '''
const (
	// MaxNodeScore is the maximum score a Score plugin is expected to return.
	//
	// Deprecated: use MaxScore instead.
	MaxNodeScore int64 = MaxScore

	// MaxScore is the maximum score a Score or PlacementScore plugin is expected to return.
	MaxScore int64 = 100
)

// PreFilterPlugin is an interface that must be implemented by "PreFilter" plugins.
// These plugins are called at the beginning of the scheduling cycle. Plugins that implement PreFilterPlugin should
// also implement SignPlugin to enable batching optimizations.
type PreFilterPlugin interface {
	Plugin
}

// FilterPlugin is an interface for Filter plugins. Plugins that implement FilterPlugin should
// also implement SignPlugin to enable batching optimizations.
type FilterPlugin interface {
	Plugin
}

// PostFilterPlugin is an interface for "PostFilter" plugins.
type PostFilterPlugin interface {
	Plugin
}

// PlacementScorePlugin scores placements.
type PlacementScorePlugin interface {
	Plugin
}

// SignPlugin is an interface that should be implemented by plugins that either filter or score
type SignPlugin interface {
	Plugin
}

// Deprecated: use NodeToStatusReader.
type NodeToStatusMap map[string]*Status
'''


def test_reads_interfaces_constants_and_what_batching_needs_signed():
    surface = framework_surface.parse_go(SOURCE, "v1.37.2")
    assert surface.interfaces == ("PreFilterPlugin", "FilterPlugin", "PostFilterPlugin", "PlacementScorePlugin", "SignPlugin")
    assert surface.can_sign
    assert surface.sign_points() == ("PreFilterPlugin", "FilterPlugin")  # PostFilter is not asked to sign
    assert surface.wanted_by("FilterPlugin") == ("SignPlugin",) and surface.wanted_by("PostFilterPlugin") == ()
    assert surface.constants == ("MaxNodeScore", "MaxScore")
    assert surface.score_bound("Max") == "MaxScore"
    assert surface.deprecated == {"MaxNodeScore": "use MaxScore instead.", "NodeToStatusMap": "use NodeToStatusReader."}


def test_an_older_release_without_sign_plugin_or_max_score():
    older = SOURCE.replace("SignPlugin", "OtherPlugin").replace("MaxScore int64 = 100", "").replace("// Deprecated: use MaxScore instead.", "")
    surface = framework_surface.parse_go(older, "v1.34.4")
    assert not surface.can_sign and surface.sign_points() == ()
    assert surface.score_bound("Max") == "MaxNodeScore" and surface.score_bound("Min") == "MinNodeScore"
    assert "MaxNodeScore" not in surface.deprecated


def test_cache_round_trip(tmp_path, monkeypatch):
    surface = framework_surface.parse_go(SOURCE, "v1.37.2")
    path = framework_surface._cache_file(tmp_path, "v1.37.2")
    path.parent.mkdir(parents=True)

    path.write_text(json.dumps({"format": framework_surface.CACHE_FORMAT, **surface.to_dict()}))
    monkeypatch.setattr(framework_surface.toolchain, "mod_download", lambda *a, **k: (_ for _ in ()).throw(AssertionError("downloaded")))
    assert framework_surface.framework_surface("v1.37.2", tmp_path) == surface


def test_imports_are_read_from_import_declarations_only():
    text = ('package framework\n\nimport "fmt"\n\nimport (\n\tklog "k8s.io/klog/v2"\n\t"k8s.io/client-go/tools/events"\n'
            '\tv1 "k8s.io/api/core/v1"\n\t_ "embed"\n)\n\nfunc f() string {\n\treturn "x"\n}\n')
    assert framework_surface.parse_imports(text) == {"fmt": "fmt", "klog": "k8s.io/klog/v2",
                                                     "events": "k8s.io/client-go/tools/events", "v1": "k8s.io/api/core/v1"}
    assert framework_surface.parse_go(text).imports["klog"] == "k8s.io/klog/v2"
