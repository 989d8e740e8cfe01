// Package underlayiplimit implements the UnderlayIPLimit scheduling-framework
// plugin: each node hosts at most N pods that need an underlay IP.
//
// Scaffolded with `inv scaffold.plugin --name UnderlayIPLimit --points
// prefilter,filter,score,reserve,postbind --k8s-version 1.36`, then filled in.
// The semantics are those of the bundled Python extender (scheduler_build/extender):
//   - a node's capacity is the integer in its capacity label, DefaultCapacity
//     when the label is absent; a label that is not a non-negative integer makes
//     the node fail Filter and score 0;
//   - a pod opts in with the pod label set to "true";
//   - usage of a node = opted-in pods on it (its NodeInfo), plus pods reserved
//     there by this plugin that the snapshot does not show yet;
//   - Filter rejects an opted-in pod on nodes with usage >= capacity;
//   - Score = MaxScore * free / capacity, so nodes with more free IPs win;
//     pods that do not opt in are skipped at PreFilter and PreScore, so
//     Filter and Score never run for them (no preference, no cost);
//   - SignPod signs whether the pod opts in, all that PreFilter, Filter and
//     Score read of it, so the scheduler can batch pods (KEP-5598).
package underlayiplimit

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	fwk "k8s.io/kube-scheduler/framework"
)

// Name is the plugin's name in a KubeSchedulerConfiguration profile.
const Name = "UnderlayIPLimit"

// stateKey is where PreFilter leaves this cycle's data for Filter and Score.
const stateKey fwk.StateKey = Name + "/prefilter"

// preFilterState is this cycle's data, computed once at PreFilter so that
// Filter and Score, called for hundreds of nodes per pod on 16 goroutines,
// take no lock and walk no pods: whether the pod needs an underlay IP, and a
// copy of the reservations (a handful: pods reserved but not yet bound) by node.
type preFilterState struct {
	wants    bool
	reserved map[string][]types.UID
}

// Clone is required by fwk.StateData; the state is read-only after PreFilter.
func (s *preFilterState) Clone() fwk.StateData {
	return s
}

// UnderlayIPLimit is the plugin; New creates one per profile that enables it.
type UnderlayIPLimit struct {
	handle fwk.Handle
	args   UnderlayIPLimitArgs

	// reserved maps opted-in pods that passed Reserve to their node until they
	// are bound or unreserved: the next cycle's snapshot may not show them yet.
	// byNode indexes the same pods by node, so Filter and Score, which run for
	// many nodes in parallel, look at one node's few entries under a read lock
	// instead of every reservation under an exclusive one.
	mu       sync.RWMutex
	reserved map[types.UID]string
	byNode   map[string]map[types.UID]struct{}

	// usage caches each node's counts by NodeInfo generation (usagecache.go),
	// so the per-node path neither walks the node's pods nor takes a lock.
	usage *usageCache

	// last is the latest cycle PreFilter saw, so its Filter and Score calls
	// find their state without a sync.Map lookup per node (see cycle).
	last atomic.Pointer[cycleData]
}

// cycleData pairs a CycleState with the state PreFilter wrote into it.
type cycleData struct {
	state fwk.CycleState
	data  *preFilterState
}

var _ fwk.PreFilterPlugin = &UnderlayIPLimit{}

var _ fwk.FilterPlugin = &UnderlayIPLimit{}

var _ fwk.PreScorePlugin = &UnderlayIPLimit{}

var _ fwk.ScorePlugin = &UnderlayIPLimit{}

var _ fwk.ReservePlugin = &UnderlayIPLimit{}

var _ fwk.PostBindPlugin = &UnderlayIPLimit{}

var _ fwk.SignPlugin = &UnderlayIPLimit{}

// wantsSignerName names SignPod's fragment after signers.go's convention: the
// field read, then the function applied to it.
const wantsSignerName = "v1.Pod.Labels.UnderlayIPLimitWants()"

