package underlayiplimit

import "testing"

func TestUsageCacheKeepsUsageByGeneration(t *testing.T) {
	c := newUsageCache()
	c.put(7, nodeUsage{optedIn: 3, capacity: 10, capacityOK: true})
	if u, ok := c.get(7); !ok || u != (nodeUsage{optedIn: 3, capacity: 10, capacityOK: true}) {
		t.Fatalf("get(7) = %+v, %v, want the usage stored", u, ok)
	}
	if u, ok := c.get(8); ok {
		t.Fatalf("get(8) = %+v: another generation's usage must not count", u)
	}
	// A generation a whole table away indexes the same pair: it must not read 7's usage.
	if u, ok := c.get(7 + minSlots); ok {
		t.Fatalf("get(7+%d) = %+v: a generation sharing the pair read another's usage", minSlots, u)
	}
	c.put(9, nodeUsage{capacityOK: false})
	if u, ok := c.get(9); !ok || u.capacityOK {
		t.Fatalf("get(9) = %+v, %v, want an invalid capacity kept as invalid", u, ok)
	}
}

func TestTwoGenerationsSharingAPairBothStayCachedAndTheOlderGoesFirst(t *testing.T) {
	c := newUsageCache()
	a, b, newer := int64(2), int64(2+minSlots), int64(2+2*minSlots)
	c.put(a, nodeUsage{optedIn: 1})
	c.put(b, nodeUsage{optedIn: 2})
	if u, ok := c.get(a); !ok || u.optedIn != 1 {
		t.Fatalf("generation %d was evicted by one sharing its pair (%+v)", a, u)
	}
	if u, ok := c.get(b); !ok || u.optedIn != 2 {
		t.Fatalf("generation %d not kept beside %d (%+v)", b, a, u)
	}
	// A third takes the older one's slot: correct (the evicted node is recounted), never a wrong entry.
	c.put(newer, nodeUsage{optedIn: 9})
	if u, ok := c.get(newer); !ok || u.optedIn != 9 {
		t.Fatalf("get(%d) = %+v after its put", newer, u)
	}
	if _, ok := c.get(a); ok {
		t.Fatalf("the older generation %d stayed and the newer %d replaced the other", a, b)
	}
	if u, ok := c.get(b); !ok || u.optedIn != 2 {
		t.Fatalf("generation %d was evicted instead of the older %d", b, a)
	}
}

func TestUsageThatDoesNotFitIsNotCached(t *testing.T) {
	c := newUsageCache()
	for name, put := range map[string]struct {
		generation int64
		usage      nodeUsage
	}{
		"capacity over 4095":   {1, nodeUsage{capacity: 1 << capacityBits, capacityOK: true}},
		"2048 opted-in pods":   {2, nodeUsage{optedIn: 1 << optedInBits, capacity: 10, capacityOK: true}},
		"generation past 2^39": {1 << 39, nodeUsage{capacity: 10, capacityOK: true}},
		"negative generation":  {-4, nodeUsage{capacity: 10, capacityOK: true}},
	} {
		c.put(put.generation, put.usage)
		if u, ok := c.get(put.generation); ok {
			t.Errorf("%s: cached as %+v; it must be counted every time instead", name, u)
		}
	}
	c.put(3, nodeUsage{optedIn: 1<<optedInBits - 1, capacity: 1<<capacityBits - 1, capacityOK: true})
	if u, ok := c.get(3); !ok || u.optedIn != 1<<optedInBits-1 || u.capacity != 1<<capacityBits-1 {
		t.Fatalf("the largest usage that fits came back as %+v, %v", u, ok)
	}
}

func TestFitGrowsTheTableForALargerCluster(t *testing.T) {
	c := newUsageCache()
	c.fit(10)
	if got := len(*c.table.Load()); got != minSlots {
		t.Fatalf("10 nodes: %d slots, want the minimum %d", got, minSlots)
	}
	c.fit(5000)
	if got := len(*c.table.Load()); got < 5000*slotsPerNode || got&(got-1) != 0 {
		t.Fatalf("5000 nodes: %d slots, want a power of two >= %d", got, 5000*slotsPerNode)
	}
	c.fit(10)
	if got := len(*c.table.Load()); got < 5000*slotsPerNode {
		t.Fatalf("the table shrank to %d slots", got)
	}
}
