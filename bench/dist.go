package bench

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/tpsmeter/tpsmeter/stats"
)

// Dist is the distribution of one metric in one cell: a mergeable quantile
// sketch of every value (quantiles within 1% relative error, exact count,
// min, max and mean; see stats.Sketch), and a bounded uniform sample of the
// values themselves (all of them up to the sample cap, then a reservoir
// sample) for rank tests such as Mann-Whitney U.
//
// The zero Dist is empty and usable, with DefaultSampleCap. A Dist is not
// safe for concurrent use.
type Dist struct {
	sketch  *stats.Sketch
	samples []float64
	seen    int64
	cap     int
	rng     *rand.Rand
}

// NewDist returns an empty Dist that keeps at most sampleCap values
// (DefaultSampleCap if sampleCap <= 0), sampling with the given seed.
func NewDist(sampleCap int, seed uint64) *Dist {
	if sampleCap <= 0 {
		sampleCap = DefaultSampleCap
	}
	return &Dist{sketch: stats.NewSketch(), cap: sampleCap, rng: rand.New(rand.NewPCG(seed, 0x64697374))}
}

func (d *Dist) init() {
	if d.sketch == nil {
		d.sketch = stats.NewSketch()
	}
	if d.cap <= 0 {
		d.cap = DefaultSampleCap
	}
	if d.rng == nil {
		d.rng = rand.New(rand.NewPCG(uint64(d.seen), uint64(len(d.samples))))
	}
}

// Add records v; NaN and infinite values are ignored.
func (d *Dist) Add(v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return
	}
	d.init()
	d.sketch.Add(v)
	d.seen++
	if len(d.samples) < d.cap {
		d.samples = append(d.samples, v)
		return
	}
	if j := d.rng.Int64N(d.seen); j < int64(d.cap) {
		d.samples[j] = v
	}
}

// Count returns the number of values recorded.
func (d *Dist) Count() int64 {
	if d.sketch == nil {
		return 0
	}
	return d.sketch.Count()
}

// Quantile returns the sketch's q-quantile (q in [0,1]); NaN when empty.
func (d *Dist) Quantile(q float64) float64 {
	if d.sketch == nil {
		return math.NaN()
	}
	return d.sketch.Quantile(q)
}

// Sketch returns the sketch (owned by d: do not modify it).
func (d *Dist) Sketch() *stats.Sketch {
	d.init()
	return d.sketch
}

// Samples returns a copy of the kept values, in no particular order.
func (d *Dist) Samples() []float64 { return slices.Clone(d.samples) }

// Seen returns the number of values the sample was drawn from.
func (d *Dist) Seen() int64 { return d.seen }

// Summary returns the distribution's digest; the zero DistSummary when empty.
func (d *Dist) Summary() DistSummary {
	if d.Count() == 0 {
		return DistSummary{}
	}
	s := d.sketch
	return DistSummary{
		Count: s.Count(), Min: s.Min(), Max: s.Max(), Mean: finiteOr(s.Mean(), s.Quantile(0.5)),
		P1: s.Quantile(0.01), P5: s.Quantile(0.05), P10: s.Quantile(0.10), P50: s.Quantile(0.50),
		P90: s.Quantile(0.90), P95: s.Quantile(0.95), P99: s.Quantile(0.99),
	}
}

func finiteOr(v, alt float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return alt
	}
	return v
}

// DistSummary is a plain digest of a Dist: exact count, min, max and mean,
// and percentiles within the sketch's 1% relative error. The low
// percentiles (P1, P5, P10) are the bad tail of rates; the high ones of
// latencies. All zero for an empty Dist.
type DistSummary struct {
	Count int64   `json:"count"`
	Min   float64 `json:"min"`
	Max   float64 `json:"max"`
	Mean  float64 `json:"mean"`
	P1    float64 `json:"p1"`
	P5    float64 `json:"p5"`
	P10   float64 `json:"p10"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P95   float64 `json:"p95"`
	P99   float64 `json:"p99"`
}

// Merge adds o's values to d: the sketches merge exactly; the samples
// combine into a uniform sample of the union (each side contributes in
// proportion to the values it has seen). o is not modified.
func (d *Dist) Merge(o *Dist) error {
	if o == nil || o.seen == 0 && o.Count() == 0 {
		return nil
	}
	d.init()
	if err := d.sketch.Merge(o.sketch); err != nil {
		return fmt.Errorf("%w: %v", ErrIncompatible, err)
	}
	na, nb := d.seen, o.seen
	a, b := d.samples, o.samples
	k := min(d.cap, len(a)+len(b))
	ka := len(a)
	if na+nb > 0 {
		ka = int(math.Round(float64(k) * float64(na) / float64(na+nb)))
	}
	ka = min(max(ka, k-len(b)), len(a))
	kb := k - ka
	merged := make([]float64, 0, k)
	merged = append(merged, pickN(d.rng, a, ka)...)
	merged = append(merged, pickN(d.rng, b, kb)...)
	d.samples = merged
	d.seen = na + nb
	return nil
}

// pickN returns n values of xs chosen uniformly without replacement (all of
// them, in order, when n >= len(xs)).
func pickN(rng *rand.Rand, xs []float64, n int) []float64 {
	if n >= len(xs) {
		return slices.Clone(xs)
	}
	c := slices.Clone(xs)
	for i := 0; i < n; i++ {
		j := i + rng.IntN(len(c)-i)
		c[i], c[j] = c[j], c[i]
	}
	return c[:n]
}

// distJSON is a Dist's wire form: the summary for readers (ignored when
// reading), the sketch, and the sample.
type distJSON struct {
	DistSummary
	Sketch  *stats.Sketch `json:"sketch"`
	Seen    int64         `json:"seen"`
	Samples []float64     `json:"samples"`
}

// MarshalJSON encodes the summary, the sketch and the sample.
func (d *Dist) MarshalJSON() ([]byte, error) {
	d.init()
	s := d.samples
	if s == nil {
		s = []float64{}
	}
	return json.Marshal(distJSON{DistSummary: d.Summary(), Sketch: d.sketch, Seen: d.seen, Samples: s})
}

// UnmarshalJSON decodes what MarshalJSON wrote.
func (d *Dist) UnmarshalJSON(b []byte) error {
	var j distJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	if j.Sketch == nil {
		j.Sketch = stats.NewSketch()
	}
	if j.Seen < int64(len(j.Samples)) {
		return fmt.Errorf("%w: a sample of %d values drawn from %d", ErrSchema, len(j.Samples), j.Seen)
	}
	for _, v := range j.Samples {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%w: non-finite sample value", ErrSchema)
		}
	}
	*d = Dist{sketch: j.Sketch, samples: j.Samples, seen: j.Seen, cap: max(DefaultSampleCap, len(j.Samples))}
	d.init()
	return nil
}
