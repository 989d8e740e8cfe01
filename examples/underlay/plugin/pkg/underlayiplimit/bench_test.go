package underlayiplimit

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	st "k8s.io/kubernetes/pkg/scheduler/testing"
)

// snapshotHandle is the one Handle method the plugin calls, over a real
// snapshot of the scheduler's cache; the rest of Handle is left nil (here, so the
// benchmark also runs against an earlier plugin's tests: bench/plugin_go_bench.py).
type snapshotHandle struct {
	fwk.Handle
	snapshot *cache.Snapshot
}

func (h snapshotHandle) SnapshotSharedLister() fwk.SharedLister {
	return h.snapshot
}

// parallelism is how many goroutines the framework runs Filter and Score on
// (KubeSchedulerConfiguration's parallelism, 16 by default).
const parallelism = 16

// benchNodes is a snapshot like scheduler_perf's SchedulingBasic mid-run at
// 5000Nodes (where a cache that fits in the CPU's caches at 1000 nodes stops
// fitting): 5000 nodes with a few pods each, half of them opted in, and one pod
// reserved on node 0 that the snapshot already shows (the usual case: the
// scheduler assumes a pod before Reserve). The plugin's handle serves it.
func benchNodes(b *testing.B, pl *UnderlayIPLimit) []fwk.NodeInfo {
	b.Helper()
	var pods []*v1.Pod
	var nodes []*v1.Node
	for i := 0; i < 5000; i++ {
		name := fmt.Sprintf("node-%d", i)
		for j := 0; j < 4; j++ {
			pod := st.MakePod().Name(fmt.Sprintf("%s-%d", name, j)).UID(fmt.Sprintf("%s-%d", name, j)).Node(name).
				Label("app", "bench").Label("tier", "web")
			if j%2 == 0 {
				pod = pod.Label(DefaultPodLabel, "true")
			}
			pods = append(pods, pod.Obj())
		}
		nodes = append(nodes, st.MakeNode().Name(name).Label(DefaultCapacityLabel, "10").Label("zone", "a").Obj())
	}
	snapshot := cache.NewSnapshot(pods, nodes)
	pl.handle = snapshotHandle{snapshot: snapshot}
	infos, err := snapshot.NodeInfos().List()
	if err != nil {
		b.Fatal(err)
	}
	state := framework.NewCycleState()
	reserved := optedIn("node-0-0")
	pl.PreFilter(context.Background(), state, reserved, nil)
	pl.Reserve(context.Background(), state, reserved, "node-0")
	return infos
}

// runParallel calls f for the nodes in turn on `parallelism` goroutines, as
// the framework's parallelizer does, after PreFilter and PreScore of one pod.
func runParallel(b *testing.B, f func(*UnderlayIPLimit, fwk.CycleState, *v1.Pod, fwk.NodeInfo)) {
	pl := newPlugin(b, "")
	nodes := benchNodes(b, pl)
	state := framework.NewCycleState()
	pod := optedIn("incoming")
	if _, s := pl.PreFilter(context.Background(), state, pod, nodes); !s.IsSuccess() {
		b.Fatal(s)
	}
	if s := pl.PreScore(context.Background(), state, pod, nodes); !s.IsSuccess() {
		b.Fatal(s)
	}
	var next atomic.Int64
	b.SetParallelism((parallelism + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(p *testing.PB) {
		for p.Next() {
			f(pl, state, pod, nodes[next.Add(1)%int64(len(nodes))])
		}
	})
}

func BenchmarkFilterParallel(b *testing.B) {
	runParallel(b, func(pl *UnderlayIPLimit, state fwk.CycleState, pod *v1.Pod, ni fwk.NodeInfo) {
		if s := pl.Filter(context.Background(), state, pod, ni); !s.IsSuccess() {
			b.Fatal(s)
		}
	})
}

func BenchmarkScoreParallel(b *testing.B) {
	runParallel(b, func(pl *UnderlayIPLimit, state fwk.CycleState, pod *v1.Pod, ni fwk.NodeInfo) {
		if _, s := pl.Score(context.Background(), state, pod, ni); !s.IsSuccess() {
			b.Fatal(s)
		}
	})
}
