/*
Added by scheduler-build to a debuggable build; a normal build never contains this file.

The framework wraps each extension point's plugin list once (setInstrumentedPlugins, for
metrics); setRecordedPlugins wraps the same lists again, one wrapper per interface, so every
plugin keeps its name, its place and exactly the interfaces it implements. Batching keeps its
signers: computeBatchablePlugins has already run on the plugins themselves.

What a cycle records lives in its CycleState (one record per scheduling attempt). A bound pod's
record rides on the Binding (the API server copies a Binding's annotations onto the pod, in the
same call); an unschedulable pod's is one merge patch of pods/status after PostFilter (the
scheduler's role allows it), skipped when unchanged.

Extenders are called by the scheduler outside the framework (findNodesThatPassExtenders,
prioritizeNodes, extendersBinding) with no CycleState, so RecordedExtenders (called by
scheduler.New on the extenders it built: the patch's second hunk) wraps each one and finds the
attempt's record by the pod's UID: its filter verdicts join the per-node rejections and its
scores the per-node scores (named "extender <name>", weighted as prioritizeNodes weighs them),
and a binder extender's successful Bind writes the record in one patch.
*/

package runtime

import (
	"context"
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clientset "k8s.io/client-go/kubernetes"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/component-base/version"
	"k8s.io/klog/v2"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"
	fwk "k8s.io/kube-scheduler/framework"
)

// The kube-scheduler-simulator's keys and formats, so its tools read these pods too.
const (
	simulatorPrefix = "kube-scheduler-simulator.sigs.k8s.io/"
	// DebugRecordAnnotation holds what the simulator's keys have no room for (format 1, docs/explain.md).
	DebugRecordAnnotation              = "scheduler-build.io/debug-record"
	recorderStateKey      fwk.StateKey = "scheduler-build.io/recorder"
	passed                             = "passed"
	success                            = "success"
	extenderPrefix                     = "extender " // an extender's name among the plugins' in the record
)

// RecorderConfig is set by a debuggable build's main before the command runs.
type RecorderConfig struct {
	Enabled       bool
	PodLabel      string // record only pods carrying this label key; empty: every pod
	TopNodes      int    // nodes named with their scores, best first
	RejectedNodes int    // rejected nodes named with their plugin and reason; the rest are counted
}

// DebugRecorder is read when a framework is built; the zero value records nothing.
var DebugRecorder RecorderConfig

type rejection struct{ plugin, reason string }

type extenderVerdict struct {
	name           string // the extender's own Name(): the simulator's key
	passed, failed int
	err            string
}

type podRecord struct {
	mu              sync.Mutex
	f               *frameworkImpl // the profile's framework: an extender binder writes the record through it
	uid             types.UID
	frozen          bool // PostFilter started: preemption's dry runs call Filter again
	preFilterStatus map[string]string
	preFilterResult map[string][]string
	rejected        map[string]rejection
	postFilter      map[string]string
	nominated       string
	nominatedBy     string
	preScore        map[string]string
	feasible        int
	raw, normalized map[string]fwk.NodeScoreList
	reserve         map[string]string
	permit          map[string]string
	permitTimeout   map[string]string
	preBind         map[string]string
	selected        string
	extFilter       map[string]extenderVerdict             // "extender <name>" -> its filter call
	extScores       map[string]extenderv1.HostPriorityList // "extender <name>" -> its raw scores
	extWeight       map[string]int64                       // "extender <name>" -> weight x MaxNodeScore/MaxExtenderPriority
}

// Clone shares the record: a clone (preemption's dry run) belongs to the same attempt.
func (r *podRecord) Clone() fwk.StateData { return r }

