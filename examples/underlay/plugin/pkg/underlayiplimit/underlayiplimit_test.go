package underlayiplimit

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	st "k8s.io/kubernetes/pkg/scheduler/testing"
)

// newPlugin builds the plugin through New, as the scheduler does, from raw
// pluginConfig args (empty: no pluginConfig entry).
func newPlugin(t testing.TB, raw string) *UnderlayIPLimit {
	t.Helper()
	var obj runtime.Object
	if raw != "" {
		obj = &runtime.Unknown{Raw: []byte(raw), ContentType: runtime.ContentTypeJSON}
	}
	p, err := New(context.Background(), obj, nil)
	if err != nil {
		t.Fatalf("New(%s): %v", raw, err)
	}
	return p.(*UnderlayIPLimit)
}

func optedIn(name string) *v1.Pod {
	return st.MakePod().Name(name).UID(name).Label(DefaultPodLabel, "true").Obj()
}

// node is a snapshot entry: `withIP` opted-in pods and `without` other pods;
// capacity "" leaves the label off.
func node(name, capacity string, withIP, without int) fwk.NodeInfo {
	var pods []*v1.Pod
	for i := 0; i < withIP; i++ {
		pods = append(pods, st.MakePod().Name(fmt.Sprintf("%s-ip-%d", name, i)).UID(fmt.Sprintf("%s-ip-%d", name, i)).
			Label(DefaultPodLabel, "true").Node(name).Obj())
	}
	for i := 0; i < without; i++ {
		pods = append(pods, st.MakePod().Name(fmt.Sprintf("%s-%d", name, i)).UID(fmt.Sprintf("%s-%d", name, i)).Node(name).Obj())
	}
	wrapper := st.MakeNode().Name(name)
	if capacity != "" {
		wrapper = wrapper.Label(DefaultCapacityLabel, capacity)
	}
	info := framework.NewNodeInfo(pods...)
	info.SetNode(wrapper.Obj())
	return info
}

// filter runs PreFilter then Filter, as the framework does.
func filter(t *testing.T, pl *UnderlayIPLimit, pod *v1.Pod, ni fwk.NodeInfo) *fwk.Status {
	t.Helper()
	state := framework.NewCycleState()
	if _, s := pl.PreFilter(context.Background(), state, pod, []fwk.NodeInfo{ni}); s.Code() == fwk.Skip {
		return nil
	} else if !s.IsSuccess() {
		t.Fatalf("PreFilter: %v", s)
	}
	return pl.Filter(context.Background(), state, pod, ni)
}

func TestArgs(t *testing.T) {
	pl := newPlugin(t, "")
	if pl.args.DefaultCapacity != 10 || pl.args.CapacityLabel != DefaultCapacityLabel || pl.args.PodLabel != DefaultPodLabel {
		t.Errorf("defaults = %+v", pl.args)
	}
	pl = newPlugin(t, `{"defaultCapacity": 3, "capacityLabel": "acme.io/ips", "podLabel": "acme.io/needs-ip"}`)
	if pl.args.DefaultCapacity != 3 || pl.args.CapacityLabel != "acme.io/ips" || pl.args.PodLabel != "acme.io/needs-ip" {
		t.Errorf("args = %+v", pl.args)
	}
	for _, raw := range []string{`{"defaultCapacity": -1}`, `{"capacityLabel": "not a label"}`, `{"defaultCapacity": "ten"}`} {
		if _, err := New(context.Background(), &runtime.Unknown{Raw: []byte(raw)}, nil); err == nil {
			t.Errorf("New(%s) accepted invalid args", raw)
		}
	}
}

