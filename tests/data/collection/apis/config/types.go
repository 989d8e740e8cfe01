// Package config holds the collection's plugin args types. Like the big
// collections, they are registered with the scheduler's scheme only by the
// scheme package (apis/config/scheme), which the scheduler's main must import.
package config

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// NodeAllocatableArgs is the NodeAllocatable plugin's pluginConfig args: the
// scheduler finds the type by the kind <PluginName>Args.
type NodeAllocatableArgs struct {
	metav1.TypeMeta `json:",inline"`

	// Mode is Least or Most: prefer nodes with the least or most allocatable CPU.
	Mode string `json:"mode,omitempty"`
}

// DeepCopyObject makes NodeAllocatableArgs a runtime.Object.
func (in *NodeAllocatableArgs) DeepCopyObject() runtime.Object {
	out := *in
	return &out
}
