package tpsotel

import (
	"sync"
	"sync/atomic"
)

// maxCachedSets bounds each attribute-set cache. Past it, a request whose
// attributes are not cached still records correctly, but builds its
// attribute set on every call (it allocates).
const maxCachedSets = 4096

// setCache is a bounded, concurrency-safe map from a comparable key to a
// value built once per key, tuned for keys that are read far more often
// than they are added (a request's attribute set is read at every chunk).
//
// It is sync.Map's scheme with typed maps, so that a lookup neither boxes
// its key nor allocates: a read-only map published through an atomic
// pointer answers most lookups without a lock; new keys go to a dirty map
// (a copy of the read map plus the new keys) under a mutex, and the dirty
// map is promoted to be the read map once the lookups that missed the read
// map since the last promotion reach its size, which keeps the copying
// amortized O(1) per new key.
type setCache[K comparable, V any] struct {
	read atomic.Pointer[map[K]V]
	// full is set once the read map holds max keys: a key not in it is
	// then built on every lookup, without the lock.
	full atomic.Bool
	max  int

	mu     sync.Mutex
	dirty  map[K]V // nil, or a superset of *read
	misses int
}

// get returns the value of k, building it with build when k is new.
func (c *setCache[K, V]) get(k K, build func(K) V) V {
	if r := c.read.Load(); r != nil {
		if v, ok := (*r)[k]; ok {
			return v
		}
	}
	if c.full.Load() {
		return build(k)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.read.Load()
	if r != nil {
		if v, ok := (*r)[k]; ok {
			return v
		}
	}
	if c.dirty == nil {
		c.dirty = make(map[K]V, c.size(r)+1)
		if r != nil {
			for rk, rv := range *r {
				c.dirty[rk] = rv
			}
		}
	}
	v, ok := c.dirty[k]
	if !ok {
		v = build(k)
		if len(c.dirty) < c.max {
			c.dirty[k] = v
		}
	}
	c.misses++
	if c.misses >= len(c.dirty) || len(c.dirty) >= c.max {
		d := c.dirty
		c.read.Store(&d)
		c.dirty, c.misses = nil, 0
		if len(d) >= c.max {
			c.full.Store(true)
		}
	}
	return v
}

func (c *setCache[K, V]) size(r *map[K]V) int {
	if r == nil {
		return 0
	}
	return len(*r)
}

// len returns the number of cached keys that lookups find without a lock.
func (c *setCache[K, V]) len() int { return c.size(c.read.Load()) }
