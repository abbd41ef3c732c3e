package tpsotel_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/tpsmeter/tpsmeter"
	"github.com/tpsmeter/tpsmeter/tokenize"
	"github.com/tpsmeter/tpsmeter/tpsmetertest"
	"github.com/tpsmeter/tpsmeter/tpsotel"
)

// wordCounter counts whitespace-separated words as tokens and credits them
// at once, so that every expected number in these tests is easy to derive.
type wordCounter struct{ n int }

func (w *wordCounter) Add(s string) int { k := len(strings.Fields(s)); w.n += k; return k }
func (w *wordCounter) Count() int       { return w.n }
func (w *wordCounter) Reset()           { w.n = 0 }

func wordTokenizer(string) (tokenize.StreamCounter, tpsmeter.Basis) {
	return &wordCounter{}, tpsmeter.BasisCustom
}

// rig is a meter with telemetry into a ManualReader, on a fake clock.
type rig struct {
	reader   *sdkmetric.ManualReader
	clock    *tpsmetertest.Clock
	meter    *tpsmeter.Meter
	tel      *tpsotel.Telemetry
	producer *tpsotel.ChunkProducer // nil: the default mode, everything through the SDK
}

func newRig(t testing.TB, opts ...tpsotel.Option) *rig {
	t.Helper()
	return newRigMode(t, false, opts...)
}

// newProducerRig is newRig in the low-overhead mode: a ChunkProducer
// registered on the ManualReader and given to New.
func newProducerRig(t testing.TB, opts ...tpsotel.Option) *rig {
	t.Helper()
	return newRigMode(t, true, opts...)
}

// telemetryModes names the two ways of recording the per-chunk metrics,
// for tests that run against both.
var telemetryModes = []struct {
	name     string
	producer bool
}{{"sdk", false}, {"producer", true}}

func newRigMode(t testing.TB, producer bool, opts ...tpsotel.Option) *rig {
	t.Helper()
	r := &rig{clock: tpsmetertest.NewClock(time.Unix(1_700_000_000, 0))}
	if producer {
		r.producer = tpsotel.NewChunkProducer()
		r.reader = sdkmetric.NewManualReader(sdkmetric.WithProducer(r.producer))
		opts = append(opts, tpsotel.WithChunkProducer(r.producer))
	} else {
		r.reader = sdkmetric.NewManualReader()
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r.reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	tel, err := tpsotel.New(append([]tpsotel.Option{tpsotel.WithMeterProvider(mp)}, opts...)...)
	if err != nil {
		t.Fatalf("tpsotel.New: %v", err)
	}
	r.tel = tel
	r.meter = tpsmeter.New(tpsmeter.WithClock(r.clock), tpsmeter.WithTokenizer(wordTokenizer), tpsmeter.WithHooks(tel.Hooks()))
	return r
}

// step is one event of a scripted stream.
type step struct {
	after   time.Duration // clock advance before the chunk
	text    string        // content of the chunk ("" = a chunk without output)
	respMod string        // response model announced by this chunk
	finish  string        // finish reason
	usage   *tpsmeter.Usage
}

// run plays a scripted stream through the low-level Recorder API and ends
// it `tail` after the last chunk with err.
func (r *rig) run(ctx context.Context, info tpsmeter.RequestInfo, steps []step, tail time.Duration, err error) tpsmeter.Result {
	if ctx == nil {
		ctx = context.Background()
	}
	_, rec := r.meter.Start(ctx, info)
	for _, s := range steps {
		r.clock.Advance(s.after)
		rec.Chunk(r.clock.Now())
		rec.SetResponseModel(s.respMod)
		rec.Content(0, s.text)
		rec.FinishReason(0, s.finish)
		if s.usage != nil {
			rec.SetUsage(*s.usage)
		}
		rec.EndChunk()
	}
	r.clock.Advance(tail)
	return rec.End(r.clock.Now(), err)
}

// collect returns every metric the reader holds, by name.
func (r *rig) collect(t testing.TB) map[string]metricdata.Metrics {
	t.Helper()
	return collect(t, r.reader)
}

func collect(t testing.TB, reader sdkmetric.Reader) map[string]metricdata.Metrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatalf("Collect: %v", err)
	}
	out := map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if _, dup := out[m.Name]; dup {
				t.Fatalf("metric %s exported twice", m.Name)
			}
			out[m.Name] = m
		}
	}
	return out
}

// point is the expected histogram point of values with explicit bounds:
// bucket i counts the values in (bounds[i-1], bounds[i]].
func point[N int64 | float64](attrs attribute.Set, bounds []float64, vals ...N) metricdata.HistogramDataPoint[N] {
	p := metricdata.HistogramDataPoint[N]{Attributes: attrs, Bounds: bounds, BucketCounts: make([]uint64, len(bounds)+1)}
	var lo, hi N
	for i, v := range vals {
		p.Count++
		p.Sum += v
		if i == 0 || v < lo {
			lo = v
		}
		if i == 0 || v > hi {
			hi = v
		}
		p.BucketCounts[bucketOf(bounds, float64(v))]++
	}
	if len(vals) > 0 {
		p.Min, p.Max = metricdata.NewExtrema(lo), metricdata.NewExtrema(hi)
	}
	return p
}

func bucketOf(bounds []float64, v float64) int {
	for i, b := range bounds {
		if v <= b {
			return i
		}
	}
	return len(bounds)
}

// allAttrValues returns every value of attribute key across all points of
// all metrics.
func allAttrValues(ms map[string]metricdata.Metrics, key attribute.Key) map[string]bool {
	out := map[string]bool{}
	add := func(s attribute.Set) {
		if v, ok := s.Value(key); ok {
			out[v.Emit()] = true
		}
	}
	for _, m := range ms {
		switch d := m.Data.(type) {
		case metricdata.Histogram[float64]:
			for _, p := range d.DataPoints {
				add(p.Attributes)
			}
		case metricdata.Histogram[int64]:
			for _, p := range d.DataPoints {
				add(p.Attributes)
			}
		}
	}
	return out
}

// durationPoints returns the points of gen_ai.client.operation.duration.
func durationPoints(ms map[string]metricdata.Metrics) []metricdata.HistogramDataPoint[float64] {
	d, _ := ms["gen_ai.client.operation.duration"].Data.(metricdata.Histogram[float64])
	return d.DataPoints
}

// fakeClock is a fake clock at the Unix epoch.
func fakeClock() *tpsmetertest.Clock { return tpsmetertest.NewClock(time.Unix(0, 0)) }