func TestFilter(t *testing.T) {
	pl := newPlugin(t, "")
	pod := optedIn("p")
	cases := []struct {
		node   fwk.NodeInfo
		code   fwk.Code
		reason string
	}{
		{node("free", "2", 1, 5), fwk.Success, ""},
		{node("full", "2", 2, 0), fwk.Unschedulable, "node full has no free underlay IP (2/2 used)"},
		{node("default-full", "", 10, 0), fwk.Unschedulable, "node default-full has no free underlay IP (10/10 used)"},
		{node("default-free", "", 9, 30), fwk.Success, ""},
		{node("zero", "0", 0, 0), fwk.Unschedulable, "node zero has no free underlay IP (0/0 used)"},
		{node("bad", "+3", 0, 0), fwk.UnschedulableAndUnresolvable, `node bad has an invalid underlay.example.com/capacity label "+3"`},
	}
	for _, c := range cases {
		s := filter(t, pl, pod, c.node)
		if s.Code() != c.code || (c.reason != "" && s.Message() != c.reason) {
			t.Errorf("Filter(%s) = %v %q, want %v %q", c.node.Node().Name, s.Code(), s.Message(), c.code, c.reason)
		}
	}
	// A pod that does not opt in is never rejected (PreFilter skips Filter).
	if s := filter(t, pl, st.MakePod().Name("plain").UID("plain").Obj(), node("full", "2", 2, 0)); !s.IsSuccess() {
		t.Errorf("Filter rejected a pod without the label: %v", s)
	}
}

func TestScore(t *testing.T) {
	pl := newPlugin(t, "")
	state := framework.NewCycleState()
	pod := optedIn("p")
	if _, s := pl.PreFilter(context.Background(), state, pod, nil); !s.IsSuccess() {
		t.Fatal(s)
	}
	var scores fwk.NodeScoreList
	want := map[string]int64{"empty": 100, "half": 50, "full": 0, "bad": 0}
	for _, ni := range []fwk.NodeInfo{node("empty", "4", 0, 3), node("half", "4", 2, 0), node("full", "4", 4, 0), node("bad", "x", 0, 0)} {
		score, s := pl.Score(context.Background(), state, pod, ni)
		if !s.IsSuccess() {
			t.Fatal(s)
		}
		scores = append(scores, fwk.NodeScore{Name: ni.Node().Name, Score: score})
	}
	if s := pl.ScoreExtensions().NormalizeScore(context.Background(), state, pod, scores); !s.IsSuccess() {
		t.Fatal(s)
	}
	for _, s := range scores {
		if s.Score != want[s.Name] {
			t.Errorf("score(%s) = %d, want %d", s.Name, s.Score, want[s.Name])
		}
	}
	plain := st.MakePod().Name("plain").UID("plain").Obj()
	plainState := framework.NewCycleState()
	pl.PreFilter(context.Background(), plainState, plain, nil)
	if score, _ := pl.Score(context.Background(), plainState, plain, node("empty", "4", 0, 0)); score != 0 {
		t.Errorf("a pod without the label scored %d, want 0", score)
	}
	// PreScore skips Score for a pod without the label, and only for it.
	if s := pl.PreScore(context.Background(), plainState, plain, nil); s.Code() != fwk.Skip {
		t.Errorf("PreScore(plain) = %v, want Skip", s.Code())
	}
	if s := pl.PreScore(context.Background(), state, pod, nil); !s.IsSuccess() {
		t.Errorf("PreScore(opted in) = %v, want Success", s.Code())
	}
}

