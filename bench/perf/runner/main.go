// perf-shard: the harness image's entrypoint (bench/perf/harness_image.py). It runs shard
// JOB_COMPLETION_INDEX + 1 of --count: the cells the caller planned into /perf/plan.json
// (bench/perf/shard_plan.py), one harness process each, in order, and prints what each run left
// (its scheduler_perf JSON, the log lines the caller judges) as one marked JSON block on stdout.
// The caller reads the pod's log through the API and makes the shard's raw file from it, with the
// Python code a local run uses. Standard library only: the image is FROM scratch.
package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const (
	planFile = "/perf/plan.json"
	begin    = "===== scheduler-build perf shard BEGIN ====="
	end      = "===== scheduler-build perf shard END ====="
	chunk    = "perf-shard-chunk" // shard_plan.CHUNK
	// The container runtime splits a log line longer than 16 KiB into partial entries, and the kubelet
	// reading the log back puts a stderr line written meanwhile between them. Lines this short stay whole.
	chunkWidth = 8192
)

// The log lines the caller needs: batching (run.batching_state), the threshold miss and failure lines
// (run.below_threshold, run._failure) and the gate refusal (run.UNSETTABLE).
var kept = []string{"Disabling signatures for profile", "FATAL ERROR", "Error running workload", "SchedulingThroughput",
	"cannot set feature gate", "Fatal", "Error", "FAIL", "failed", "--- ", "ok ", "PASS"}

type cell struct {
	Repeat   int      `json:"repeat"`
	Workload string   `json:"workload"`
	Variant  string   `json:"variant"`
	Name     string   `json:"name"`
	Argv     []string `json:"argv"`
	Fallback []string `json:"fallback"`
}

type plan struct {
	Count      int               `json:"count"`
	Workloads  string            `json:"workloads"`
	Variants   string            `json:"variants"`
	Repeats    int               `json:"repeats"`
	Cwd        string            `json:"cwd"`
	Env        map[string]string `json:"env"`
	Shards     map[string][]cell `json:"shards"`
	Unsettable string            `json:"unsettable"`
	Runs       string            `json:"runs"` // each run works in Runs/<name>
}

type result struct {
	Repeat   int             `json:"repeat"`
	Workload string          `json:"workload"`
	Variant  string          `json:"variant"`
	Exit     int             `json:"exit"`
	Ungated  bool            `json:"ungated"`
	Seconds  float64         `json:"seconds"`
	Items    json.RawMessage `json:"items"`
	Log      []string        `json:"log"`
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "perf-shard: "+format+"\n", args...)
	os.Exit(2)
}

func main() {
	count := flag.Int("count", 0, "shards in the Job")
	workloads := flag.String("workloads", "", "as the plan says")
	variants := flag.String("variants", "", "as the plan says")
	repeats := flag.Int("repeats", 0, "as the plan says")
	flag.Parse()
	index, err := strconv.Atoi(os.Getenv("JOB_COMPLETION_INDEX"))
	if err != nil || index < 0 || index >= *count {
		fail("JOB_COMPLETION_INDEX %q: not an index in 0..%d (run inside the Indexed Job)", os.Getenv("JOB_COMPLETION_INDEX"), *count-1)
	}
	path := planFile
	if override := os.Getenv("PERF_SHARD_PLAN"); override != "" { // tests run the runner outside the image
		path = override
	}
	data, err := os.ReadFile(path)
	if err != nil {
		fail("%v", err)
	}
	var p plan
	if err := json.Unmarshal(data, &p); err != nil {
		fail("%s: %v", path, err)
	}
	// The manifest and the image must describe the same run: a Job edited by hand is refused.
	if p.Count != *count || p.Workloads != *workloads || p.Variants != *variants || p.Repeats != *repeats {
		fail("the Job's arguments (--count %d --workloads %s --variants %s --repeats %d) are not the image's plan (%d %s %s %d)",
			*count, *workloads, *variants, *repeats, p.Count, p.Workloads, p.Variants, p.Repeats)
	}
	shard := fmt.Sprintf("%d/%d", index+1, p.Count)
	cells := p.Shards[strconv.Itoa(index+1)]
	out := []result{}
	before := loadavg()
	for k, c := range cells {
		fmt.Fprintf(os.Stderr, "perf-shard %s: run %d/%d: %s %s (repeat %d)\n", shard, k+1, len(cells), c.Workload, c.Variant, c.Repeat)
		r := runCell(p, c)
		fmt.Fprintf(os.Stderr, "perf-shard %s: %s %s exit %d in %.1fs\n", shard, c.Workload, c.Variant, r.Exit, r.Seconds)
		out = append(out, r)
	}
	block, _ := json.Marshal(map[string]any{"shard": shard, "runs": out, "load_before": before, "load_after": loadavg()})
	printBlock(block)
	for _, r := range out {
		// A run that left no JSON failed outright: the pod fails, so backoffLimitPerIndex retries the shard.
		// One that left its JSON and exited non-zero (a threshold miss) is the caller's to judge.
		if r.Exit != 0 && string(r.Items) == "null" {
			fmt.Fprintf(os.Stderr, "perf-shard %s: %s %s failed (exit %d)\n", shard, r.Workload, r.Variant, r.Exit)
			os.Exit(1)
		}
	}
}

