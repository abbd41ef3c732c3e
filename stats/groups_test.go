package stats_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tpsmeter/tpsmeter/stats"
)

func key(model string) stats.Key {
	return stats.Key{Model: model, Provider: "openai", Bucket: "short", Class: "chat"}
}

func TestGroupsLimitAndOverflow(t *testing.T) {
	for _, tc := range []struct {
		name      string
		limit     int
		keys      int
		wantLen   int // groups, overflow group included
		wantOver  int64
		wantOther bool
	}{
		{"under the limit", 3, 2, 2, 0, false},
		{"exactly the limit", 3, 3, 3, 0, false},
		{"two over", 3, 5, 4, 2, true},
		{"default limit", 0, stats.DefaultGroupLimit + 10, stats.DefaultGroupLimit + 1, 10, true},
		{"negative limit means default", -1, stats.DefaultGroupLimit, stats.DefaultGroupLimit, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			created := map[stats.Key]int{}
			g := stats.NewGroups(tc.limit, func(k stats.Key) *stats.Sketch {
				created[k]++
				return stats.NewSketch()
			})
			for i := range tc.keys {
				g.Get(key(fmt.Sprint("m", i))).Add(float64(i))
			}
			for i := range tc.keys { // second round: no new groups, no new overflow for known keys
				g.Get(key(fmt.Sprint("m", i))).Add(float64(i))
			}
			if g.Len() != tc.wantLen {
				t.Errorf("Len = %d, want %d", g.Len(), tc.wantLen)
			}
			if g.Overflowed() != 2*tc.wantOver {
				t.Errorf("Overflowed = %d, want %d (each folded Get counts)", g.Overflowed(), 2*tc.wantOver)
			}
			for k, n := range created {
				if n != 1 {
					t.Errorf("newValue(%v) called %d times", k, n)
				}
			}
			var total int64
			g.Range(func(k stats.Key, s *stats.Sketch) bool {
				total += s.Count()
				if k == stats.OtherKey && s.Count() != 2*tc.wantOver {
					t.Errorf("overflow group holds %d values, want %d", s.Count(), 2*tc.wantOver)
				}
				return true
			})
			if total != int64(2*tc.keys) {
				t.Errorf("groups hold %d values, want %d: values were lost", total, 2*tc.keys)
			}
			if _, ok := created[stats.OtherKey]; ok != tc.wantOther {
				t.Errorf("overflow group created = %v, want %v", ok, tc.wantOther)
			}
		})
	}
}

func TestGroupsOtherKeyIsNotCounted(t *testing.T) {
	g := stats.NewGroups[int](1, nil)
	g.Get(stats.OtherKey)
	g.Get(key("a"))
	if g.Len() != 2 || g.Overflowed() != 0 {
		t.Fatalf("Len %d, Overflowed %d; OtherKey must not use up the limit", g.Len(), g.Overflowed())
	}
	g.Get(key("b"))
	if g.Len() != 2 || g.Overflowed() != 1 {
		t.Fatalf("Len %d, Overflowed %d after one key too many", g.Len(), g.Overflowed())
	}
}

func TestGroupsRangeOrderAndStop(t *testing.T) {
	g := stats.NewGroups(0, func(k stats.Key) string { return k.Model + "/" + k.Class })
	for _, k := range []stats.Key{
		{Model: "b", Class: "x"}, {Model: "a", Class: "y"}, {Model: "a", Class: "x"}, {Model: "a", Provider: "p"},
	} {
		g.Get(k)
	}
	var got []string
	g.Range(func(k stats.Key, v string) bool {
		got = append(got, v)
		g.Get(stats.Key{Model: "z" + v}) // f may call back into g
		return true
	})
	want := []string{"a/x", "a/y", "a/", "b/x"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("Range order = %v, want %v", got, want)
	}
	n := 0
	g.Range(func(stats.Key, string) bool { n++; return n < 2 })
	if n != 2 {
		t.Fatalf("Range visited %d after f returned false at 2", n)
	}
}

func TestGroupsZeroValue(t *testing.T) {
	var g stats.Groups[*int]
	if v := g.Get(key("a")); v != nil {
		t.Fatalf("zero Groups value = %v, want nil", v)
	}
	if g.Len() != 1 {
		t.Fatalf("Len = %d", g.Len())
	}
}

func TestGroupsConcurrentGetCreatesOnce(t *testing.T) {
	var calls atomic.Int64
	g := stats.NewGroups(10, func(stats.Key) *atomic.Int64 { calls.Add(1); return new(atomic.Int64) })
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 1000 {
				g.Get(key(fmt.Sprint("m", (i+w)%20))).Add(1)
			}
		})
	}
	wg.Wait()
	if calls.Load() != 11 { // 10 keys and the overflow group
		t.Fatalf("newValue called %d times, want 11", calls.Load())
	}
	var total int64
	g.Range(func(_ stats.Key, v *atomic.Int64) bool { total += v.Load(); return true })
	if total != 8000 {
		t.Fatalf("total %d, want 8000", total)
	}
}

func TestGroupsGetExistingDoesNotAllocate(t *testing.T) {
	g := stats.NewGroups(2, func(stats.Key) *stats.Sketch { return stats.NewSketch() })
	known, other := key("gpt-4o"), key("unknown")
	g.Get(known)
	g.Get(key("second"))
	g.Get(other) // creates the overflow group
	if n := testing.AllocsPerRun(1000, func() { g.Get(known); g.Get(other) }); n != 0 {
		t.Fatalf("Get allocates %v times", n)
	}
}
