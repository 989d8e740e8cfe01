// Package noderes holds two plugins with non-standard exported names, as the
// big collections do (noderesources.AllocatableName / NewAllocatable).
package noderes

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	fwk "k8s.io/kube-scheduler/framework"

	"example.com/collection/apis/config"
)

// AllocatableName is the NodeAllocatable plugin's name in profiles.
const AllocatableName = "NodeAllocatable"

// Allocatable scores nodes by their allocatable CPU.
type Allocatable struct {
	most bool
}

var _ fwk.ScorePlugin = &Allocatable{}

// NewAllocatable is NodeAllocatable's factory; its args must arrive typed,
// which needs example.com/collection/apis/config/scheme imported.
func NewAllocatable(_ context.Context, obj runtime.Object, _ fwk.Handle) (fwk.Plugin, error) {
	args, ok := obj.(*config.NodeAllocatableArgs)
	if !ok {
		return nil, fmt.Errorf("want args to be of type NodeAllocatableArgs, got %T", obj)
	}
	if args.Mode != "Least" && args.Mode != "Most" {
		return nil, fmt.Errorf("pluginConfig[%s].args.mode must be Least or Most, got %q", AllocatableName, args.Mode)
	}
	return &Allocatable{most: args.Mode == "Most"}, nil
}

// NewLegacy has an old factory signature: registering it must not compile.
func NewLegacy(obj runtime.Object, _ fwk.Handle) (fwk.Plugin, error) {
	return NewAllocatable(context.Background(), obj, nil)
}

// Name returns the plugin's name.
func (a *Allocatable) Name() string { return AllocatableName }

// Score is the node's allocatable milli-CPU (scaled down), or its inverse.
func (a *Allocatable) Score(_ context.Context, _ fwk.CycleState, _ *v1.Pod, nodeInfo fwk.NodeInfo) (int64, *fwk.Status) {
	milli := nodeInfo.GetAllocatable().GetMilliCPU() / 1000
	if milli > fwk.MaxNodeScore {
		milli = fwk.MaxNodeScore
	}
	if a.most {
		return milli, nil
	}
	return fwk.MaxNodeScore - milli, nil
}

// ScoreExtensions is nil: scores are already in range.
func (a *Allocatable) ScoreExtensions() fwk.ScoreExtensions { return nil }