func newPodRecord() *podRecord {
	return &podRecord{
		preFilterStatus: map[string]string{}, preFilterResult: map[string][]string{}, rejected: map[string]rejection{},
		postFilter: map[string]string{}, preScore: map[string]string{}, raw: map[string]fwk.NodeScoreList{},
		normalized: map[string]fwk.NodeScoreList{}, reserve: map[string]string{}, permit: map[string]string{},
		permitTimeout: map[string]string{}, preBind: map[string]string{}, extFilter: map[string]extenderVerdict{},
		extScores: map[string]extenderv1.HostPriorityList{}, extWeight: map[string]int64{},
	}
}

// activeRecords: pod UID -> the record of its current attempt, for the extenders (no CycleState).
var activeRecords sync.Map

func activeRecord(uid types.UID) *podRecord {
	if value, ok := activeRecords.Load(uid); ok {
		return value.(*podRecord)
	}
	return nil
}

func readRecord(state fwk.CycleState) *podRecord {
	if state == nil {
		return nil
	}
	data, err := state.Read(recorderStateKey)
	if err != nil {
		return nil
	}
	r, _ := data.(*podRecord)
	return r
}

func statusText(s *fwk.Status) string {
	switch {
	case s.IsSuccess():
		return success
	case s.IsSkip():
		return "skip"
	case s.Code() == fwk.Wait:
		return "wait"
	}
	if msg := s.Message(); msg != "" {
		return msg
	}
	return s.Code().String()
}

// pendingBindings: pod UID -> annotations the next Binding of that pod carries.
var pendingBindings sync.Map

func (f *frameworkImpl) setRecordedPlugins() {
	if !DebugRecorder.Enabled {
		return
	}
	for i := range f.preFilterPlugins {
		f.preFilterPlugins[i] = &recordedPreFilter{PreFilterPlugin: f.preFilterPlugins[i], first: i == 0, f: f}
	}
	for i := range f.filterPlugins {
		f.filterPlugins[i] = &recordedFilter{FilterPlugin: f.filterPlugins[i]}
	}
	for i := range f.postFilterPlugins {
		f.postFilterPlugins[i] = &recordedPostFilter{PostFilterPlugin: f.postFilterPlugins[i], f: f, last: i == len(f.postFilterPlugins)-1}
	}
	for i := range f.preScorePlugins {
		f.preScorePlugins[i] = &recordedPreScore{PreScorePlugin: f.preScorePlugins[i], first: i == 0}
	}
	for i := range f.scorePlugins {
		f.scorePlugins[i] = &recordedScore{ScorePlugin: f.scorePlugins[i]}
	}
	for i := range f.reservePlugins {
		f.reservePlugins[i] = &recordedReserve{ReservePlugin: f.reservePlugins[i]}
	}
	for i := range f.permitPlugins {
		f.permitPlugins[i] = &recordedPermit{PermitPlugin: f.permitPlugins[i]}
	}
	for i := range f.preBindPlugins {
		f.preBindPlugins[i] = &recordedPreBind{PreBindPlugin: f.preBindPlugins[i]}
	}
	for i := range f.bindPlugins {
		f.bindPlugins[i] = &recordedBind{BindPlugin: f.bindPlugins[i], f: f}
	}
	if f.clientSet != nil {
		if _, done := f.clientSet.(*recordingClient); !done {
			f.clientSet = &recordingClient{Interface: f.clientSet}
		}
	}
}

// recordingClient adds a pod's pending annotations to its Binding: one API call for both.
type recordingClient struct{ clientset.Interface }

func (c *recordingClient) CoreV1() corev1client.CoreV1Interface {
	return &recordingCoreV1{CoreV1Interface: c.Interface.CoreV1()}
}

type recordingCoreV1 struct{ corev1client.CoreV1Interface }

func (c *recordingCoreV1) Pods(namespace string) corev1client.PodInterface {
	return &recordingPods{PodInterface: c.CoreV1Interface.Pods(namespace)}
}

type recordingPods struct{ corev1client.PodInterface }

