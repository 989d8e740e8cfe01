package zonecap

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

func pod(name, app string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, UID: "uid-" + "name", Labels: map[string]string{AppLabel: app}}}
}

func node(name, zone string, pods ...*v1.Pod) *framework.NodeInfo {
	info := framework.NewNodeInfo(pods...)
	info.SetNode(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{ZoneLabel: zone}}})
	return info
}

func TestFilter(t *testing.T) {
	plugin, err := New(&runtime.Unknown{Raw: []byte(`{"maxPerZone": 2}`)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	z := plugin.(*ZoneCap)
	state := framework.NewCycleState()
	z.reserved[key("z1", "web")] = 1
	if s := z.Filter(context.Background(), state, pod("p", "web"), node("a", "z1")); !s.IsSuccess() {
		t.Errorf("below the cap: %v", s)
	}
	z.reserved[key("z1", "web")] = 2
	s := z.Filter(context.Background(), state, pod("p", "web"), node("b", "z1"))
	if s.Code() != framework.Unschedulable {
		t.Errorf("at the cap: %v, want Unschedulable", s)
	}
	if s := z.Filter(context.Background(), state, pod("p", "db"), node("b", "z1")); !s.IsSuccess() {
		t.Errorf("another app: %v", s)
	}
	if s := z.Filter(context.Background(), state, pod("p", "web"), node("c", "z2")); !s.IsSuccess() {
		t.Errorf("another zone: %v", s)
	}
}

func TestArgs(t *testing.T) {
	if _, err := New(&runtime.Unknown{Raw: []byte(`{"maxPerZone": 0}`)}, nil); err == nil {
		t.Error("maxPerZone 0 accepted")
	}
}