func TestReserveKeepsCountUntilBound(t *testing.T) {
	pl := newPlugin(t, "")
	ni := node("n", "2", 1, 0)
	first, second := optedIn("first"), optedIn("second")
	state := framework.NewCycleState()
	if s := filter(t, pl, first, ni); !s.IsSuccess() {
		t.Fatalf("first pod: %v", s)
	}
	pl.PreFilter(context.Background(), state, first, nil)
	if s := pl.Reserve(context.Background(), state, first, "n"); !s.IsSuccess() {
		t.Fatal(s)
	}
	// The snapshot does not show `first` yet: the reservation fills the node.
	if s := filter(t, pl, second, ni); s.Code() != fwk.Unschedulable || s.Message() != "node n has no free underlay IP (2/2 used)" {
		t.Errorf("after Reserve: %v %q", s.Code(), s.Message())
	}
	// Once the snapshot shows the pod, it is counted once, not twice.
	withFirst := node("n", "3", 1, 0)
	if err := addPod(withFirst, first, "n"); err != nil {
		t.Fatal(err)
	}
	if s := filter(t, pl, second, withFirst); !s.IsSuccess() {
		t.Errorf("reserved pod counted twice: %v", s)
	}
	pl.Unreserve(context.Background(), state, first, "n")
	if s := filter(t, pl, second, ni); !s.IsSuccess() {
		t.Errorf("after Unreserve: %v", s)
	}
	pl.Reserve(context.Background(), state, first, "n")
	// A reservation counts on its own node only.
	if s := filter(t, pl, second, node("other", "1", 0, 0)); !s.IsSuccess() {
		t.Errorf("a reservation on n filled node other: %v", s)
	}
	pl.PostBind(context.Background(), state, first, "n")
	if len(pl.reserved) != 0 || len(pl.byNode) != 0 {
		t.Errorf("PostBind left %v %v", pl.reserved, pl.byNode)
	}
	// Pods without the label reserve nothing.
	plain := st.MakePod().Name("plain").UID("plain").Obj()
	plainState := framework.NewCycleState()
	pl.PreFilter(context.Background(), plainState, plain, nil)
	pl.Reserve(context.Background(), plainState, plain, "n")
	if len(pl.reserved) != 0 {
		t.Errorf("a pod without the label was reserved: %v", pl.reserved)
	}
}

func addPod(ni fwk.NodeInfo, pod *v1.Pod, nodeName string) error {
	bound := pod.DeepCopy()
	bound.Spec.NodeName = nodeName
	info, err := framework.NewPodInfo(bound)
	if err != nil {
		return err
	}
	ni.AddPodInfo(info)
	return nil
}

// signature is the pod's signature as the framework builds it from this
// plugin's fragments: their JSON.
func signature(t *testing.T, pl *UnderlayIPLimit, pod *v1.Pod) string {
	t.Helper()
	fragments, status := pl.SignPod(context.Background(), pod)
	if !status.IsSuccess() {
		t.Fatalf("SignPod(%s) = %v, want Success", pod.Name, status)
	}
	text, err := json.Marshal(fragments)
	if err != nil {
		t.Fatalf("fragments of %s are not JSON: %v", pod.Name, err)
	}
	return string(text)
}

// TestSignPod: pods alike in the opt-in label share a signature and a verdict;
// an opted-in pod and one that is not get different signatures and verdicts.
func TestSignPod(t *testing.T) {
	pl := newPlugin(t, `{"defaultCapacity": 1}`)
	full := node("full", "", 1, 0)
	verdict := func(pod *v1.Pod) string {
		state := framework.NewCycleState()
		_, pre := pl.PreFilter(context.Background(), state, pod, nil)
		score, _ := pl.Score(context.Background(), state, pod, node("empty", "", 0, 0))
		return fmt.Sprint(pre.Code(), pl.Filter(context.Background(), state, pod, full).Code(), score)
	}
	a, b := optedIn("a"), st.MakePod().Name("b").UID("b").Namespace("other").Priority(9).
		Labels(map[string]string{DefaultPodLabel: "true", "app": "web"}).Obj()
	plain, other := st.MakePod().Name("c").UID("c").Obj(), st.MakePod().Name("d").UID("d").Label(DefaultPodLabel, "no").Obj()
	for _, pair := range [][2]*v1.Pod{{a, b}, {plain, other}} {
		if x, y := signature(t, pl, pair[0]), signature(t, pl, pair[1]); x != y {
			t.Errorf("%s and %s are alike in the opt-in label but signed %s and %s", pair[0].Name, pair[1].Name, x, y)
		}
		if verdict(pair[0]) != verdict(pair[1]) {
			t.Errorf("%s and %s share a signature but not a verdict", pair[0].Name, pair[1].Name)
		}
	}
	if signature(t, pl, a) == signature(t, pl, plain) {
		t.Errorf("an opted-in pod and a plain one share the signature %s", signature(t, pl, a))
	}
	if verdict(a) == verdict(plain) {
		t.Errorf("the opt-in label changed no verdict (%s): SignPod signs what the plugin does not read", verdict(a))
	}
}