func (p *recordingPods) Bind(ctx context.Context, binding *v1.Binding, opts metav1.CreateOptions) error {
	if value, ok := pendingBindings.LoadAndDelete(binding.UID); ok {
		binding = binding.DeepCopy()
		if binding.Annotations == nil {
			binding.Annotations = map[string]string{}
		}
		for k, v := range value.(map[string]string) {
			binding.Annotations[k] = v
		}
	}
	return p.PodInterface.Bind(ctx, binding, opts)
}

type recordedPreFilter struct {
	fwk.PreFilterPlugin
	first bool
	f     *frameworkImpl
}

func (p *recordedPreFilter) PreFilter(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	if p.first && wanted(pod) {
		r := newPodRecord()
		r.f, r.uid = p.f, pod.UID
		state.Write(recorderStateKey, r)
		activeRecords.Store(pod.UID, r)
	}
	result, status := p.PreFilterPlugin.PreFilter(ctx, state, pod, nodes)
	if r := readRecord(state); r != nil {
		r.mu.Lock()
		r.preFilterStatus[p.Name()] = statusText(status)
		if result != nil && !result.AllNodes() {
			names := sortedNames(result.NodeNames.UnsortedList())
			if len(names) > DebugRecorder.TopNodes {
				names = names[:DebugRecorder.TopNodes]
			}
			r.preFilterResult[p.Name()] = names
		}
		r.mu.Unlock()
	}
	return result, status
}

func sortedNames(names []string) []string {
	sort.Strings(names)
	return names
}

func wanted(pod *v1.Pod) bool {
	if DebugRecorder.PodLabel == "" {
		return true
	}
	_, ok := pod.Labels[DebugRecorder.PodLabel]
	return ok
}

type recordedFilter struct{ fwk.FilterPlugin }

// Filter records rejections only: a node that passed every filter is one the scores name.
func (p *recordedFilter) Filter(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeInfo fwk.NodeInfo) *fwk.Status {
	status := p.FilterPlugin.Filter(ctx, state, pod, nodeInfo)
	if !status.IsSuccess() {
		if r := readRecord(state); r != nil {
			r.mu.Lock()
			if !r.frozen {
				r.rejected[nodeInfo.Node().Name] = rejection{plugin: p.Name(), reason: statusText(status)}
			}
			r.mu.Unlock()
		}
	}
	return status
}

type recordedPostFilter struct {
	fwk.PostFilterPlugin
	f    *frameworkImpl
	last bool
}

func (p *recordedPostFilter) PostFilter(ctx context.Context, state fwk.CycleState, pod *v1.Pod, m fwk.NodeToStatusReader) (*fwk.PostFilterResult, *fwk.Status) {
	r := readRecord(state)
	if r != nil {
		r.mu.Lock()
		r.frozen = true
		r.mu.Unlock()
	}
	result, status := p.PostFilterPlugin.PostFilter(ctx, state, pod, m)
	if r == nil {
		return result, status
	}
	r.mu.Lock()
	r.postFilter[p.Name()] = statusText(status)
	if result != nil && result.NominatingInfo != nil && result.NominatedNodeName != "" {
		r.nominated, r.nominatedBy = result.NominatedNodeName, p.Name()
	}
	r.mu.Unlock()
	if p.last || status.IsSuccess() || !status.IsRejected() || status.Code() == fwk.UnschedulableAndUnresolvable {
		p.f.writePending(pod, r)
	}
	return result, status
}

type recordedPreScore struct {
	fwk.PreScorePlugin
	first bool
}

func (p *recordedPreScore) PreScore(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) *fwk.Status {
	status := p.PreScorePlugin.PreScore(ctx, state, pod, nodes)
	if r := readRecord(state); r != nil {
		r.mu.Lock()
		if p.first {
			r.feasible = len(nodes)
		}
		r.preScore[p.Name()] = statusText(status)
		r.mu.Unlock()
	}
	return status
}

