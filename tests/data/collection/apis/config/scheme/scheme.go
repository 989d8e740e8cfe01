// Package scheme registers the collection's args types with kube-scheduler's
// configuration scheme, for its side effects only:
//
//	import _ "example.com/collection/apis/config/scheme"
//
// Without it the scheduler hands the plugins their args as *runtime.Unknown.
package scheme

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	kubeschedulerscheme "k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	configv1 "k8s.io/kubernetes/pkg/scheduler/apis/config/v1"

	"example.com/collection/apis/config"
)

const group = "kubescheduler.config.k8s.io"

// addKnownTypes registers each args type under v1 and the internal version
// (the same Go type: no conversion needed).
func addKnownTypes(s *runtime.Scheme) error {
	for _, version := range []string{"v1", runtime.APIVersionInternal} {
		s.AddKnownTypes(schema.GroupVersion{Group: group, Version: version}, &config.NodeAllocatableArgs{})
	}
	return nil
}

func init() {
	utilruntime.Must(addKnownTypes(kubeschedulerscheme.Scheme))
	utilruntime.Must(addKnownTypes(configv1.GetPluginArgConversionScheme()))
}
