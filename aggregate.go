package tpsmeter

import (
	"sort"
	"sync"

	"github.com/tpsmeter/tpsmeter/stats"
)

// groupAgg holds the aggregate statistics of one group of requests. A
// group is written once per finished request (not per chunk), so one mutex
// is enough, and one sketch per metric keeps memory at a few KiB per metric
// (a striped stats.Aggregate per metric would multiply that by its shards).
type groupAgg struct {
	mu                                      sync.Mutex
	requests, partial, outputTokens         int64
	ttft, ttfc, duration, decodeTPS, e2eTPS *stats.Sketch
	chunkGap, tokenGap, tokensPerChunk      *stats.Sketch
	stalls, stalledShare, perceivedTPS      *stats.Sketch
	errors                                  map[string]int64 // by ErrorType: a small fixed set
}

func newGroupAgg() *groupAgg {
	return &groupAgg{
		ttft: stats.NewSketch(), ttfc: stats.NewSketch(), duration: stats.NewSketch(),
		decodeTPS: stats.NewSketch(), e2eTPS: stats.NewSketch(),
		chunkGap: stats.NewSketch(), tokenGap: stats.NewSketch(), tokensPerChunk: stats.NewSketch(),
		stalls: stats.NewSketch(), stalledShare: stats.NewSketch(), perceivedTPS: stats.NewSketch(),
		errors: map[string]int64{},
	}
}

// record adds a finished request to the meter's aggregates.
func (m *Meter) record(res *Result, r *Recorder) {
	if m.groups == nil {
		return
	}
	g := m.groups.Get(stats.Key{Model: res.Model, Provider: res.Provider, Bucket: res.OutputBucket, Class: res.Class})
	g.mu.Lock()
	defer g.mu.Unlock()
	g.requests++
	if res.Status == StatusPartial {
		g.partial++
		g.errors[res.ErrorType]++
	}
	g.outputTokens += int64(res.OutputTokens)
	g.duration.Add(res.Duration.Seconds())
	if r.haveChunk {
		g.ttfc.Add(res.TimeToFirstChunk.Seconds())
	}
	if !r.haveOutput {
		return
	}
	g.ttft.Add(res.TTFT.Seconds())
	if res.DecodeTPS > 0 {
		g.decodeTPS.Add(res.DecodeTPS)
	}
	if res.E2ETPS > 0 {
		g.e2eTPS.Add(res.E2ETPS)
	}
	_ = g.chunkGap.Merge(r.chunkGap)
	_ = g.tokenGap.Merge(r.tokenGap)
	_ = g.tokensPerChunk.Merge(r.perChunk)
	g.stalls.Add(float64(res.Perceived.Stalls))
	g.stalledShare.Add(res.Perceived.StalledShare)
	if res.Perceived.PerceivedTPS > 0 {
		g.perceivedTPS.Add(res.Perceived.PerceivedTPS)
	}
}

// GroupSnapshot is the aggregate of one group of requests: one model,
// provider, output-length bucket and class. Durations are in seconds, rates
// in tokens per second.
type GroupSnapshot struct {
	Key          stats.Key        `json:"key"`
	Requests     int64            `json:"requests"`
	Partial      int64            `json:"partial"`
	Errors       map[string]int64 `json:"errors,omitempty"`
	OutputTokens int64            `json:"output_tokens"`

	TTFT             stats.Summary `json:"ttft_seconds"`
	TimeToFirstChunk stats.Summary `json:"time_to_first_chunk_seconds"`
	Duration         stats.Summary `json:"duration_seconds"`
	DecodeTPS        stats.Summary `json:"decode_tps"`
	E2ETPS           stats.Summary `json:"e2e_tps"`
	ChunkGap         stats.Summary `json:"chunk_gap_seconds"`
	TokenGap         stats.Summary `json:"token_gap_seconds"`
	TokensPerChunk   stats.Summary `json:"tokens_per_chunk"`
	Stalls           stats.Summary `json:"stalls"`
	StalledShare     stats.Summary `json:"stalled_share"`
	PerceivedTPS     stats.Summary `json:"perceived_tps"`
}

// Snapshot returns the aggregates of every group, sorted by key. It is safe
// to call while requests are being recorded; each group's numbers are
// consistent to within the requests finishing during the call.
func (m *Meter) Snapshot() []GroupSnapshot {
	if m.groups == nil {
		return nil
	}
	var out []GroupSnapshot
	m.groups.Range(func(k stats.Key, g *groupAgg) bool {
		g.mu.Lock()
		s := GroupSnapshot{
			Key:              k,
			Requests:         g.requests,
			Partial:          g.partial,
			OutputTokens:     g.outputTokens,
			TTFT:             g.ttft.Summary(),
			TimeToFirstChunk: g.ttfc.Summary(),
			Duration:         g.duration.Summary(),
			DecodeTPS:        g.decodeTPS.Summary(),
			E2ETPS:           g.e2eTPS.Summary(),
			ChunkGap:         g.chunkGap.Summary(),
			TokenGap:         g.tokenGap.Summary(),
			TokensPerChunk:   g.tokensPerChunk.Summary(),
			Stalls:           g.stalls.Summary(),
			StalledShare:     g.stalledShare.Summary(),
			PerceivedTPS:     g.perceivedTPS.Summary(),
		}
		if len(g.errors) > 0 {
			s.Errors = make(map[string]int64, len(g.errors))
			for e, n := range g.errors {
				s.Errors[e] = n
			}
		}
		g.mu.Unlock()
		out = append(out, s)
		return true
	})
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].Key, out[j].Key
		if a.Model != b.Model {
			return a.Model < b.Model
		}
		if a.Provider != b.Provider {
			return a.Provider < b.Provider
		}
		if a.Bucket != b.Bucket {
			return a.Bucket < b.Bucket
		}
		return a.Class < b.Class
	})
	return out
}