// recordedScore reads scores where the framework hands over a plugin's whole list: in
// NormalizeScore, before (raw) and after (normalized). No per-node work is added.
type recordedScore struct{ fwk.ScorePlugin }

func (p *recordedScore) ScoreExtensions() fwk.ScoreExtensions {
	return &recordedNormalize{inner: p.ScorePlugin.ScoreExtensions(), name: p.Name()}
}

type recordedNormalize struct {
	inner fwk.ScoreExtensions
	name  string
}

func (n *recordedNormalize) NormalizeScore(ctx context.Context, state fwk.CycleState, pod *v1.Pod, scores fwk.NodeScoreList) *fwk.Status {
	r := readRecord(state)
	var raw fwk.NodeScoreList
	if r != nil {
		raw = append(fwk.NodeScoreList(nil), scores...)
	}
	var status *fwk.Status
	if n.inner != nil {
		status = n.inner.NormalizeScore(ctx, state, pod, scores)
	}
	if r != nil {
		normalized := append(fwk.NodeScoreList(nil), scores...)
		r.mu.Lock()
		r.raw[n.name], r.normalized[n.name] = raw, normalized
		r.mu.Unlock()
	}
	return status
}

type recordedReserve struct{ fwk.ReservePlugin }

func (p *recordedReserve) Reserve(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeName string) *fwk.Status {
	status := p.ReservePlugin.Reserve(ctx, state, pod, nodeName)
	if r := readRecord(state); r != nil {
		r.mu.Lock()
		r.reserve[p.Name()], r.selected = statusText(status), nodeName
		r.mu.Unlock()
	}
	return status
}

type recordedPermit struct{ fwk.PermitPlugin }

func (p *recordedPermit) Permit(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeName string) (*fwk.Status, time.Duration) {
	status, timeout := p.PermitPlugin.Permit(ctx, state, pod, nodeName)
	if r := readRecord(state); r != nil {
		r.mu.Lock()
		r.permit[p.Name()], r.permitTimeout[p.Name()] = statusText(status), timeout.String()
		r.mu.Unlock()
	}
	return status, timeout
}

type recordedPreBind struct{ fwk.PreBindPlugin }

func (p *recordedPreBind) PreBind(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeName string) *fwk.Status {
	status := p.PreBindPlugin.PreBind(ctx, state, pod, nodeName)
	if r := readRecord(state); r != nil {
		r.mu.Lock()
		r.preBind[p.Name()] = statusText(status)
		r.mu.Unlock()
	}
	return status
}

type recordedBind struct {
	fwk.BindPlugin
	f *frameworkImpl
}

// Bind hands the record to the Binding; a binder that does not bind through the framework's
// client (the API cacher, an extender) leaves it unconsumed, and one patch follows instead.
func (p *recordedBind) Bind(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeName string) *fwk.Status {
	r := readRecord(state)
	if r == nil {
		return p.BindPlugin.Bind(ctx, state, pod, nodeName)
	}
	annotations := p.f.annotations(r, nodeName, "bound", map[string]string{p.Name(): success})
	pendingBindings.Store(pod.UID, annotations)
	status := p.BindPlugin.Bind(ctx, state, pod, nodeName)
	if _, unconsumed := pendingBindings.LoadAndDelete(pod.UID); unconsumed && status.IsSuccess() {
		p.f.patchAsync(pod, annotations)
	}
	return status
}

func (f *frameworkImpl) writePending(pod *v1.Pod, r *podRecord) {
	f.patchAsync(pod, f.annotations(r, "", "unschedulable", map[string]string{}))
}

