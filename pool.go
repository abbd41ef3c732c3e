package tpsmeter

import (
	"sync"

	"github.com/tpsmeter/tpsmeter/stats"
	"github.com/tpsmeter/tpsmeter/tokenize"
)

// Per-stream resources are recycled when a request ends: a long-running
// backend then meters each new stream without allocating its sketches and
// token counters again, and without regrowing their buffers.

// sketchSet is the per-stream distributions of a Recorder.
type sketchSet struct {
	chunkGap, tokenGap, perChunk stats.Sketch
}

var sketchPool = sync.Pool{New: func() any { return new(sketchSet) }}

func getSketches() *sketchSet { return sketchPool.Get().(*sketchSet) }

func putSketches(s *sketchSet) {
	s.chunkGap.Reset()
	s.tokenGap.Reset()
	s.perChunk.Reset()
	sketchPool.Put(s)
}

// counterPools holds one pool of *tokenize.Counter per encoding name.
var counterPools sync.Map // string -> *sync.Pool

func getCounter(enc string) (*tokenize.Counter, error) {
	if p, ok := counterPools.Load(enc); ok {
		if c, ok := p.(*sync.Pool).Get().(*tokenize.Counter); ok && c != nil {
			return c, nil
		}
	}
	return tokenize.NewCounter(enc)
}

func putCounter(c *tokenize.Counter) {
	enc := c.Encoding()
	p, ok := counterPools.Load(enc)
	if !ok {
		p, _ = counterPools.LoadOrStore(enc, new(sync.Pool))
	}
	c.Reset()
	p.(*sync.Pool).Put(c)
}

// release returns the Recorder's per-stream resources to their pools once
// its Result is built and recorded; nothing reads them afterwards.
func (r *Recorder) release() {
	if r.sketches != nil {
		putSketches(r.sketches)
		r.sketches = nil
		r.chunkGap, r.tokenGap, r.perChunk = nil, nil, nil
	}
	for i := range r.counters {
		if c, ok := r.counters[i].counter.(*tokenize.Counter); ok && r.counters[i].pooled {
			putCounter(c)
		}
		r.counters[i].counter = nil
	}
	r.counters = r.counters[:0]
}