// New is the factory registered with app.WithPlugin: it decodes, defaults and
// validates the pluginConfig args.
func New(_ context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	args, err := DecodeArgs(obj)
	if err != nil {
		return nil, err
	}
	return &UnderlayIPLimit{handle: h, args: *args, reserved: map[types.UID]string{},
		byNode: map[string]map[types.UID]struct{}{}, usage: newUsageCache()}, nil
}

// Name returns the plugin's name.
func (pl *UnderlayIPLimit) Name() string {
	return Name
}

// wants reports whether the pod opted in to an underlay IP.
func (pl *UnderlayIPLimit) wants(pod *v1.Pod) bool {
	return pod.Labels[pl.args.PodLabel] == "true"
}

// SignPod signs whether the pod opts in: PreFilter, Filter, PreScore and Score read
// nothing else of it (the rest is the node's), so two pods alike in that get the
// same verdicts on the same nodes, and the scheduler may reuse one's results for
// the other (opportunistic batching). Without SignPod, enabling this plugin
// turns batching off for its whole profile.
func (pl *UnderlayIPLimit) SignPod(_ context.Context, pod *v1.Pod) ([]fwk.SignFragment, *fwk.Status) {
	return []fwk.SignFragment{
		{Key: wantsSignerName, Value: pl.wants(pod)},
	}, nil
}

// capacity is the node's quota; ok is false when the label is not a non-negative integer.
func (pl *UnderlayIPLimit) capacity(node *v1.Node) (capacity int64, ok bool) {
	raw, found := node.Labels[pl.args.CapacityLabel]
	if !found {
		return pl.args.DefaultCapacity, true
	}
	// Digits only: ParseInt alone would accept "+7" and "-0".
	for _, r := range raw {
		if r < '0' || r > '9' {
			return 0, false
		}
	}
	value, err := strconv.ParseInt(raw, 10, 64)
	if err != nil {
		return 0, false
	}
	return value, true
}

// nodeUsage returns the node's counts from the cache, counting its pods only
// when the NodeInfo's generation is not cached.
func (pl *UnderlayIPLimit) nodeUsage(nodeInfo fwk.NodeInfo) nodeUsage {
	generation := nodeInfo.GetGeneration()
	if u, ok := pl.usage.get(generation); ok {
		return u
	}
	var u nodeUsage
	for _, info := range nodeInfo.GetPods() {
		pod := info.GetPod()
		if pl.wants(pod) && pod.Status.Phase != v1.PodSucceeded && pod.Status.Phase != v1.PodFailed {
			u.optedIn++
		}
	}
	u.capacity, u.capacityOK = pl.capacity(nodeInfo.Node())
	pl.usage.put(generation, u)
	return u
}

// used counts the opted-in pods on the node, plus those reserved there but not
// yet in the snapshot (reserved: PreFilter's copy of the reservations).
func (pl *UnderlayIPLimit) used(nodeInfo fwk.NodeInfo, u nodeUsage, reserved map[string][]types.UID) int64 {
	count := u.optedIn
	if len(reserved) == 0 {
		return count
	}
	uids := reserved[nodeInfo.Node().Name]
	if len(uids) == 0 {
		return count
	}
	pods := nodeInfo.GetPods()
	for _, uid := range uids {
		if !hasPod(pods, uid) {
			count++
		}
	}
	return count
}

// reservations copies the reservations by node, under the lock, once per cycle.
func (pl *UnderlayIPLimit) reservations() map[string][]types.UID {
	pl.mu.RLock()
	defer pl.mu.RUnlock()
	if len(pl.byNode) == 0 {
		return nil
	}
	out := make(map[string][]types.UID, len(pl.byNode))
	for nodeName, uids := range pl.byNode {
		for uid := range uids {
			out[nodeName] = append(out[nodeName], uid)
		}
	}
	return out
}

