package tpsotel

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

// TestSetCache: each key is built once while the cache has room, lookups of
// known keys become lock-free (promoted), the size never exceeds the bound,
// and keys past the bound are still answered (built each time).
func TestSetCache(t *testing.T) {
	tests := []struct {
		name       string
		max, keys  int
		goroutines int
	}{
		{"few keys", 16, 5, 1},
		{"exactly full", 8, 8, 1},
		{"overflow", 8, 50, 1},
		{"concurrent overflow", 64, 500, 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &setCache[string, *int]{max: tc.max}
			var builds atomic.Int64
			build := func(k string) *int {
				builds.Add(1)
				n := len(k)
				return &n
			}
			var wg sync.WaitGroup
			for g := range tc.goroutines {
				wg.Go(func() {
					for round := range 3 {
						for i := range tc.keys {
							k := fmt.Sprintf("key-%d", (i+g*7+round)%tc.keys)
							if v := c.get(k, build); v == nil || *v != len(k) {
								t.Errorf("get(%q) = %v", k, v)
								return
							}
						}
					}
				})
			}
			wg.Wait()
			if c.len() > tc.max {
				t.Errorf("cache holds %d keys, bound %d", c.len(), tc.max)
			}
			cached := min(tc.keys, tc.max)
			if tc.keys <= tc.max {
				if int(builds.Load()) != tc.keys {
					t.Errorf("%d builds for %d keys that fit", builds.Load(), tc.keys)
				}
				if c.len() != cached {
					t.Errorf("after 3 rounds %d keys are lock-free, want %d", c.len(), cached)
				}
			} else if !c.full.Load() {
				t.Errorf("cache with %d keys over bound %d is not marked full", tc.keys, tc.max)
			}
		})
	}
}

// TestModelCapIsFirstComeAndStable: the first max names are kept, later
// ones overflow, and a name's fate never changes.
func TestModelCapIsFirstComeAndStable(t *testing.T) {
	c := newModelCap(2)
	steps := []struct{ in, want string }{
		{"", ""}, {"a", "a"}, {"b", "b"}, {"c", OverflowModel}, {"a", "a"}, {"c", OverflowModel}, {"b", "b"}, {"", ""},
	}
	for i, s := range steps {
		if got := c.name(s.in); got != s.want {
			t.Errorf("step %d: name(%q) = %q, want %q", i, s.in, got, s.want)
		}
	}
}
