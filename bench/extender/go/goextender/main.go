// goextender: the benchmark's baseline, a minimal scheduler extender in Go's
// standard library with the same underlay-IP policy as the Python extender.
//
// It lists nodes and pods from the API server once, then watches both from the
// list's resourceVersion (re-listing on any watch failure), and serves filter and
// prioritize in both NodeList and NodeNames modes. Decoding reads only the fields
// the policy needs (node items stay raw and are echoed back unchanged), which is
// the fastest a stdlib Go extender gets. No TLS, bind or preempt: the benchmark
// does not drive them.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net/http"
	"strconv"
	"sync"
	"time"
)

const (
	capacityLabel   = "underlay.example.com/capacity"
	podLabel        = "underlay.example.com/ip"
	defaultCapacity = 10
)

type meta struct {
	Name            string            `json:"name"`
	Namespace       string            `json:"namespace"`
	UID             string            `json:"uid"`
	ResourceVersion string            `json:"resourceVersion"`
	Labels          map[string]string `json:"labels"`
}

type object struct {
	Metadata meta `json:"metadata"`
	Spec     struct {
		NodeName string `json:"nodeName"`
	} `json:"spec"`
	Status struct {
		Phase string `json:"phase"`
	} `json:"status"`
}

type list struct {
	Metadata struct {
		ResourceVersion string `json:"resourceVersion"`
	} `json:"metadata"`
	Items []object `json:"items"`
}

type podEntry struct {
	node    string
	counted bool
}

type state struct {
	mu     sync.RWMutex
	nodes  map[string]map[string]string // name -> labels
	pods   map[string]podEntry          // uid -> entry
	used   map[string]int
	synced map[string]bool
}

func (s *state) setPod(o object) {
	s.delPod(o.Metadata.UID)
	counted := o.Spec.NodeName != "" && o.Status.Phase != "Succeeded" && o.Status.Phase != "Failed" &&
		o.Metadata.Labels[podLabel] == "true"
	s.pods[o.Metadata.UID] = podEntry{o.Spec.NodeName, counted}
	if counted {
		s.used[o.Spec.NodeName]++
	}
}

func (s *state) delPod(uid string) {
	if e, ok := s.pods[uid]; ok {
		if e.counted {
			s.used[e.node]--
		}
		delete(s.pods, uid)
	}
}

