package stats

import (
	"cmp"
	"slices"
	"sync"
	"sync/atomic"
)

// Key identifies a group of measurements: which model, from which provider,
// in which output-length bucket (see LengthBuckets), for which class of
// prompt. Empty fields are ordinary values ("" groups everything without that
// label; the zero Key is one such group). Key is a plain comparable value,
// usable as a map key and safe to share.
type Key struct {
	Model    string
	Provider string
	Bucket   string
	Class    string
}

// OtherKey is the overflow group of Groups: every key seen after the group
// limit was reached is folded into it.
var OtherKey = Key{Model: "other", Provider: "other", Bucket: "other", Class: "other"}

// DefaultGroupLimit is the number of distinct keys NewGroups allows for a
// limit <= 0.
const DefaultGroupLimit = 64

// Groups maps a small set of keys to values (typically a *Sketch per key
// behind a mutex, or an *Aggregate) with a cap on the number of distinct keys,
// so that a label with unexpected cardinality (a model name per request, a
// user ID by mistake) cannot grow memory without bound: once limit distinct
// keys exist, further new keys share the value of OtherKey. OtherKey itself
// never counts toward the limit, so there are at most limit+1 groups.
//
// All methods are safe for concurrent use. Get of an existing key takes a
// read lock and does not allocate. The zero Groups is usable: limit
// DefaultGroupLimit, values the zero V.
type Groups[V any] struct {
	mu         sync.RWMutex
	m          map[Key]V
	limit      int
	regular    int // keys other than OtherKey
	newValue   func(Key) V
	overflowed atomic.Int64
}

// NewGroups returns an empty Groups allowing limit distinct keys (limit <= 0
// means DefaultGroupLimit). newValue builds the value of a key on its first
// Get; it is called once per key, with the write lock held, so it must not
// call back into the Groups. A nil newValue makes values the zero V.
func NewGroups[V any](limit int, newValue func(Key) V) *Groups[V] {
	return &Groups[V]{limit: limit, newValue: newValue}
}

// Get returns the value of k, creating it on first use. Once the limit of
// distinct keys is reached, a new k gets the value of OtherKey instead (and
// Overflowed grows by one for every such Get).
func (g *Groups[V]) Get(k Key) V {
	g.mu.RLock()
	v, ok := g.m[k]
	if !ok && k != OtherKey && g.regular >= g.max() {
		v, ok = g.m[OtherKey]
		if ok {
			g.overflowed.Add(1)
		}
	}
	g.mu.RUnlock()
	if ok {
		return v
	}
	return g.create(k)
}

func (g *Groups[V]) max() int {
	if g.limit <= 0 {
		return DefaultGroupLimit
	}
	return g.limit
}

// create is Get's slow path, under the write lock.
func (g *Groups[V]) create(k Key) V {
	g.mu.Lock()
	defer g.mu.Unlock()
	if v, ok := g.m[k]; ok {
		return v
	}
	if k != OtherKey && g.regular >= g.max() {
		g.overflowed.Add(1)
		k = OtherKey
		if v, ok := g.m[k]; ok {
			return v
		}
	}
	var v V
	if g.newValue != nil {
		v = g.newValue(k)
	}
	if g.m == nil {
		g.m = make(map[Key]V)
	}
	g.m[k] = v
	if k != OtherKey {
		g.regular++
	}
	return v
}

// Range calls f for every group, in increasing order of Model, Provider,
// Bucket, Class, until f returns false. It works on a copy of the key set
// taken at the start, so f may call Get (groups created meanwhile are not
// visited).
func (g *Groups[V]) Range(f func(Key, V) bool) {
	type entry struct {
		k Key
		v V
	}
	g.mu.RLock()
	entries := make([]entry, 0, len(g.m))
	for k, v := range g.m {
		entries = append(entries, entry{k, v})
	}
	g.mu.RUnlock()
	slices.SortFunc(entries, func(a, b entry) int {
		return cmp.Or(
			cmp.Compare(a.k.Model, b.k.Model),
			cmp.Compare(a.k.Provider, b.k.Provider),
			cmp.Compare(a.k.Bucket, b.k.Bucket),
			cmp.Compare(a.k.Class, b.k.Class),
		)
	})
	for _, e := range entries {
		if !f(e.k, e.v) {
			return
		}
	}
}

// Len returns the number of groups, the overflow group included once it
// exists.
func (g *Groups[V]) Len() int {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return len(g.m)
}

// Overflowed returns how many Get calls were folded into the overflow group
// because the limit was reached.
func (g *Groups[V]) Overflowed() int64 { return g.overflowed.Load() }
