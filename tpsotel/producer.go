package tpsotel

import (
	"context"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/semconv/v1.41.0/genaiconv"
)

// ChunkProducer is the low-overhead path of the three per-chunk
// histograms (gen_ai.client.operation.time_per_output_chunk,
// tpsmeter.token.gap and tpsmeter.chunk.tokens). A Telemetry created with
// WithChunkProducer records them into the ChunkProducer's own aggregation
// instead of making three or more OpenTelemetry SDK Record calls per
// chunk: each request adds its chunks' values to a histogram of its own
// (plain additions) and merges it, with atomics, into the ChunkProducer's
// when it ends and, during a long request, with the first chunk at least
// one second of the request's time after the previous merge. The
// ChunkProducer hands the
// aggregated histograms to the SDK's readers: it implements the
// go.opentelemetry.io/otel/sdk/metric Producer interface, so it is
// registered on a reader with sdkmetric.WithProducer (ManualReader,
// PeriodicReader) or with the Prometheus exporter's otelprom.WithProducer.
//
// The exported data is what the SDK instruments would export: the same
// instrumentation scope (ScopeName, Version, the semconv schema URL), names,
// units, descriptions, bucket boundaries, attribute sets and types
// (metricdata.Histogram[float64], and metricdata.Histogram[int64] for
// tpsmeter.chunk.tokens), with count, sum, min, max and bucket counts. The
// differences: the temporality is always cumulative (StartTime is the
// ChunkProducer's creation); no exemplars; the MeterProvider's Views and
// cardinality limit do not apply (the ChunkProducer applies the SDK's
// default limit, DefaultCardinalityLimit attribute sets per metric, with
// the same overflow set, otel.metric.overflow=true); and a Produce that
// runs during a merge may see its sum, min or max but not yet its count
// (the count and the bucket counts always agree); and a value is exported
// from its request's next merge on, up to about a second after it was
// recorded (longer if the request then stalls).
//
// Memory is bounded: at most DefaultCardinalityLimit points per metric,
// each a fixed array of bucket counters, created on the first value of an
// attribute set and kept for the life of the ChunkProducer. Recording
// allocates nothing and takes no lock once the attribute set has a point.
//
// The zero ChunkProducer is ready to use, with StartTime its first use;
// NewChunkProducer returns one whose StartTime is its creation. A
// ChunkProducer must not be copied after first use. It is safe for
// concurrent use: any number of streams (and Telemetry values) may record
// into it while any number of readers call Produce.
type ChunkProducer struct {
	once    sync.Once
	start   time.Time
	metrics [numChunkMetrics]chunkMetric
}

// DefaultCardinalityLimit is the number of distinct attribute sets a
// ChunkProducer keeps per metric, the overflow set included: the OTel
// SDK's default cardinality limit. The values of every further attribute
// set are recorded under the single attribute otel.metric.overflow=true,
// as the SDK does.
const DefaultCardinalityLimit = 2000

// overflowSet is the SDK's attribute set for values past the cardinality
// limit.
var overflowSet = attribute.NewSet(attribute.Bool("otel.metric.overflow", true))

// The per-chunk metrics a ChunkProducer aggregates, in the order the SDK
// instruments are created (and exported).
const (
	metricTimePerChunk = iota
	metricTokenGap
	metricChunkTokens
	numChunkMetrics
)

// NewChunkProducer returns an empty ChunkProducer. Register it with the
// readers, create the MeterProvider, then give it to New with
// WithChunkProducer:
//
//	p := tpsotel.NewChunkProducer()
//	reader := sdkmetric.NewPeriodicReader(exp, sdkmetric.WithProducer(p)) // or otelprom.New(otelprom.WithProducer(p))
//	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
//	tel, err := tpsotel.New(tpsotel.WithMeterProvider(mp), tpsotel.WithChunkProducer(p))
func NewChunkProducer() *ChunkProducer {
	p := &ChunkProducer{}
	p.init()
	return p
}