// patchAsync writes the annotations in one merge patch, off the scheduling path; unchanged ones are not sent.
func (f *frameworkImpl) patchAsync(pod *v1.Pod, annotations map[string]string) {
	same := true
	for k, v := range annotations {
		if k != DebugRecordAnnotation && pod.Annotations[k] != v {
			same = false
			break
		}
	}
	client := f.clientSet
	if rc, ok := client.(*recordingClient); ok {
		client = rc.Interface
	}
	if same || client == nil {
		return
	}
	body, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": annotations}})
	if err != nil {
		return
	}
	namespace, name := pod.Namespace, pod.Name
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		// Through pods/status, which the scheduler's own role may patch (it writes the PodScheduled
		// condition there); the status strategy resets spec, not annotations.
		if _, err := client.CoreV1().Pods(namespace).Patch(ctx, name, types.MergePatchType, body, metav1.PatchOptions{}, "status"); err != nil {
			// At the default verbosity: a missing record sends `explain` users looking for the wrong cause.
			klog.FromContext(ctx).Error(err, "Debuggable build could not record its result", "pod", klog.KRef(namespace, name))
		}
	}()
}

type nodeTotal struct {
	node  string
	total int64
}

// annotations renders the record, bounded: TopNodes nodes with scores, RejectedNodes named rejections.
func (f *frameworkImpl) annotations(r *podRecord, node, outcome string, bind map[string]string) map[string]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	activeRecords.Delete(r.uid) // the attempt is over: its record is rendered
	weights := map[string]int{}
	totals := map[string]int64{}
	for plugin, list := range r.normalized {
		weights[plugin] = f.scorePluginWeight[plugin]
		for _, s := range list {
			totals[s.Name] += s.Score * int64(f.scorePluginWeight[plugin])
		}
	}
	for key, list := range r.extScores { // as prioritizeNodes adds them to the plugins' total
		weights[key] = int(r.extWeight[key])
		for _, hp := range list {
			totals[hp.Host] += hp.Score * r.extWeight[key]
		}
	}
	ranked := make([]nodeTotal, 0, len(totals))
	for n, t := range totals {
		ranked = append(ranked, nodeTotal{n, t})
	}
	sort.Slice(ranked, func(i, j int) bool {
		if ranked[i].total != ranked[j].total {
			return ranked[i].total > ranked[j].total
		}
		return ranked[i].node < ranked[j].node
	})
	top := map[string]bool{}
	topList := []map[string]any{}
	for i, nt := range ranked {
		if i >= DebugRecorder.TopNodes {
			break
		}
		top[nt.node] = true
		topList = append(topList, map[string]any{"node": nt.node, "total": nt.total})
	}
	if node != "" && len(ranked) == 0 {
		top[node] = true // one feasible node (or a batching hint): no scores were computed
	}
	filter, rejections, named := f.filterResult(r, top)
	score, final := map[string]map[string]string{}, map[string]map[string]string{}
	for plugin, list := range r.raw {
		for k, s := range list {
			if !top[s.Name] {
				continue
			}
			if score[s.Name] == nil {
				score[s.Name], final[s.Name] = map[string]string{}, map[string]string{}
			}
			score[s.Name][plugin] = strconv.FormatInt(s.Score, 10)
			if k < len(r.normalized[plugin]) {
				final[s.Name][plugin] = strconv.FormatInt(r.normalized[plugin][k].Score*int64(weights[plugin]), 10)
			}
		}
	}
	extFilter, extPrioritize, extenders := r.extenderResults(top, score, final)
	postFilter := map[string]map[string]string{}
	if r.nominated != "" {
		postFilter[r.nominated] = map[string]string{r.nominatedBy: "nominated"}
	}
	record := map[string]any{
		"format": 1, "scheduler": version.Get().GitVersion, "profile": f.profileName, "outcome": outcome,
		"node": node, "time": time.Now().UTC().Format(time.RFC3339), "feasibleNodes": r.feasible,
		"rejectedNodes": len(r.rejected), "namedRejectedNodes": named, "rejections": rejections,
		"weights": weights, "topNodes": topList, "postFilter": r.postFilter, "nominatedNode": r.nominated,
		"topNodesLimit": DebugRecorder.TopNodes, "rejectedNodesLimit": DebugRecorder.RejectedNodes,
	}
	if len(extenders) > 0 {
		record["extenders"] = extenders
	}
	out := map[string]string{}
	put := func(key string, v any) {
		data, _ := json.Marshal(v)
		out[key] = string(data)
	}
	put(simulatorPrefix+"prefilter-result-status", r.preFilterStatus)
	put(simulatorPrefix+"prefilter-result", r.preFilterResult)
	put(simulatorPrefix+"filter-result", filter)
	put(simulatorPrefix+"postfilter-result", postFilter)
	put(simulatorPrefix+"prescore-result", r.preScore)
	put(simulatorPrefix+"score-result", score)
	put(simulatorPrefix+"finalscore-result", final)
	put(simulatorPrefix+"reserve-result", r.reserve)
	put(simulatorPrefix+"permit-result", r.permit)
	put(simulatorPrefix+"permit-result-timeout", r.permitTimeout)
	put(simulatorPrefix+"prebind-result", r.preBind)
	put(simulatorPrefix+"bind-result", bind)
	out[simulatorPrefix+"selected-node"] = node
	if len(extenders) > 0 {
		put(simulatorPrefix+"extender-filter-result", extFilter)
		put(simulatorPrefix+"extender-prioritize-result", extPrioritize)
	}
	put(DebugRecordAnnotation, record)
	return out
}