// unseen keeps the reservations this cycle's snapshot does not show yet. The
// scheduler assumes a pod into its cache before Reserve, so the next cycle's
// snapshot nearly always shows it, and Filter and Score then look nothing up
// per node (hashing each node's name for the reservations cost more than the
// rest of the plugin at 5000 nodes). Without a snapshot to ask (a handle-less
// caller), every reservation stays, checked per node as before.
func (pl *UnderlayIPLimit) unseen(reserved map[string][]types.UID) map[string][]types.UID {
	if len(reserved) == 0 || pl.handle == nil || pl.handle.SnapshotSharedLister() == nil {
		return reserved
	}
	nodeInfos := pl.handle.SnapshotSharedLister().NodeInfos()
	var out map[string][]types.UID
	for nodeName, uids := range reserved {
		shown, err := nodeInfos.Get(nodeName)
		for _, uid := range uids {
			if err != nil || !hasPod(shown.GetPods(), uid) {
				if out == nil {
					out = map[string][]types.UID{}
				}
				out[nodeName] = append(out[nodeName], uid)
			}
		}
	}
	return out
}

// hasPod reports whether the snapshot already shows the pod on the node (it was counted there).
func hasPod(pods []fwk.PodInfo, uid types.UID) bool {
	for _, info := range pods {
		if info.GetPod().UID == uid {
			return true
		}
	}
	return false
}

// reserve records the pod against its node; release forgets it. Callers hold mu.
func (pl *UnderlayIPLimit) reserve(uid types.UID, nodeName string) {
	pl.release(uid)
	pl.reserved[uid] = nodeName
	if pl.byNode[nodeName] == nil {
		pl.byNode[nodeName] = map[types.UID]struct{}{}
	}
	pl.byNode[nodeName][uid] = struct{}{}
}

func (pl *UnderlayIPLimit) release(uid types.UID) {
	nodeName, ok := pl.reserved[uid]
	if !ok {
		return
	}
	delete(pl.reserved, uid)
	delete(pl.byNode[nodeName], uid)
	if len(pl.byNode[nodeName]) == 0 {
		delete(pl.byNode, nodeName)
	}
}

// cycle returns PreFilter's state for this cycle. Filter and Score ask once
// per node, so the cycle PreFilter saw last is checked first, by identity
// (CycleState.Read is a sync.Map lookup); a cloned state (nominated pods,
// preemption) reads its own. Without PreFilter's state (a caller that skipped
// PreFilter) it computes the same from the pod and the reservations.
func (pl *UnderlayIPLimit) cycle(state fwk.CycleState, pod *v1.Pod) *preFilterState {
	if last := pl.last.Load(); last != nil && last.state == state {
		return last.data
	}
	if data, err := state.Read(stateKey); err == nil {
		if s, ok := data.(*preFilterState); ok {
			return s
		}
	}
	return &preFilterState{wants: pl.wants(pod), reserved: pl.reservations()}
}

// PreFilter records whether the pod opts in, and copies the reservations for
// Filter and Score; pods that do not opt in skip Filter.
func (pl *UnderlayIPLimit) PreFilter(_ context.Context, state fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	wants := pl.wants(pod)
	s := &preFilterState{wants: wants}
	if wants {
		s.reserved = pl.unseen(pl.reservations())
		pl.usage.fit(len(nodes))
	}
	state.Write(stateKey, s)
	pl.last.Store(&cycleData{state: state, data: s})
	if !wants {
		return nil, fwk.NewStatus(fwk.Skip)
	}
	return nil, nil
}

// PreFilterExtensions lets preemption tell the plugin about pods it adds or removes.
func (pl *UnderlayIPLimit) PreFilterExtensions() fwk.PreFilterExtensions {
	return pl
}

// AddPod: preemption's simulation hands Filter a NodeInfo with the pod added,
// and usage is counted from that NodeInfo, so there is nothing to adjust.
func (pl *UnderlayIPLimit) AddPod(_ context.Context, _ fwk.CycleState, _ *v1.Pod, _ fwk.PodInfo, _ fwk.NodeInfo) *fwk.Status {
	return nil
}