// printBlock prints the block as base64 lines of its own, numbered, with its digest on the END line,
// so the caller finds a lost or interleaved piece instead of reading a cut block as a short one.
func printBlock(block []byte) {
	text := base64.StdEncoding.EncodeToString(block)
	n := (len(text) + chunkWidth - 1) / chunkWidth
	w := bufio.NewWriter(os.Stdout)
	fmt.Fprintln(w, begin)
	for i := 0; i < n; i++ {
		fmt.Fprintf(w, "%s %d/%d %s\n", chunk, i+1, n, text[i*chunkWidth:min((i+1)*chunkWidth, len(text))])
	}
	sum := sha256.Sum256(block)
	fmt.Fprintf(w, "%s sha256=%s\n", end, hex.EncodeToString(sum[:]))
	w.Flush()
}

func runCell(p plan, c cell) result {
	work := filepath.Join(p.Runs, c.Name)
	started := time.Now()
	code, lines := harness(p, c.Argv, work)
	ungated := false
	if code != 0 && len(c.Fallback) > 0 && contains(lines, p.Unsettable) {
		// The workload emulates a release without the gate: run it as upstream wrote it (run._one).
		ungated = true
		work += "-ungated"
		code, lines = harness(p, c.Fallback, work)
	}
	items := json.RawMessage("null")
	found, _ := filepath.Glob(filepath.Join(work, "BenchmarkPerfScheduling*.json"))
	sort.Strings(found)
	if len(found) > 0 {
		if data, err := os.ReadFile(found[len(found)-1]); err == nil && json.Valid(data) {
			items = data
		}
	}
	return result{c.Repeat, c.Workload, c.Variant, code, ungated, time.Since(started).Seconds(), items, lines}
}

// loadavg is the node's load (a container shares the node's /proc/loadavg): the raw file's load fields.
func loadavg() []float64 {
	data, err := os.ReadFile("/proc/loadavg")
	out := []float64{0, 0, 0}
	if err != nil {
		return out
	}
	for k, f := range strings.Fields(string(data))[:3] {
		out[k], _ = strconv.ParseFloat(f, 64)
	}
	return out
}

func contains(lines []string, s string) bool {
	for _, l := range lines {
		if s != "" && strings.Contains(l, s) {
			return true
		}
	}
	return false
}

// harness runs one argv (its working directory under /tmp) in a process group of its own, ended with
// it: etcd is its child. The log lines the caller judges are returned (the last 400 of them).
func harness(p plan, argv []string, work string) (int, []string) {
	if err := os.MkdirAll(work, 0o755); err != nil {
		return 1, []string{err.Error()}
	}
	// The harness's TMPDIR holds etcd's unix socket, whose path must fit 108 bytes: a short directory of
	// its own, as a local run makes (run.py), not one named after the cell (a labelled workload's ungated
	// retry made "listen unix /tmp/runs/SchedulingBasicLabelled_5Nodes-vanilla-1-ungated.tmp/...: bind:
	// invalid argument").
	scratch, err := os.MkdirTemp("", "sb-perf-")
	if err != nil {
		return 1, []string{err.Error()}
	}
	defer os.RemoveAll(scratch)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = p.Cwd
	cmd.Env = []string{"TMPDIR=" + scratch, "HOME=/tmp"}
	for k, v := range p.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		return 1, []string{err.Error()}
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		return 1, []string{"start: " + err.Error()}
	}
	lines := []string{}
	scanner := bufio.NewScanner(pipe)
	scanner.Buffer(make([]byte, 1<<20), 1<<24)
	for scanner.Scan() {
		line := scanner.Text()
		for _, k := range kept {
			if strings.Contains(line, k) {
				lines = append(lines, line)
				break
			}
		}
		if len(lines) > 400 {
			lines = lines[len(lines)-400:]
		}
	}
	err = cmd.Wait()
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // what it started (etcd) ends with it
	if exit, ok := err.(*exec.ExitError); ok {
		return exit.ExitCode(), lines
	}
	if err != nil {
		return 1, append(lines, err.Error())
	}
	return 0, lines
}
