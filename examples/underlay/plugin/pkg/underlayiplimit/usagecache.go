package underlayiplimit

import "sync/atomic"

// nodeUsage is what Filter and Score need of one NodeInfo, computed once per
// NodeInfo generation: the scheduler gives every change of a node's pods or
// labels a new generation from one process-wide counter, never reused and
// never shared by two nodes (preemption's simulated copies included), so the
// generation alone names a node's state, and its pods are counted again only
// after they changed.
type nodeUsage struct {
	optedIn    int64 // opted-in pods in the NodeInfo, finished ones left out
	capacity   int64
	capacityOK bool
}

// usageCache holds nodeUsage by generation, packed with its generation into
// one uint64 per slot of an array indexed by the generation itself. Filter and
// Score call it for hundreds of nodes per pod on 16 goroutines, so a lookup is
// one atomic load of one word: no hash, no pointer to follow, no lock, no
// allocation. (A sync.Map keyed by node name cost 7% of the whole scheduler's
// CPU at 5000 nodes, and slots of pointers picked by a hash of the name still
// 4%: hashing the name, then the entry's cache miss.) A generation may sit in
// either slot of its pair, so two live generations that index alike rarely
// evict each other; when they do, each recount is still correct, only slower.
type usageCache struct {
	table atomic.Pointer[[]atomic.Uint64]
}

// minSlots keeps small clusters' tables out of each other's way; slotsPerNode
// keeps the table at most one-eighth full, so shared pairs stay rare.
const (
	minSlots     = 1 << 10
	slotsPerNode = 8
)

// A slot's word, from the lowest bit: present, capacityOK, optedIn (11 bits),
// capacity (12 bits), generation (39 bits). Usage that does not fit (a node
// with 2048 opted-in pods, a capacity label over 4095, a generation past 2^39)
// is not cached, only counted every time.
const (
	presentBit    = 1
	capacityOKBit = 2
	optedInShift  = 2
	optedInBits   = 11
	capacityShift = optedInShift + optedInBits
	capacityBits  = 12
	genShift      = capacityShift + capacityBits
)

func newUsageCache() *usageCache {
	c := &usageCache{}
	table := make([]atomic.Uint64, minSlots)
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
		table := make([]atomic.Uint64, want)
		c.table.Store(&table)
	}
}

// pack returns the slot word for the generation's usage; ok is false when it does not fit.
func pack(generation int64, u nodeUsage) (word uint64, ok bool) {
	if generation < 0 || generation >= 1<<(64-genShift) ||
		u.optedIn < 0 || u.optedIn >= 1<<optedInBits || u.capacity < 0 || u.capacity >= 1<<capacityBits {
		return 0, false
	}
	word = uint64(generation)<<genShift | uint64(u.capacity)<<capacityShift | uint64(u.optedIn)<<optedInShift | presentBit
	if u.capacityOK {
		word |= capacityOKBit
	}
	return word, true
}

func unpack(word uint64) nodeUsage {
	return nodeUsage{
		optedIn:    int64(word >> optedInShift & (1<<optedInBits - 1)),
		capacity:   int64(word >> capacityShift & (1<<capacityBits - 1)),
		capacityOK: word&capacityOKBit != 0,
	}
}

// holds reports whether the word is present and of that generation.
func holds(word uint64, generation int64) bool {
	return word&presentBit != 0 && word>>genShift == uint64(generation)
}

// pair returns the table and the first of the generation's two slots.
func (c *usageCache) pair(generation int64) ([]atomic.Uint64, int) {
	table := *c.table.Load()
	return table, int(uint64(generation) & uint64(len(table)-2))
}

// get returns the usage cached for that generation.
func (c *usageCache) get(generation int64) (nodeUsage, bool) {
	table, i := c.pair(generation)
	if w := table[i].Load(); holds(w, generation) {
		return unpack(w), true
	}
	if w := table[i+1].Load(); holds(w, generation) {
		return unpack(w), true
	}
	return nodeUsage{}, false
}

// put stores the usage in a free slot of the pair, else over the older
// generation (a node's older state is the likelier to be gone).
func (c *usageCache) put(generation int64, u nodeUsage) {
	word, ok := pack(generation, u)
	if !ok {
		return
	}
	table, i := c.pair(generation)
	first, second := table[i].Load(), table[i+1].Load()
	switch {
	case first&presentBit == 0:
		table[i].Store(word)
	case second&presentBit == 0:
		table[i+1].Store(word)
	case first>>genShift <= second>>genShift:
		table[i].Store(word)
	default:
		table[i+1].Store(word)
	}
}
