package stats

import (
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"
)

// Aggregate is a sketch that many goroutines can record into at once, for
// example every open stream of a chat backend. It is striped: it holds a few
// shards, each a Sketch with its own mutex, and Add uses the shard cached for
// the current processor (P) in a sync.Pool, so goroutines on different
// processors rarely share a lock or a cache line, and a shard's bins stay in
// one core's cache. Snapshot merges the shards. docs/performance.md compares
// it with a Sketch behind a single mutex.
//
// Memory is that of one Sketch per shard: 4 shards per GOMAXPROCS at creation,
// rounded up to a power of two, at least 4 and at most 256.
//
// All methods are safe for concurrent use. The zero Aggregate is not usable;
// create one with NewAggregate.
type Aggregate struct {
	shards []shard
	mask   uint32
	next   atomic.Uint32
	pool   sync.Pool // of *shard: the shard last used on this P
}

type shard struct {
	mu sync.Mutex
	s  Sketch
	_  [shardPad]byte // keep shards on separate cache lines
}

// sketchSize is unsafe.Sizeof(Sketch{}) on 64-bit platforms; a test checks it.
const (
	sketchSize = 232
	shardPad   = 128 - (8+sketchSize)%128
)

// NewAggregate returns an empty aggregate with DefaultRelativeAccuracy.
func NewAggregate() *Aggregate {
	n := 4 * runtime.GOMAXPROCS(0)
	n = max(4, min(256, 1<<bits.Len(uint(n-1))))
	a := &Aggregate{shards: make([]shard, n), mask: uint32(n - 1)}
	for i := range a.shards {
		a.shards[i].s.init(DefaultRelativeAccuracy)
	}
	// The pool only caches pointers into a.shards: when the garbage
	// collector empties it, no data is lost, the next Get just picks a shard
	// round-robin.
	a.pool.New = func() any { return &a.shards[a.next.Add(1)&a.mask] }
	return a
}

func (a *Aggregate) shard() *shard { return a.pool.Get().(*shard) }

// Add records v; see Sketch.Add for how NaN, Inf, zero and negative values
// are handled. It does not allocate in steady state.
func (a *Aggregate) Add(v float64) {
	sh := a.shard()
	sh.mu.Lock()
	sh.s.Add(v)
	sh.mu.Unlock()
	a.pool.Put(sh)
}

// Snapshot returns a new Sketch holding everything recorded so far. Shards
// are locked one at a time, so values added while Snapshot runs may or may
// not be included, but each is either fully in or out.
func (a *Aggregate) Snapshot() *Sketch {
	out := NewSketch()
	for i := range a.shards {
		sh := &a.shards[i]
		sh.mu.Lock()
		_ = out.Merge(&sh.s) // same accuracy by construction
		sh.mu.Unlock()
	}
	return out
}

// Merge adds every value of s to the aggregate (nil s is a no-op). It returns
// ErrIncompatible, adding nothing, if s has a relative accuracy other than
// DefaultRelativeAccuracy. s must not be modified concurrently.
func (a *Aggregate) Merge(s *Sketch) error {
	if s == nil {
		return nil
	}
	sh := a.shard()
	sh.mu.Lock()
	err := sh.s.Merge(s)
	sh.mu.Unlock()
	a.pool.Put(sh)
	return err
}

// Reset empties the aggregate. Values added concurrently with Reset may
// survive it.
func (a *Aggregate) Reset() {
	for i := range a.shards {
		sh := &a.shards[i]
		sh.mu.Lock()
		sh.s.Reset()
		sh.mu.Unlock()
	}
}