// filterResult: node -> plugin -> "passed" or the reason, for the top nodes and up to
// RejectedNodes rejected ones; every rejection also counted per plugin and reason.
func (f *frameworkImpl) filterResult(r *podRecord, top map[string]bool) (map[string]map[string]string, []map[string]any, int) {
	filter := map[string]map[string]string{}
	for n := range top {
		filter[n] = map[string]string{}
		for _, pl := range f.filterPlugins {
			filter[n][pl.Name()] = passed
		}
		for key := range r.extFilter {
			filter[n][key] = passed
		}
	}
	nodes := make([]string, 0, len(r.rejected))
	counts := map[rejection]int{}
	for n, rej := range r.rejected {
		nodes = append(nodes, n)
		counts[rej]++
	}
	sort.Strings(nodes)
	named := 0
	for _, n := range nodes {
		if named >= DebugRecorder.RejectedNodes {
			break
		}
		rej := r.rejected[n]
		filter[n] = map[string]string{rej.plugin: rej.reason}
		named++
	}
	rejections := make([]map[string]any, 0, len(counts))
	for rej, c := range counts {
		rejections = append(rejections, map[string]any{"plugin": rej.plugin, "reason": rej.reason, "nodes": c})
	}
	sort.Slice(rejections, func(i, j int) bool {
		a, b := rejections[i], rejections[j]
		if a["nodes"].(int) != b["nodes"].(int) {
			return a["nodes"].(int) > b["nodes"].(int)
		}
		return strings.Compare(a["plugin"].(string)+a["reason"].(string), b["plugin"].(string)+b["reason"].(string)) < 0
	})
	return filter, rejections, named
}