// init sets the metrics' definitions and the start time, once.
func (p *ChunkProducer) init() {
	p.once.Do(func() {
		p.start = time.Now()
		perChunk := genaiconv.ClientOperationTimePerOutputChunk{}
		p.metrics[metricTimePerChunk].init(perChunk.Name(), perChunk.Unit(), perChunk.Description(), durationBuckets, false)
		p.metrics[metricTokenGap].init(nameTokenGap, unitTokenGap, descTokenGap, tokenGapBuckets, false)
		p.metrics[metricChunkTokens].init(nameChunkTokens, unitChunkTokens, descChunkTokens, chunkTokenBuckets, true)
	})
}

// hist returns the point of attrs in metric m (see chunkMetric.hist).
func (p *ChunkProducer) hist(m int, attrs attribute.Set) *chunkHist {
	p.init()
	return p.metrics[m].hist(attrs)
}

// Produce returns the per-chunk histograms aggregated so far, as one
// ScopeMetrics with the scope of the SDK meter New creates, or nothing
// when no chunk has been recorded. It is the sdkmetric.Producer method that
// readers call at every collection; it is safe to call concurrently, also
// with recordings. The result is the caller's: nothing in it is shared with
// the ChunkProducer or with an earlier result. It returns ctx's error if
// ctx is already done.
func (p *ChunkProducer) Produce(ctx context.Context) ([]metricdata.ScopeMetrics, error) {
	if ctx != nil {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	p.init()
	now := time.Now()
	ms := make([]metricdata.Metrics, 0, numChunkMetrics)
	for i := range p.metrics {
		if m, ok := p.metrics[i].collect(p.start, now); ok {
			ms = append(ms, m)
		}
	}
	if len(ms) == 0 {
		return nil, nil
	}
	return []metricdata.ScopeMetrics{{
		Scope:   instrumentation.Scope{Name: ScopeName, Version: Version, SchemaURL: semconv.SchemaURL},
		Metrics: ms,
	}}, nil
}

// chunkMetric is one per-chunk histogram metric: its definition and one
// point per attribute set.
type chunkMetric struct {
	name, unit, description string
	bounds                  []float64
	integer                 bool // exported as metricdata.Histogram[int64]

	mu     sync.Mutex
	byAttr map[attribute.Distinct]*chunkHist
	hists  []*chunkHist // in creation order; append-only, so a copy of the header is a stable snapshot
}

func (m *chunkMetric) init(name, unit, description string, bounds []float64, integer bool) {
	m.name, m.unit, m.description, m.integer = name, unit, description, integer
	m.bounds = slices.Clone(bounds)
	slices.Sort(m.bounds) // as the SDK does; the boundaries are sorted already
	m.byAttr = make(map[attribute.Distinct]*chunkHist)
}

// hist returns the point of attrs, creating it if new; past the
// cardinality limit it returns the overflow point (the SDK's rule: once
// DefaultCardinalityLimit-1 sets exist, every new set goes to overflow). It
// takes the lock, so callers keep the result: Telemetry does, per cached
// attribute set.
func (m *chunkMetric) hist(attrs attribute.Set) *chunkHist {
	m.mu.Lock()
	defer m.mu.Unlock()
	if h, ok := m.byAttr[attrs.Equivalent()]; ok {
		return h
	}
	if len(m.byAttr) >= DefaultCardinalityLimit-1 {
		attrs = overflowSet
		if h, ok := m.byAttr[attrs.Equivalent()]; ok {
			return h
		}
	}
	h := newChunkHist(attrs, m.bounds)
	m.byAttr[attrs.Equivalent()] = h
	m.hists = append(m.hists, h)
	return h
}

// collect returns the metric with one point per attribute set that holds
// values, or false when none does.
func (m *chunkMetric) collect(start, now time.Time) (metricdata.Metrics, bool) {
	m.mu.Lock()
	hs := m.hists
	m.mu.Unlock()
	if len(hs) == 0 {
		return metricdata.Metrics{}, false
	}
	out := metricdata.Metrics{Name: m.name, Description: m.description, Unit: m.unit}
	bounds := slices.Clone(m.bounds) // one copy per collection, shared by its points, as the SDK does
	var n int
	if m.integer {
		out.Data, n = histogram[int64](hs, bounds, start, now)
	} else {
		out.Data, n = histogram[float64](hs, bounds, start, now)
	}
	return out, n > 0
}

// histogram reads the points of hs that hold values, and returns them with
// their number.
func histogram[N int64 | float64](hs []*chunkHist, bounds []float64, start, now time.Time) (metricdata.Histogram[N], int) {
	nb := len(bounds) + 1
	counts := make([]uint64, len(hs)*nb) // one allocation for every point's bucket counts
	pts := make([]metricdata.HistogramDataPoint[N], 0, len(hs))
	for i, h := range hs {
		if p, ok := histPoint[N](h, bounds, counts[i*nb:(i+1)*nb:(i+1)*nb], start, now); ok {
			pts = append(pts, p)
		}
	}
	return metricdata.Histogram[N]{Temporality: metricdata.CumulativeTemporality, DataPoints: pts}, len(pts)
}

// histPoint reads h into a data point, its bucket counts into counts; false
// if h holds no value yet.
func histPoint[N int64 | float64](h *chunkHist, bounds []float64, counts []uint64, start, now time.Time) (metricdata.HistogramDataPoint[N], bool) {
	// Counts first: a value's sum and extremes are stored before its count,
	// so everything counted here is in the sum, min and max read below.
	var n uint64
	for i := range h.counts {
		counts[i] = h.counts[i].Load()
		n += counts[i]
	}
	if n == 0 {
		return metricdata.HistogramDataPoint[N]{}, false
	}
	return metricdata.HistogramDataPoint[N]{
		Attributes:   h.attrs,
		StartTime:    start,
		Time:         now,
		Count:        n,
		Bounds:       bounds,
		BucketCounts: counts,
		Min:          metricdata.NewExtrema(N(loadFloat(&h.min))),
		Max:          metricdata.NewExtrema(N(loadFloat(&h.max))),
		Sum:          N(loadFloat(&h.sum)),
	}, true
}

// chunkHist is the explicit-bucket histogram of one metric and attribute
// set, updated with atomics only. Integer metrics keep their values as
// float64 too (exact below 2^53).
type chunkHist struct {
	attrs  attribute.Set
	sum    atomic.Uint64   // float64 bits
	min    atomic.Uint64   // float64 bits, +Inf before the first value
	max    atomic.Uint64   // float64 bits, -Inf before the first value
	counts []atomic.Uint64 // len(bounds)+1 buckets: (-Inf, b0], (b0, b1], ..., (bn, +Inf)
}

func newChunkHist(attrs attribute.Set, bounds []float64) *chunkHist {
	h := &chunkHist{attrs: attrs, counts: make([]atomic.Uint64, len(bounds)+1)}
	h.min.Store(math.Float64bits(math.Inf(1)))
	h.max.Store(math.Float64bits(math.Inf(-1)))
	return h
}

// merge adds what one request recorded (see producerState): sum and
// extremes first, the counts last, so that a collection never counts a
// value whose sum it does not have (see histPoint).
func (h *chunkHist) merge(l *localHist) {
	lowerFloat(&h.min, l.min)
	raiseFloat(&h.max, l.max)
	addFloat(&h.sum, l.sum)
	for i := range h.counts {
		if c := l.counts[i]; c != 0 {
			h.counts[i].Add(c)
		}
	}
}

// bucketIndex is the index of the bucket holding v: the first i with
// bounds[i] >= v, or len(bounds). It is sort.SearchFloat64s, the SDK's
// search, without the closure (NaN lands in the last bucket in both).
func bucketIndex(bounds []float64, v float64) int {
	lo, hi := 0, len(bounds)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if !(bounds[m] >= v) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

func loadFloat(a *atomic.Uint64) float64 { return math.Float64frombits(a.Load()) }

func addFloat(a *atomic.Uint64, d float64) {
	for {
		old := a.Load()
		if a.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+d)) {
			return
		}
	}
}

// lowerFloat stores v if it is below the current value; after warm-up it
// is one load per call.
func lowerFloat(a *atomic.Uint64, v float64) {
	for {
		old := a.Load()
		if !(v < math.Float64frombits(old)) || a.CompareAndSwap(old, math.Float64bits(v)) {
			return
		}
	}
}

// raiseFloat stores v if it is above the current value.
func raiseFloat(a *atomic.Uint64, v float64) {
	for {
		old := a.Load()
		if !(v > math.Float64frombits(old)) || a.CompareAndSwap(old, math.Float64bits(v)) {
			return
		}
	}
}
