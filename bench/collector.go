package bench

import (
	"hash/fnv"
	"sync"

	"github.com/tpsmeter/tpsmeter/stats"
)

// Collector turns Records into Results cells: it groups records by CellKey,
// counts requests and errors, and feeds every metric of a completed request
// into the cell's distributions. Warm-up records are ignored. It also keeps
// a few sample timelines per target. A Collector is safe for concurrent
// use; the zero value is not usable, create one with NewCollector.
type Collector struct {
	mu        sync.Mutex
	buckets   stats.LengthBuckets
	sampleCap int
	seed      uint64
	cells     map[CellKey]*Cell
	timelines []Timeline
	tlIndex   map[[2]string]int // (target, bucket) -> index in timelines
	tlCount   map[string]int
}

// NewCollector returns a Collector for the given buckets (zero means the
// default ones), keeping at most sampleCap values per metric and cell
// (DefaultSampleCap if sampleCap <= 0), sampling with seed.
func NewCollector(buckets stats.LengthBuckets, sampleCap int, seed uint64) *Collector {
	if sampleCap <= 0 {
		sampleCap = DefaultSampleCap
	}
	return &Collector{
		buckets: normBuckets(buckets), sampleCap: sampleCap, seed: seed,
		cells: map[CellKey]*Cell{}, tlIndex: map[[2]string]int{}, tlCount: map[string]int{},
	}
}

// Add records one request. Records of PhaseWarmup are ignored.
func (c *Collector) Add(r Record) {
	if r.Phase == PhaseWarmup {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	k := r.cellKey()
	cell := c.cells[k]
	if cell == nil {
		cell = &Cell{CellKey: k, Metrics: map[string]*Dist{}}
		c.cells[k] = cell
	}
	cell.Requests++
	if !r.OK() {
		if cell.Errors == nil {
			cell.Errors = map[string]int64{}
		}
		cell.Errors[r.ErrorType()]++
		return
	}
	cell.Completed++
	if r.ExpectedBucket != "" && r.Result.OutputTokens > 0 && c.buckets.Bucket(r.Result.OutputTokens) != r.ExpectedBucket {
		cell.BucketMismatches++
	}
	recordValues(&r, func(name string, v float64) {
		d := cell.Metrics[name]
		if d == nil {
			d = NewDist(c.sampleCap, distSeed(c.seed, k, name))
			cell.Metrics[name] = d
		}
		d.Add(v)
	})
	c.keepTimeline(&r)
}

// keepTimeline keeps, per target and bucket, the timeline of the completed
// measured request with the lowest sequence number, for at most
// MaxTimelinesPerTarget buckets per target. The i-th request is the same
// prompt on every target, so the kept timelines of different targets are
// usually answers to the same prompt, whatever order they finished in.
func (c *Collector) keepTimeline(r *Record) {
	if r.Phase != PhaseMeasure || len(r.Chunks) == 0 {
		return
	}
	key := [2]string{r.Target, r.Bucket}
	if i, ok := c.tlIndex[key]; ok {
		if r.Seq < c.timelines[i].Seq {
			c.timelines[i] = timelineOf(r)
		}
		return
	}
	if c.tlCount[r.Target] >= MaxTimelinesPerTarget {
		return
	}
	c.tlIndex[key] = len(c.timelines)
	c.tlCount[r.Target]++
	c.timelines = append(c.timelines, timelineOf(r))
}

func timelineOf(r *Record) Timeline {
	t := Timeline{
		Run: r.Run, Target: r.Target, Bucket: r.Bucket, Class: r.Class, PromptID: r.PromptID, Seq: r.Seq,
		TTFT: r.Result.TTFT.Seconds(), Duration: r.Result.Duration.Seconds(), OutputTokens: r.Result.OutputTokens,
		Points: make([][2]float64, len(r.Chunks)),
	}
	for i, p := range r.Chunks {
		t.Points[i] = [2]float64{p.At.Seconds(), float64(p.Tokens)}
	}
	return t
}

// Results returns the collected cells and timelines (sorted cells; the
// Settings and Runs are the caller's to fill in). The Collector must not
// be used afterwards.
func (c *Collector) Results() *Results {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := &Results{Buckets: c.buckets, Timelines: c.timelines}
	for _, cell := range c.cells {
		r.Cells = append(r.Cells, cell)
	}
	r.sortCells()
	return r
}

// distSeed derives a sampling seed per cell and metric.
func distSeed(seed uint64, k CellKey, metric string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(k.String()))
	h.Write([]byte{0})
	h.Write([]byte(metric))
	return h.Sum64() ^ seed
}
