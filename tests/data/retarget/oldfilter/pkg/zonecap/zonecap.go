// Package zonecap is a small out-of-tree scheduling-framework plugin written for Kubernetes 1.27:
// Reserve counts each pod of an app against its node's zone (until Unreserve), and a node whose zone
// holds ZoneCapArgs.MaxPerZone reserved pods of the pod's app is filtered out.
package zonecap

import (
	"context"
	"fmt"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// Name is the plugin's name in a KubeSchedulerConfiguration profile.
const Name = "ZoneCap"

// ZoneLabel is the node label naming its zone; AppLabel the pod label naming its app.
const (
	ZoneLabel = "topology.kubernetes.io/zone"
	AppLabel  = "app"
)

// ZoneCapArgs are the plugin's pluginConfig args.
type ZoneCapArgs struct {
	MaxPerZone int `json:"maxPerZone"`
}

// ZoneCap is the plugin.
type ZoneCap struct {
	handle     framework.Handle
	maxPerZone int

	mu       sync.Mutex
	reserved map[string]int // zone/app -> pods reserved there, not yet bound
}

var _ framework.FilterPlugin = &ZoneCap{}
var _ framework.ReservePlugin = &ZoneCap{}

// New is the plugin factory (1.27: no context).
func New(obj runtime.Object, h framework.Handle) (framework.Plugin, error) {
	args := ZoneCapArgs{MaxPerZone: 3}
	if unknown, ok := obj.(*runtime.Unknown); ok && unknown != nil && len(unknown.Raw) > 0 {
		if err := decode(unknown.Raw, &args); err != nil {
			return nil, fmt.Errorf("%s args: %w", Name, err)
		}
	}
	if args.MaxPerZone < 1 {
		return nil, fmt.Errorf("%s args: maxPerZone must be at least 1, got %d", Name, args.MaxPerZone)
	}
	return &ZoneCap{handle: h, maxPerZone: args.MaxPerZone, reserved: map[string]int{}}, nil
}

// Name returns the plugin's name.
func (z *ZoneCap) Name() string {
	return Name
}

func key(zone, app string) string {
	return zone + "/" + app
}

// Filter rejects a node whose zone is at the cap for the pod's app.
func (z *ZoneCap) Filter(ctx context.Context, state *framework.CycleState, pod *v1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	node := nodeInfo.Node()
	if node == nil {
		return framework.NewStatus(framework.Error, "node not found")
	}
	app, zone := pod.Labels[AppLabel], node.Labels[ZoneLabel]
	if app == "" || zone == "" {
		return nil
	}
	z.mu.Lock()
	count := z.reserved[key(zone, app)]
	z.mu.Unlock()
	if count >= z.maxPerZone {
		return framework.NewStatus(framework.Unschedulable, fmt.Sprintf("zone %s runs %d/%d pods of %s", zone, count, z.maxPerZone, app))
	}
	return nil
}

// Reserve counts the pod against its node's zone.
func (z *ZoneCap) Reserve(ctx context.Context, state *framework.CycleState, pod *v1.Pod, nodeName string) *framework.Status {
	zone := z.zoneOf(nodeName)
	if zone == "" || pod.Labels[AppLabel] == "" {
		return nil
	}
	z.mu.Lock()
	defer z.mu.Unlock()
	z.reserved[key(zone, pod.Labels[AppLabel])]++
	return nil
}

// Unreserve releases the pod's place.
func (z *ZoneCap) Unreserve(ctx context.Context, state *framework.CycleState, pod *v1.Pod, nodeName string) {
	zone := z.zoneOf(nodeName)
	z.mu.Lock()
	defer z.mu.Unlock()
	if k := key(zone, pod.Labels[AppLabel]); z.reserved[k] > 0 {
		z.reserved[k]--
	}
}

func (z *ZoneCap) zoneOf(nodeName string) string {
	if z.handle == nil {
		return ""
	}
	info, err := z.handle.SnapshotSharedLister().NodeInfos().Get(nodeName)
	if err != nil || info.Node() == nil {
		return ""
	}
	return info.Node().Labels[ZoneLabel]
}
