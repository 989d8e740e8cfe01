package noderes

import (
	"context"
	"errors"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	fwk "k8s.io/kube-scheduler/framework"

	"example.com/collection/pkg/hooks"
)

// FreeName is the NodeFree plugin's name in profiles.
const FreeName = "NodeFree"

// Free filters out nodes marked unschedulable.
type Free struct{}

var _ fwk.FilterPlugin = &Free{}

// NewFree is NodeFree's factory; it needs the hooks installed by a side-effect import.
func NewFree(_ context.Context, _ runtime.Object, _ fwk.Handle) (fwk.Plugin, error) {
	if !hooks.Registered() {
		return nil, errors.New("NodeFree needs example.com/collection/pkg/hooks/register imported for its side effects")
	}
	return &Free{}, nil
}

// Name returns the plugin's name.
func (f *Free) Name() string { return FreeName }

// Filter rejects nodes whose spec says unschedulable.
func (f *Free) Filter(_ context.Context, _ fwk.CycleState, _ *v1.Pod, nodeInfo fwk.NodeInfo) *fwk.Status {
	if node := nodeInfo.Node(); node != nil && node.Spec.Unschedulable {
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "node is unschedulable")
	}
	return nil
}
