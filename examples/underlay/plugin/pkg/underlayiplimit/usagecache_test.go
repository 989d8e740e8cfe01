package underlayiplimit

import (
	"fmt"
	"testing"
)

// sharedSlot returns n node names whose first slot is the same in c's table.
func sharedSlot(t *testing.T, c *usageCache, n int) []string {
	t.Helper()
	bySlot := map[int][]string{}
	for i := 0; i < 1_000_000; i++ {
		name := fmt.Sprintf("node-%d", i)
		_, slot := c.slots(name)
		bySlot[slot] = append(bySlot[slot], name)
		if len(bySlot[slot]) == n {
			return bySlot[slot]
		}
	}
	t.Fatalf("no %d names share a slot", n)
	return nil
}

func TestUsageCacheKeepsAnEntryPerNodeAndGeneration(t *testing.T) {
	c := newUsageCache()
	c.put(&nodeUsage{name: "a", generation: 1, optedIn: 3})
	if u := c.get("a", 1); u == nil || u.optedIn != 3 {
		t.Fatalf("get(a, 1) = %+v, want the entry stored", u)
	}
	if u := c.get("a", 2); u != nil {
		t.Fatalf("get(a, 2) = %+v: an entry of another generation must not count", u)
	}
	if u := c.get("b", 1); u != nil {
		t.Fatalf("get(b, 1) = %+v: another node's entry must not count", u)
	}
	c.put(&nodeUsage{name: "a", generation: 2, optedIn: 4})
	if u := c.get("a", 2); u == nil || u.optedIn != 4 {
		t.Fatalf("get(a, 2) = %+v, want the newer entry", u)
	}
}

func TestTwoNodesSharingASlotBothStayCached(t *testing.T) {
	c := newUsageCache()
	names := sharedSlot(t, c, 3)
	c.put(&nodeUsage{name: names[0], generation: 1})
	c.put(&nodeUsage{name: names[1], generation: 1})
	for _, name := range names[:2] {
		if c.get(name, 1) == nil {
			t.Fatalf("%s was evicted by a node sharing its slot", name)
		}
	}
	// A third takes the first slot: correct (the evicted node is recounted), never a wrong entry.
	c.put(&nodeUsage{name: names[2], generation: 1, optedIn: 9})
	if u := c.get(names[2], 1); u == nil || u.optedIn != 9 {
		t.Fatalf("get(%s) = %+v after its put", names[2], u)
	}
	if u := c.get(names[0], 1); u != nil && u.name != names[0] {
		t.Fatalf("get(%s) returned %s's entry", names[0], u.name)
	}
	// Updating a node kept in the second slot replaces it there, not the first slot's node.
	c.put(&nodeUsage{name: names[1], generation: 2})
	if c.get(names[2], 1) == nil || c.get(names[1], 2) == nil {
		t.Fatal("an update of the second slot's node evicted the first slot's")
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