// TestNodeCountFollowsTheNodeInfo: the per-node count is cached by NodeInfo
// generation, so a pod added to the node, a relabelled node and another
// NodeInfo of the same name (preemption's copies) are each counted afresh.
func TestNodeCountFollowsTheNodeInfo(t *testing.T) {
	pl := newPlugin(t, "")
	pod := optedIn("incoming")
	ni := node("n", "2", 1, 0)
	if s := filter(t, pl, pod, ni); !s.IsSuccess() {
		t.Fatalf("1/2 used: %v", s)
	}
	if err := addPod(ni, optedIn("second"), "n"); err != nil {
		t.Fatal(err)
	}
	if s := filter(t, pl, pod, ni); s.Code() != fwk.Unschedulable {
		t.Errorf("after a pod was added to the same NodeInfo: %v, want Unschedulable (a stale count)", s)
	}
	ni.(*framework.NodeInfo).SetNode(st.MakeNode().Name("n").Label(DefaultCapacityLabel, "3").Obj())
	if s := filter(t, pl, pod, ni); !s.IsSuccess() {
		t.Errorf("after the capacity label went to 3: %v (a stale capacity)", s)
	}
	if s := filter(t, pl, pod, node("n", "2", 0, 0)); !s.IsSuccess() {
		t.Errorf("another, empty NodeInfo of the same name: %v", s)
	}
}

func TestReservationsTheSnapshotShowsAreNotLookedUpPerNode(t *testing.T) {
	first, second := optedIn("first"), optedIn("second")
	placed := first.DeepCopy()
	placed.Spec.NodeName = "n"
	n := st.MakeNode().Name("n").Label(DefaultCapacityLabel, "2").Obj()
	for _, c := range []struct {
		name     string
		pods     []*v1.Pod
		unseen   int
		wantCode fwk.Code
	}{
		{"the snapshot shows the reserved pod", []*v1.Pod{placed}, 0, fwk.Success},
		{"the snapshot does not show it yet", nil, 1, fwk.Success},
	} {
		t.Run(c.name, func(t *testing.T) {
			pl := newPlugin(t, "")
			snapshot := cache.NewSnapshot(c.pods, []*v1.Node{n})
			pl.handle = snapshotHandle{snapshot: snapshot}
			pl.Reserve(context.Background(), framework.NewCycleState(), first, "n")
			state := framework.NewCycleState()
			nodes, err := snapshot.NodeInfos().List()
			if err != nil {
				t.Fatal(err)
			}
			pl.PreFilter(context.Background(), state, second, nodes)
			if got := len(pl.cycle(state, second).reserved); got != c.unseen {
				t.Fatalf("%d node(s) with reservations left for Filter to look up, want %d", got, c.unseen)
			}
			// Either way the reserved pod counts once: 1 of 2 used, room for the second.
			if s := pl.Filter(context.Background(), state, second, nodes[0]); s.Code() != c.wantCode {
				t.Errorf("Filter: %v, want %v", s, c.wantCode)
			}
			third := optedIn("third")
			pl.Reserve(context.Background(), state, second, "n")
			state = framework.NewCycleState()
			pl.PreFilter(context.Background(), state, third, nodes)
			if s := pl.Filter(context.Background(), state, third, nodes[0]); s.Code() != fwk.Unschedulable {
				t.Errorf("with both reserved, Filter: %v, want Unschedulable (2/2 used)", s)
			}
		})
	}
}
