"""Unit tests for scheduler_build.retarget.advice: optional interfaces and deprecated names, from the framework's source."""

from __future__ import annotations

from scheduler_build.resolve import framework_surface
from scheduler_build.retarget import advice

FRAMEWORK = '''
const (
	// Deprecated: use MaxScore instead.
	MaxNodeScore int64 = MaxScore
	MaxScore int64 = 100
)

// FilterPlugin filters. Plugins that implement FilterPlugin should
// also implement SignPlugin to enable batching optimizations.
type FilterPlugin interface {
	Plugin
	Filter(ctx context.Context, state CycleState, pod *v1.Pod, nodeInfo NodeInfo) *Status
}

// ReservePlugin reserves.
type ReservePlugin interface {
	Plugin
	Reserve(ctx context.Context, state CycleState, p *v1.Pod, nodeName string) *Status
	Unreserve(ctx context.Context, state CycleState, p *v1.Pod, nodeName string)
}

// SignPlugin signs pods.
type SignPlugin interface {
	Plugin
	SignPod(ctx context.Context, pod *v1.Pod) ([]SignFragment, *Status)
}
'''
SURFACE = framework_surface.parse_go(FRAMEWORK, "v1.37.2")

PLUGIN = '''package limit

import (
	fwk "k8s.io/kube-scheduler/framework"
)

func (pl *Limit) Name() string { return "Limit" }

func (pl *Limit) Filter(ctx context.Context, s fwk.CycleState, p *v1.Pod, n fwk.NodeInfo) *fwk.Status {
	// fwk.MaxNodeScore in a comment is no use
	return score(fwk.MaxNodeScore, fwk.MaxScore)
}

func (h helper) Filter() {}
'''


def test_a_filter_without_sign_pod_is_told_what_it_costs():
    (found,) = advice.missing_interfaces({"limit.go": PLUGIN}, SURFACE)
    assert found.where == "Limit"
    assert "implements FilterPlugin but not SignPlugin (SignPod)" in found.text
    assert "to enable batching optimizations" in found.text and "batching is off" in found.text


def test_signing_plugins_and_plugins_at_other_points_are_not_flagged():
    signed = PLUGIN + "\nfunc (pl *Limit) SignPod(ctx context.Context, p *v1.Pod) ([]fwk.SignFragment, *fwk.Status) {}\n"
    assert advice.missing_interfaces({"limit.go": signed}, SURFACE) == []
    reserve = ("func (pl *R) Name() string { return \"R\" }\nfunc (pl *R) Reserve() {}\nfunc (pl *R) Unreserve() {}\n")
    assert advice.missing_interfaces({"r.go": reserve}, SURFACE) == []


def test_deprecated_uses_with_file_and_line_not_in_comments():
    (found,) = advice.deprecated_uses({"limit.go": PLUGIN}, SURFACE)
    assert found.line() == "limit.go:11: fwk.MaxNodeScore is deprecated in Kubernetes v1.37.2: use MaxScore instead."
    # Another package's MaxNodeScore is not the framework's.
    assert advice.deprecated_uses({"x.go": PLUGIN.replace('fwk "k8s.io/kube-scheduler/framework"', '"other/fwk"')},
                                  SURFACE) == []
