// Package nodelabelscore is a Score plugin written for Kubernetes 1.27, in the style of the
// scheduler-plugins sample plugins: the pre-1.28 factory (no context), framework types from
// k8s.io/kubernetes/pkg/scheduler/framework, and Score given a node name.
package nodelabelscore

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
)

// Name is the plugin's name in the scheduler's configuration.
const Name = "NodeLabelScore"

// Label is the node label this plugin prefers.
const Label = "example.com/fast"

// NodeLabelScore scores nodes carrying Label highest.
type NodeLabelScore struct {
	handle framework.Handle
}

var _ framework.ScorePlugin = &NodeLabelScore{}

// Registry registers the plugin with an out-of-tree registry.
var Registry = frameworkruntime.Registry{Name: New}

// Name returns the plugin's name.
func (pl *NodeLabelScore) Name() string { return Name }

// Score is called on each filtered node.
func (pl *NodeLabelScore) Score(ctx context.Context, state *framework.CycleState, pod *v1.Pod, nodeName string) (int64, *framework.Status) {
	nodeInfo, err := pl.handle.SnapshotSharedLister().NodeInfos().Get(nodeName)
	if err != nil {
		return 0, framework.NewStatus(framework.Error, fmt.Sprintf("getting node %q from snapshot: %v", nodeName, err))
	}
	if _, ok := nodeInfo.Node().Labels[Label]; ok {
		return framework.MaxNodeScore, nil
	}
	return framework.MinNodeScore, nil
}

// ScoreExtensions of the Score plugin.
func (pl *NodeLabelScore) ScoreExtensions() framework.ScoreExtensions { return nil }

// New initializes a new plugin and returns it.
func New(_ runtime.Object, h framework.Handle) (framework.Plugin, error) {
	return &NodeLabelScore{handle: h}, nil
}
