package underlayiplimit

import (
	"hash/maphash"
	"sync/atomic"
)

// nodeUsage is what Filter and Score need of one NodeInfo, computed once per
// NodeInfo generation (the scheduler gives every change of a node's pods or
// labels a new, never reused generation, preemption's simulated copies
// included), so a node's pods are counted again only after they changed.
// Entries are replaced whole, never changed in place.
type nodeUsage struct {
	name       string
	generation int64
	optedIn    int64 // opted-in pods in the NodeInfo, finished ones left out
	capacity   int64
	capacityOK bool
}

// usageCache holds one nodeUsage per node in an array of slots picked by a
// hash of the node's name. Filter and Score call it for hundreds of nodes per
// pod on 16 goroutines, so a lookup is one hash of a short string and two
// atomic loads: no lock, no allocation, no map. (A sync.Map here cost 7% of
// the whole scheduler's CPU at 5000 nodes: its hash trie walk missed the
// cache on every level.) A node looks in two neighbouring slots, so two nodes
// that hash alike rarely evict each other; when they do, each recount is
// still correct, only slower. Only a new generation allocates.
type usageCache struct {
	seed  maphash.Seed
	table atomic.Pointer[[]atomic.Pointer[nodeUsage]]
}

// minSlots keeps small clusters' tables out of each other's way; slotsPerNode
// keeps the table at most one-eighth full, so shared slots stay rare.
const (
	minSlots     = 1 << 10
	slotsPerNode = 8
)

func newUsageCache() *usageCache {
	c := &usageCache{seed: maphash.MakeSeed()}
	table := make([]atomic.Pointer[nodeUsage], minSlots)
	c.table.Store(&table)
	return c
}

// fit grows the table, once per cycle at most, when the cluster has grown
// past it; the old entries are dropped (each node is counted again once).
func (c *usageCache) fit(nodes int) {
	want := minSlots
	for want < nodes*slotsPerNode {
		want <<= 1
	}
	if len(*c.table.Load()) < want {
		table := make([]atomic.Pointer[nodeUsage], want)
		c.table.Store(&table)
	}
}

// slots returns the table and the first of the node's two slots.
func (c *usageCache) slots(name string) ([]atomic.Pointer[nodeUsage], int) {
	table := *c.table.Load()
	return table, int(maphash.String(c.seed, name) & uint64(len(table)-2))
}

// get returns the node's entry of that generation, or nil.
func (c *usageCache) get(name string, generation int64) *nodeUsage {
	table, i := c.slots(name)
	for _, u := range [2]*nodeUsage{table[i].Load(), table[i+1].Load()} {
		if u != nil && u.generation == generation && u.name == name {
			return u
		}
	}
	return nil
}

// put stores the entry in the node's own slot, else a free one, else the first.
func (c *usageCache) put(u *nodeUsage) {
	table, i := c.slots(u.name)
	first, second := table[i].Load(), table[i+1].Load()
	switch {
	case second != nil && second.name == u.name:
		table[i+1].Store(u)
	case first == nil || first.name == u.name || second != nil:
		table[i].Store(u)
	default:
		table[i+1].Store(u)
	}
}