// RemovePod: likewise, a removed victim is already absent from the NodeInfo.
func (pl *UnderlayIPLimit) RemovePod(_ context.Context, _ fwk.CycleState, _ *v1.Pod, _ fwk.PodInfo, _ fwk.NodeInfo) *fwk.Status {
	return nil
}

// Filter rejects nodes without a free underlay IP for a pod that needs one.
// It runs for every node the scheduler examines, in parallel: no lock, no
// allocation and no walk over the node's pods unless a rejection is reported.
func (pl *UnderlayIPLimit) Filter(_ context.Context, state fwk.CycleState, pod *v1.Pod, nodeInfo fwk.NodeInfo) *fwk.Status {
	s := pl.cycle(state, pod)
	if !s.wants {
		return nil
	}
	u := pl.nodeUsage(nodeInfo)
	if !u.capacityOK {
		node := nodeInfo.Node()
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable,
			fmt.Sprintf("node %s has an invalid %s label %q", node.Name, pl.args.CapacityLabel, node.Labels[pl.args.CapacityLabel]))
	}
	if used := pl.used(nodeInfo, u, s.reserved); used >= u.capacity {
		return fwk.NewStatus(fwk.Unschedulable, fmt.Sprintf("node %s has no free underlay IP (%d/%d used)", nodeInfo.Node().Name, used, u.capacity))
	}
	return nil
}

// PreScore skips Score for pods that do not opt in: they score 0 everywhere,
// so the framework need not call Score on every feasible node for them.
func (pl *UnderlayIPLimit) PreScore(_ context.Context, state fwk.CycleState, pod *v1.Pod, _ []fwk.NodeInfo) *fwk.Status {
	if !pl.cycle(state, pod).wants {
		return fwk.NewStatus(fwk.Skip)
	}
	return nil
}

// Score prefers nodes with a larger share of free underlay IPs; like Filter,
// it reads the cycle's state and the node's cached counts only.
func (pl *UnderlayIPLimit) Score(_ context.Context, state fwk.CycleState, pod *v1.Pod, nodeInfo fwk.NodeInfo) (int64, *fwk.Status) {
	s := pl.cycle(state, pod)
	if !s.wants {
		return 0, nil
	}
	u := pl.nodeUsage(nodeInfo)
	if !u.capacityOK || u.capacity == 0 {
		return 0, nil
	}
	free := u.capacity - pl.used(nodeInfo, u, s.reserved)
	if free <= 0 {
		return 0, nil
	}
	return fwk.MaxScore * free / u.capacity, nil
}

// ScoreExtensions returns the plugin itself: it normalises its scores.
func (pl *UnderlayIPLimit) ScoreExtensions() fwk.ScoreExtensions {
	return pl
}

// NormalizeScore keeps every score within [0, MaxScore]; Score already
// scales by the node's own capacity, so nodes stay comparable.
func (pl *UnderlayIPLimit) NormalizeScore(_ context.Context, _ fwk.CycleState, _ *v1.Pod, scores fwk.NodeScoreList) *fwk.Status {
	for i := range scores {
		scores[i].Score = min(max(scores[i].Score, 0), fwk.MaxScore)
	}
	return nil
}

// Reserve counts an opted-in pod against its node until it is bound or unreserved.
func (pl *UnderlayIPLimit) Reserve(_ context.Context, state fwk.CycleState, pod *v1.Pod, nodeName string) *fwk.Status {
	if !pl.cycle(state, pod).wants {
		return nil
	}
	pl.mu.Lock()
	defer pl.mu.Unlock()
	pl.reserve(pod.UID, nodeName)
	return nil
}

// Unreserve releases the pod's IP when a later point failed.
func (pl *UnderlayIPLimit) Unreserve(_ context.Context, _ fwk.CycleState, pod *v1.Pod, _ string) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	pl.release(pod.UID)
}

// PostBind drops the reservation: the bound pod is in the scheduler's cache now.
func (pl *UnderlayIPLimit) PostBind(_ context.Context, _ fwk.CycleState, pod *v1.Pod, _ string) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	pl.release(pod.UID)
}