// extenderResults adds the extenders' scores of the top nodes to score and final, and returns the
// simulator's extender-filter-result (each extender's named rejections and error) and
// extender-prioritize-result (its raw scores of the top nodes), and the record's per-extender counts.
func (r *podRecord) extenderResults(top map[string]bool, score, final map[string]map[string]string) (map[string]any, map[string]extenderv1.HostPriorityList, map[string]any) {
	filterOut, prioritizeOut, counts := map[string]any{}, map[string]extenderv1.HostPriorityList{}, map[string]any{}
	for key, list := range r.extScores {
		name := strings.TrimPrefix(key, extenderPrefix)
		prioritizeOut[name] = extenderv1.HostPriorityList{}
		for _, hp := range list {
			if !top[hp.Host] {
				continue
			}
			if score[hp.Host] == nil {
				score[hp.Host], final[hp.Host] = map[string]string{}, map[string]string{}
			}
			score[hp.Host][key] = strconv.FormatInt(hp.Score, 10)
			final[hp.Host][key] = strconv.FormatInt(hp.Score*r.extWeight[key], 10)
			prioritizeOut[name] = append(prioritizeOut[name], hp)
		}
		counts[key] = map[string]any{"scored": len(list), "weight": r.extWeight[key]}
	}
	for key, v := range r.extFilter {
		failed := map[string]string{}
		for node, rej := range r.rejected {
			if rej.plugin == key && len(failed) < DebugRecorder.RejectedNodes {
				failed[node] = rej.reason
			}
		}
		filterOut[v.name] = map[string]any{"FailedNodes": failed, "Error": v.err}
		entry, _ := counts[key].(map[string]any)
		if entry == nil {
			entry = map[string]any{}
		}
		entry["passed"], entry["failed"], entry["error"] = v.passed, v.failed, v.err
		counts[key] = entry
	}
	return filterOut, prioritizeOut, counts
}

// RecordedExtenders wraps each extender for the recorder (scheduler.New calls it on the extenders
// it built); with the recorder off it returns them as they are.
func RecordedExtenders(extenders []fwk.Extender) []fwk.Extender {
	if !DebugRecorder.Enabled {
		return extenders
	}
	out := make([]fwk.Extender, len(extenders))
	for i, e := range extenders {
		out[i] = &recordedExtender{Extender: e, key: extenderPrefix + e.Name()}
	}
	return out
}

// recordedExtender embeds the extender, so every method the target's interface has is its own.
type recordedExtender struct {
	fwk.Extender
	key string
}

func (e *recordedExtender) Filter(pod *v1.Pod, nodes []fwk.NodeInfo) ([]fwk.NodeInfo, extenderv1.FailedNodesMap, extenderv1.FailedNodesMap, error) {
	feasible, failed, unresolvable, err := e.Extender.Filter(pod, nodes)
	if r := activeRecord(pod.UID); r != nil {
		v := extenderVerdict{name: e.Name(), passed: len(feasible), failed: len(failed) + len(unresolvable)}
		if err != nil {
			v.err = err.Error()
		}
		r.mu.Lock()
		r.extFilter[e.key] = v
		for node, msg := range failed {
			r.rejected[node] = rejection{plugin: e.key, reason: extenderReason(msg)}
		}
		for node, msg := range unresolvable { // takes precedence, as findNodesThatPassExtenders gives it
			r.rejected[node] = rejection{plugin: e.key, reason: extenderReason(msg)}
		}
		r.mu.Unlock()
	}
	return feasible, failed, unresolvable, err
}

func extenderReason(msg string) string {
	if msg == "" {
		return "rejected by the extender"
	}
	return msg
}

func (e *recordedExtender) Prioritize(pod *v1.Pod, nodes []fwk.NodeInfo) (*extenderv1.HostPriorityList, int64, error) {
	list, weight, err := e.Extender.Prioritize(pod, nodes)
	if r := activeRecord(pod.UID); r != nil && err == nil && list != nil {
		r.mu.Lock()
		r.extScores[e.key] = append(extenderv1.HostPriorityList(nil), (*list)...)
		r.extWeight[e.key] = weight * (fwk.MaxNodeScore / extenderv1.MaxExtenderPriority)
		r.mu.Unlock()
	}
	return list, weight, err
}

// Bind: a binder extender binds instead of the Bind plugins, so the record goes in one patch after it.
func (e *recordedExtender) Bind(binding *v1.Binding) error {
	err := e.Extender.Bind(binding)
	if r := activeRecord(binding.UID); r != nil && err == nil && r.f != nil {
		pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: binding.Namespace, Name: binding.Name, UID: binding.UID}}
		r.f.patchAsync(pod, r.f.annotations(r, binding.Target.Name, "bound", map[string]string{e.key: success}))
	}
	return err
}