func capacity(labels map[string]string) (int, bool) {
	raw, ok := labels[capacityLabel]
	if !ok {
		return defaultCapacity, true
	}
	for _, r := range raw {
		if r < '0' || r > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(raw)
	return n, err == nil
}

func (s *state) reflect(api, kind string) {
	for {
		rv, err := s.list(api, kind)
		if err == nil {
			err = s.watch(api, kind, rv)
		}
		log.Printf("%s: %v; listing again", kind, err)
		time.Sleep(time.Second)
	}
}

func (s *state) list(api, kind string) (string, error) {
	resp, err := http.Get(api + "/api/v1/" + kind)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var l list
	if err := json.NewDecoder(resp.Body).Decode(&l); err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if kind == "nodes" {
		s.nodes = map[string]map[string]string{}
		for _, o := range l.Items {
			s.nodes[o.Metadata.Name] = o.Metadata.Labels
		}
	} else {
		s.pods, s.used = map[string]podEntry{}, map[string]int{}
		for _, o := range l.Items {
			s.setPod(o)
		}
	}
	s.synced[kind] = true
	return l.Metadata.ResourceVersion, nil
}

func (s *state) watch(api, kind, rv string) error {
	resp, err := http.Get(api + "/api/v1/" + kind + "?watch=true&resourceVersion=" + rv)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var ev struct {
			Type   string `json:"type"`
			Object object `json:"object"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return err
		}
		s.mu.Lock()
		switch {
		case ev.Type == "ERROR":
			s.mu.Unlock()
			return fmt.Errorf("watch error event")
		case kind == "nodes" && ev.Type == "DELETED":
			delete(s.nodes, ev.Object.Metadata.Name)
		case kind == "nodes":
			s.nodes[ev.Object.Metadata.Name] = ev.Object.Metadata.Labels
		case ev.Type == "DELETED":
			s.delPod(ev.Object.Metadata.UID)
		default:
			s.setPod(ev.Object)
		}
		s.mu.Unlock()
	}
	return fmt.Errorf("watch ended: %v", sc.Err())
}

type args struct {
	Pod   *object
	Nodes *struct {
		Items []json.RawMessage `json:"items"`
	}
	NodeNames *[]string
}

type nodeMeta struct {
	Metadata struct {
		Name   string            `json:"name"`
		Labels map[string]string `json:"labels"`
	} `json:"metadata"`
}

type candidate struct {
	name   string
	labels map[string]string
	known  bool
	raw    json.RawMessage
}

func (s *state) decode(w http.ResponseWriter, r *http.Request) (*args, []candidate, bool) {
	var a args
	if err := json.NewDecoder(r.Body).Decode(&a); err != nil || a.Pod == nil {
		http.Error(w, fmt.Sprintf("bad request: %v", err), http.StatusBadRequest)
		return nil, nil, false
	}
	var cands []candidate
	if a.Nodes != nil {
		cands = make([]candidate, len(a.Nodes.Items))
		for i, raw := range a.Nodes.Items {
			var m nodeMeta
			if err := json.Unmarshal(raw, &m); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return nil, nil, false
			}
			cands[i] = candidate{m.Metadata.Name, m.Metadata.Labels, true, raw}
		}
	} else if a.NodeNames != nil {
		cands = make([]candidate, len(*a.NodeNames))
		for i, name := range *a.NodeNames {
			labels, ok := s.nodes[name]
			cands[i] = candidate{name: name, labels: labels, known: ok}
		}
	}
	return &a, cands, true
}

func (s *state) filter(w http.ResponseWriter, r *http.Request) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if !s.synced["nodes"] || !s.synced["pods"] {
		json.NewEncoder(w).Encode(map[string]any{"Error": "not synced"})
		return
	}
	a, cands, ok := s.decode(w, r)
	if !ok {
		return
	}
	wants := a.Pod.Metadata.Labels[podLabel] == "true"
	failed, unresolvable := map[string]string{}, map[string]string{}
	var passedRaw []json.RawMessage
	passedNames := []string{}
	for _, c := range cands {
		if !c.known {
			unresolvable[c.name] = fmt.Sprintf("node %s is not in the extender's node cache", c.name)
			continue
		}
		if wants {
			capa, ok := capacity(c.labels)
			if !ok {
				failed[c.name] = fmt.Sprintf("node %s has an invalid %s label %q", c.name, capacityLabel, c.labels[capacityLabel])
				continue
			}
			if used := s.used[c.name]; used >= capa {
				failed[c.name] = fmt.Sprintf("node %s has no free underlay IP (%d/%d used)", c.name, used, capa)
				continue
			}
		}
		passedRaw = append(passedRaw, c.raw)
		passedNames = append(passedNames, c.name)
	}
	reply := map[string]any{"FailedNodes": failed, "FailedAndUnresolvableNodes": unresolvable, "Error": ""}
	if a.Nodes != nil {
		reply["Nodes"] = map[string]any{"metadata": map[string]any{}, "items": passedRaw}
		reply["NodeNames"] = nil
	} else {
		reply["Nodes"] = nil
		reply["NodeNames"] = passedNames
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(reply)
}

type hostPriority struct {
	Host  string
	Score int64
}

func (s *state) prioritize(w http.ResponseWriter, r *http.Request) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if !s.synced["nodes"] || !s.synced["pods"] {
		http.Error(w, "not synced", http.StatusServiceUnavailable)
		return
	}
	a, cands, ok := s.decode(w, r)
	if !ok {
		return
	}
	wants := a.Pod.Metadata.Labels[podLabel] == "true"
	out := make([]hostPriority, len(cands))
	for i, c := range cands {
		out[i].Host = c.name
		if !wants || !c.known {
			continue
		}
		capa, ok := capacity(c.labels)
		if !ok || capa == 0 {
			continue
		}
		if free := capa - s.used[c.name]; free > 0 {
			out[i].Score = min(int64(10*free/capa), 10)
		}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(out)
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	api := flag.String("api", "", "API server base URL (plain HTTP), e.g. http://127.0.0.1:6443")
	flag.Parse()
	s := &state{nodes: map[string]map[string]string{}, pods: map[string]podEntry{}, used: map[string]int{},
		synced: map[string]bool{}}
	go s.reflect(*api, "nodes")
	go s.reflect(*api, "pods")
	mux := http.NewServeMux()
	mux.HandleFunc("POST /filter", s.filter)
	mux.HandleFunc("POST /prioritize", s.prioritize)
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		s.mu.RLock()
		defer s.mu.RUnlock()
		if !s.synced["nodes"] || !s.synced["pods"] {
			http.Error(w, "not ready", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	log.Fatal(http.ListenAndServe(*addr, mux))
}
