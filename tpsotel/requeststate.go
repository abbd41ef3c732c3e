package tpsotel

import (
	"math"
	"time"

	"github.com/tpsmeter/tpsmeter"
)

// flushEvery bounds how long a request in the ChunkProducer mode keeps its
// per-chunk values to itself: they reach the ChunkProducer when the request
// ends, and during a long request with the first chunk that arrives at
// least flushEvery (of the request's own time, ChunkInfo.At) after the
// previous flush.
const flushEvery = time.Second

// maxLocalBuckets is the largest bucket count of the per-chunk histograms
// (tpsmeter.token.gap: 22 boundaries, 23 buckets), checked in init.
const maxLocalBuckets = 24

func init() {
	for _, b := range [...][]float64{durationBuckets, tokenGapBuckets, chunkTokenBuckets} {
		if len(b)+1 > maxLocalBuckets {
			panic("tpsotel: maxLocalBuckets is too small")
		}
	}
}

// producerState is a request's state in the ChunkProducer mode (the value
// Telemetry's Start hook returns): the request's attribute set and its
// per-chunk values since the last flush, kept on the goroutine that
// consumes the stream. Recording a chunk is then a few plain additions to
// memory that only this request touches; the producer's shared atomic
// histograms (whose cache lines every concurrent stream of the same
// attribute set would otherwise pull from core to core at every chunk) see
// one merge per request and second.
type producerState struct {
	attrs     *chunkAttrs
	flushedAt time.Duration
	local     [numChunkMetrics]localHist
}

func newProducerState(a *chunkAttrs) *producerState {
	s := &producerState{attrs: a}
	s.reset()
	return s
}

func (s *producerState) reset() {
	for i := range s.local {
		s.local[i].reset()
	}
}

// record adds the values of one output chunk: its gap (after the first
// chunk), its k per-token gaps gap/k in one step (when it was credited
// tokens), and its token count, each with its metric's boundaries in p
// (which New initialized). ci is a pointer: the ChunkInfo is 168 bytes.
func (s *producerState) record(p *ChunkProducer, ci *tpsmeter.ChunkInfo) {
	if ci.Index > 0 {
		gap := ci.Gap.Seconds()
		s.local[metricTimePerChunk].add(p.metrics[metricTimePerChunk].bounds, gap, 1, gap)
		if ci.Tokens > 0 {
			s.local[metricTokenGap].add(p.metrics[metricTokenGap].bounds, gap/float64(ci.Tokens), uint64(ci.Tokens), gap)
		}
	}
	n := float64(ci.Tokens)
	s.local[metricChunkTokens].add(p.metrics[metricChunkTokens].bounds, n, 1, n)
}

// localHist is the part of one histogram that one request recorded since
// the last flush. Its bucket indices are those of the metric's boundaries.
type localHist struct {
	n        uint64
	sum      float64
	min, max float64
	counts   [maxLocalBuckets]uint64
}

func (l *localHist) reset() {
	*l = localHist{min: math.Inf(1), max: math.Inf(-1)}
}

// add records k values equal to v whose total is sum (the caller passes
// the total it knows exactly, e.g. a chunk's gap for k per-token gaps of
// gap/k).
func (l *localHist) add(bounds []float64, v float64, k uint64, sum float64) {
	if v < l.min {
		l.min = v
	}
	if v > l.max {
		l.max = v
	}
	l.sum += sum
	l.n += k
	l.counts[bucketIndex(bounds, v)] += k
}

// flush merges the request's values into the producer's histograms.
func (s *producerState) flush(p *ChunkProducer) {
	for m := range s.local {
		l := &s.local[m]
		if l.n == 0 {
			continue
		}
		s.attrs.hist(p, m).merge(l)
		l.reset()
	}
}
