package underlayiplimit

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
)

const (
	// DefaultCapacity is a node's underlay-IP quota when it has no capacity label.
	DefaultCapacity int64 = 10
	// DefaultCapacityLabel is the node label holding the quota, e.g. "4".
	DefaultCapacityLabel = "underlay.example.com/capacity"
	// DefaultPodLabel is the pod label that opts a pod in, with the value "true".
	DefaultPodLabel = "underlay.example.com/ip"
)

// UnderlayIPLimitArgs is the plugin's configuration: the `args` of its
// pluginConfig entry. The scheduler finds it by name, so it must stay `<PluginName>Args`.
type UnderlayIPLimitArgs struct {
	// DefaultCapacity applies to nodes without the capacity label.
	DefaultCapacity int64 `json:"defaultCapacity,omitempty"`
	// CapacityLabel is the node label with the node's quota of underlay IPs.
	CapacityLabel string `json:"capacityLabel,omitempty"`
	// PodLabel opts a pod in when its value is "true".
	PodLabel string `json:"podLabel,omitempty"`
}

// SetDefaults fills the fields pluginConfig left unset.
func (a *UnderlayIPLimitArgs) SetDefaults() {
	if a.DefaultCapacity == 0 {
		a.DefaultCapacity = DefaultCapacity
	}
	if a.CapacityLabel == "" {
		a.CapacityLabel = DefaultCapacityLabel
	}
	if a.PodLabel == "" {
		a.PodLabel = DefaultPodLabel
	}
}

// Validate reports the first invalid field, naming it as pluginConfig does.
func (a *UnderlayIPLimitArgs) Validate() error {
	if a.DefaultCapacity < 0 {
		return fmt.Errorf("pluginConfig[%s].args.defaultCapacity must not be negative, got %d", Name, a.DefaultCapacity)
	}
	for field, label := range map[string]string{"capacityLabel": a.CapacityLabel, "podLabel": a.PodLabel} {
		if errs := validation.IsQualifiedName(label); len(errs) > 0 {
			return fmt.Errorf("pluginConfig[%s].args.%s %q is not a label key: %s", Name, field, label, errs[0])
		}
	}
	return nil
}

// DecodeArgs decodes pluginConfig args (nil when the profile has none), applies
// the defaults and validates the result.
func DecodeArgs(obj runtime.Object) (*UnderlayIPLimitArgs, error) {
	args := &UnderlayIPLimitArgs{}
	if err := frameworkruntime.DecodeInto(obj, args); err != nil {
		return nil, fmt.Errorf("decoding %sArgs: %w", Name, err)
	}
	args.SetDefaults()
	if err := args.Validate(); err != nil {
		return nil, err
	}
	return args, nil
}
