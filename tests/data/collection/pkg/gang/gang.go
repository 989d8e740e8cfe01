// Package gang is a plugin in the short form (exported Name and New).
package gang

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	fwk "k8s.io/kube-scheduler/framework"
)

// Name is the plugin's name in profiles.
const Name = "CollectionGang"

// Gang admits every node (a stand-in for a gang-scheduling filter).
type Gang struct{}

var _ fwk.FilterPlugin = &Gang{}

// New is the factory.
func New(_ context.Context, _ runtime.Object, _ fwk.Handle) (fwk.Plugin, error) { return &Gang{}, nil }

// Name returns the plugin's name.
func (g *Gang) Name() string { return Name }

// Filter admits every node.
func (g *Gang) Filter(_ context.Context, _ fwk.CycleState, _ *v1.Pod, _ fwk.NodeInfo) *fwk.Status { return nil }
