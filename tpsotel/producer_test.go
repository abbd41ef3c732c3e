package tpsotel_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/tpsmeter/tpsmeter"
	"github.com/tpsmeter/tpsmeter/tpsotel"
)

// ChunkProducer is a Producer of the SDK.
var _ sdkmetric.Producer = (*tpsotel.ChunkProducer)(nil)

// perChunkMetrics are the metrics a ChunkProducer aggregates.
var perChunkMetrics = []string{
	"gen_ai.client.operation.time_per_output_chunk",
	"tpsmeter.token.gap",
	"tpsmeter.chunk.tokens",
}

// playScripts runs the same streams through a rig: several request shapes
// (an undescribed one among them), 0-token, 1-token and many-token chunks,
// a stall, and streams with no chunk, one chunk and a role-only chunk.
func playScripts(r *rig) {
	other := tpsmeter.RequestInfo{Model: "gpt-other", Provider: "openai", Operation: "chat"}
	many := []step{
		{after: 120 * time.Millisecond, text: "one"},
		{after: 7 * time.Millisecond, text: " two three four five six seven eight nine ten eleven"},
		{after: 3 * time.Millisecond, text: " "}, // output without a word: 0 tokens
		{after: 2500 * time.Millisecond, text: " twelve thirteen"},
		{after: 900 * time.Microsecond, text: " fourteen"},
		{after: 40 * time.Second, text: " fifteen"}, // past the last duration bucket
	}
	ctx := context.Background()
	r.run(ctx, testInfo, completeSteps, 5*time.Millisecond, nil)
	r.run(ctx, testInfo, many, 0, nil)
	r.run(ctx, other, many[:3], time.Millisecond, tpsmeter.ErrClosedEarly)
	r.run(ctx, tpsmeter.RequestInfo{}, completeSteps, 0, nil)
	r.run(ctx, testInfo, nil, 0, errors.New("refused"))                                              // no chunk
	r.run(ctx, other, []step{{after: 300 * time.Millisecond, text: "alone"}}, 0, nil)                // one chunk
	r.run(ctx, testInfo, []step{{after: 80 * time.Millisecond}}, time.Second, tpsmeter.ErrTruncated) // role-only
}

// alignSums sets got's histogram sums to want's where they agree to float
// rounding: the producer adds a chunk's gap once for its k per-token gaps
// where the SDK adds gap/k k times, so the last bits may differ. Everything
// else is compared exactly.
func alignSums(want, got metricdata.Metrics) metricdata.Metrics {
	w, ok := want.Data.(metricdata.Histogram[float64])
	g, ok2 := got.Data.(metricdata.Histogram[float64])
	if !ok || !ok2 {
		return got
	}
	pts := append([]metricdata.HistogramDataPoint[float64](nil), g.DataPoints...)
	for i := range pts {
		for _, wp := range w.DataPoints {
			if wp.Attributes.Equals(&pts[i].Attributes) && math.Abs(wp.Sum-pts[i].Sum) <= 1e-12*math.Max(1, math.Abs(wp.Sum)) {
				pts[i].Sum = wp.Sum
			}
		}
	}
	g.DataPoints = pts
	got.Data = g
	return got
}

// scopesOf returns the instrumentation scope of every metric the reader
// holds, by metric name.
func scopesOf(t *testing.T, reader sdkmetric.Reader) map[string]string {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			out[m.Name] = fmt.Sprintf("%s %s %s %s", sm.Scope.Name, sm.Scope.Version, sm.Scope.SchemaURL, sm.Scope.Attributes.Encoded(attribute.DefaultEncoder()))
		}
	}
	return out
}

// TestProducerMatchesSDK: on identical streams, the low-overhead mode
// exports exactly what the SDK instruments export (names, descriptions,
// units, types, temporality, bounds, attribute sets, counts, buckets, min,
// max, sums to float rounding), under the same instrumentation scope, and
// every other metric is unchanged.
func TestProducerMatchesSDK(t *testing.T) {
	sdk, prod := newRig(t), newProducerRig(t)
	playScripts(sdk)
	playScripts(prod)
	want, got := sdk.collect(t), prod.collect(t)
	if len(got) != len(want) {
		t.Errorf("producer mode exports %d metrics, SDK mode %d", len(got), len(want))
	}
	for name, w := range want {
		t.Run(name, func(t *testing.T) {
			g, ok := got[name]
			if !ok {
				t.Fatalf("%s missing in producer mode", name)
			}
			metricdatatest.AssertEqual(t, w, alignSums(w, g), metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
		})
	}
	for _, name := range perChunkMetrics {
		if _, ok := want[name]; !ok {
			t.Errorf("the scripts recorded no %s: the comparison proves nothing for it", name)
		}
	}
	ws, gs := scopesOf(t, sdk.reader), scopesOf(t, prod.reader)
	for name := range want {
		if ws[name] != gs[name] {
			t.Errorf("%s: scope %q in producer mode, %q in SDK mode", name, gs[name], ws[name])
		}
	}
}

// TestProducerTokenGapKTimes pins the per-token rule in producer mode: a
// chunk after the first with k tokens adds k values gap/k (count += k, its
// bucket += k, sum += gap); a 0-token chunk and the first chunk add none.
func TestProducerTokenGapKTimes(t *testing.T) {
	r := newProducerRig(t)
	r.run(context.Background(), testInfo, []step{
		{after: 100 * time.Millisecond, text: "a b c d"},            // first chunk: no gap
		{after: 30 * time.Millisecond, text: " e f g"},              // k=3: 3 × 10 ms
		{after: 5 * time.Millisecond, text: " "},                    // k=0: nothing
		{after: 400 * time.Millisecond, text: " h i j k l m n o p"}, // k=9 (the 0-token chunk's time is not carried)
		{after: 2 * time.Millisecond, text: " q"},                   // k=1
	}, 0, nil)
	got := r.collect(t)
	tg := []float64{0.01, 0.01, 0.01}
	for range 9 {
		tg = append(tg, 0.4/9)
	}
	tg = append(tg, 0.002)
	want := point(chunkSet, docTokenGapBuckets, tg...)
	want.Sum = 0.03 + 0.4 + 0.002
	m := metricdata.Metrics{Name: "tpsmeter.token.gap", Unit: "s", Description: got["tpsmeter.token.gap"].Description,
		Data: metricdata.Histogram[float64]{Temporality: metricdata.CumulativeTemporality, DataPoints: []metricdata.HistogramDataPoint[float64]{want}}}
	metricdatatest.AssertEqual(t, m, alignSums(m, got["tpsmeter.token.gap"]), metricdatatest.IgnoreTimestamp())
	if want.Count != 13 {
		t.Fatalf("scenario drifted: %d per-token gaps", want.Count)
	}
	ct := point(chunkSet, docChunkTokenBuckets, int64(4), int64(3), int64(0), int64(9), int64(1))
	metricdatatest.AssertAggregationsEqual(t, metricdata.Histogram[int64]{Temporality: metricdata.CumulativeTemporality, DataPoints: []metricdata.HistogramDataPoint[int64]{ct}},
		got["tpsmeter.chunk.tokens"].Data, metricdatatest.IgnoreTimestamp())
}

// TestProducerZeroAndOneChunk: a fresh producer and streams without chunks
// produce nothing; a one-chunk stream gives a chunk.tokens value and no gap.
func TestProducerZeroAndOneChunk(t *testing.T) {
	p := tpsotel.NewChunkProducer()
	if sm, err := p.Produce(context.Background()); err != nil || sm != nil {
		t.Fatalf("fresh producer: %v, %v; want nothing", sm, err)
	}
	r := newProducerRig(t)
	r.run(context.Background(), testInfo, nil, time.Second, errors.New("refused"))
	r.run(context.Background(), testInfo, []step{{after: 50 * time.Millisecond}}, 0, nil) // role-only
	if sm, err := r.producer.Produce(context.Background()); err != nil || sm != nil {
		t.Fatalf("streams without output: Produce = %v, %v; want nothing", sm, err)
	}
	got := r.collect(t)
	for _, n := range perChunkMetrics {
		if _, ok := got[n]; ok {
			t.Errorf("%s exported for streams without output chunks", n)
		}
	}
	if len(durationPoints(got)) != 2 { // one failed, one complete request
		t.Fatalf("the SDK metrics are missing: %d duration points", len(durationPoints(got)))
	}

	r.run(context.Background(), testInfo, []step{{after: 200 * time.Millisecond, text: "one two"}}, 0, nil)
	got = r.collect(t)
	for _, n := range perChunkMetrics[:2] {
		if _, ok := got[n]; ok {
			t.Errorf("%s exported for a one-chunk stream (no gap)", n)
		}
	}
	metricdatatest.AssertAggregationsEqual(t,
		metricdata.Histogram[int64]{Temporality: metricdata.CumulativeTemporality, DataPoints: []metricdata.HistogramDataPoint[int64]{point(chunkSet, docChunkTokenBuckets, int64(2))}},
		got["tpsmeter.chunk.tokens"].Data, metricdatatest.IgnoreTimestamp())
}

// TestProducerConcurrency: thousands of streams on many goroutines, over
// two Telemetry values sharing one producer, while readers collect: no
// value is lost, each attribute set has one point, and counts never go
// back between collections. Run it with -race.
func TestProducerConcurrency(t *testing.T) {
	const goroutines, chunks = 32, 40
	streams := 2000
	if testing.Short() {
		streams = 400
	}
	p := tpsotel.NewChunkProducer()
	reader := sdkmetric.NewManualReader(sdkmetric.WithProducer(p))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	var hooks []func(tpsmeter.ChunkInfo)
	for range 2 {
		tel, err := tpsotel.New(tpsotel.WithMeterProvider(mp), tpsotel.WithChunkProducer(p))
		if err != nil {
			t.Fatal(err)
		}
		hooks = append(hooks, tel.Hooks().Chunk)
	}
	models := []string{"m-a", "m-b", "m-c"}

	stop := make(chan struct{})
	var readers sync.WaitGroup
	for range 2 {
		readers.Go(func() {
			var last uint64
			for {
				select {
				case <-stop:
					return
				default:
				}
				sm, err := p.Produce(context.Background())
				if err != nil {
					t.Error(err)
					return
				}
				var n uint64
				for _, s := range sm {
					for _, m := range s.Metrics {
						if h, ok := m.Data.(metricdata.Histogram[int64]); ok {
							for _, dp := range h.DataPoints {
								var b uint64
								for _, c := range dp.BucketCounts {
									b += c
								}
								if b != dp.Count {
									t.Errorf("count %d, buckets add up to %d", dp.Count, b)
								}
								n += dp.Count
							}
						}
					}
				}
				if n < last {
					t.Errorf("chunk.tokens count went back from %d to %d", last, n)
				}
				last = n
				time.Sleep(time.Millisecond)
			}
		})
	}
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for s := g; s < streams; s += goroutines {
				info := tpsmeter.RequestInfo{Model: models[s%len(models)], Provider: "openai", Operation: "chat"}
				hook := hooks[s%2]
				for i := range chunks {
					hook(tpsmeter.ChunkInfo{Request: info, Index: i, Gap: time.Duration(i%5+1) * time.Millisecond, Tokens: i % 3})
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	readers.Wait()

	got := collect(t, reader)
	// Per stream: 39 gaps of 1..5 ms (i%5+1 for i=1..39), tokens i%3.
	var gapSum float64
	var tokenGaps, tokens int
	for i := 1; i < chunks; i++ {
		gap := float64(i%5+1) / 1000
		gapSum += gap
		if i%3 > 0 {
			tokenGaps += i % 3
		}
	}
	for i := range chunks {
		tokens += i % 3
	}
	pc := got["gen_ai.client.operation.time_per_output_chunk"].Data.(metricdata.Histogram[float64])
	tg := got["tpsmeter.token.gap"].Data.(metricdata.Histogram[float64])
	ct := got["tpsmeter.chunk.tokens"].Data.(metricdata.Histogram[int64])
	for name, n := range map[string]int{"time_per_output_chunk": len(pc.DataPoints), "token.gap": len(tg.DataPoints), "chunk.tokens": len(ct.DataPoints)} {
		if n != len(models) {
			t.Errorf("%s has %d points, want one per model (%d): two Telemetry values must share them", name, n, len(models))
		}
	}
	var pcCount, tgCount, ctCount uint64
	var pcSum float64
	var ctSum int64
	for _, dp := range pc.DataPoints {
		pcCount += dp.Count
		pcSum += dp.Sum
	}
	for _, dp := range tg.DataPoints {
		tgCount += dp.Count
	}
	for _, dp := range ct.DataPoints {
		ctCount += dp.Count
		ctSum += dp.Sum
	}
	if want := uint64(streams * (chunks - 1)); pcCount != want {
		t.Errorf("time_per_output_chunk counted %d gaps, want %d", pcCount, want)
	}
	if want := float64(streams) * gapSum; math.Abs(pcSum-want) > 1e-9*want {
		t.Errorf("time_per_output_chunk sum %v, want %v", pcSum, want)
	}
	if want := uint64(streams * tokenGaps); tgCount != want {
		t.Errorf("token.gap counted %d, want %d", tgCount, want)
	}
	if ctCount != uint64(streams*chunks) || ctSum != int64(streams*tokens) {
		t.Errorf("chunk.tokens count %d sum %d, want %d and %d", ctCount, ctSum, streams*chunks, streams*tokens)
	}
}

// TestProducerCardinalityLimit: past DefaultCardinalityLimit attribute sets
// (distinct server addresses here, which the model cap does not bound) the
// producer overflows exactly as the SDK does by default, into one
// otel.metric.overflow=true point, losing no value.
func TestProducerCardinalityLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("2,500 streams in two modes")
	}
	sets := tpsotel.DefaultCardinalityLimit + 500
	var results []map[string]metricdata.Metrics
	for _, mode := range telemetryModes {
		r := newRigMode(t, mode.producer)
		for i := range sets {
			info := tpsmeter.RequestInfo{Model: "gpt-test", Provider: "openai", Operation: "chat", ServerAddress: fmt.Sprintf("host-%04d.test", i)}
			r.run(context.Background(), info, []step{{after: time.Millisecond, text: "a"}, {after: time.Millisecond, text: " b c"}}, 0, nil)
		}
		results = append(results, r.collect(t))
	}
	want, got := results[0], results[1]
	overflow := attribute.NewSet(attribute.Bool("otel.metric.overflow", true))
	for _, name := range perChunkMetrics {
		assertEqualPointwise(t, want[name], alignSums(want[name], got[name]))
		pts := attrSets(got[name])
		if len(pts) != tpsotel.DefaultCardinalityLimit {
			t.Errorf("%s: %d points, want the limit %d", name, len(pts), tpsotel.DefaultCardinalityLimit)
		}
		found := false
		for _, s := range pts {
			found = found || s.Equals(&overflow)
		}
		if !found {
			t.Errorf("%s: no overflow point", name)
		}
	}
}

// assertEqualPointwise is metricdatatest.AssertEqual for histograms with
// thousands of points (AssertEqual matches points in quadratic time): the
// points are paired by attribute set and compared one by one.
func assertEqualPointwise(t *testing.T, want, got metricdata.Metrics) {
	t.Helper()
	split := func(m metricdata.Metrics) map[attribute.Distinct]metricdata.Metrics {
		out := map[attribute.Distinct]metricdata.Metrics{}
		one := m
		switch d := m.Data.(type) {
		case metricdata.Histogram[float64]:
			for _, p := range d.DataPoints {
				one.Data = metricdata.Histogram[float64]{Temporality: d.Temporality, DataPoints: []metricdata.HistogramDataPoint[float64]{p}}
				out[p.Attributes.Equivalent()] = one
			}
		case metricdata.Histogram[int64]:
			for _, p := range d.DataPoints {
				one.Data = metricdata.Histogram[int64]{Temporality: d.Temporality, DataPoints: []metricdata.HistogramDataPoint[int64]{p}}
				out[p.Attributes.Equivalent()] = one
			}
		default:
			t.Fatalf("%s: %T is not a histogram", m.Name, m.Data)
		}
		return out
	}
	w, g := split(want), split(got)
	if len(w) != len(g) {
		t.Errorf("%s: %d points, want %d", want.Name, len(g), len(w))
	}
	for k, wm := range w {
		gm, ok := g[k]
		if !ok {
			t.Errorf("%s: point %v missing", want.Name, k)
			continue
		}
		metricdatatest.AssertEqual(t, wm, gm, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
	}
}

// TestProducerNotRegistered: with WithChunkProducer but the producer on no
// reader, the per-chunk metrics are simply not exported; the rest works,
// nothing panics; WithChunkProducer(nil) keeps the default mode.
func TestProducerNotRegistered(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	tel, err := tpsotel.New(tpsotel.WithMeterProvider(mp), tpsotel.WithChunkProducer(tpsotel.NewChunkProducer()))
	if err != nil {
		t.Fatal(err)
	}
	m := tpsmeter.New(tpsmeter.WithTokenizer(wordTokenizer), tpsmeter.WithHooks(tel.Hooks()))
	play(m, fakeClock(), completeSteps)
	got := collect(t, reader)
	for _, n := range perChunkMetrics {
		if _, ok := got[n]; ok {
			t.Errorf("%s exported without the producer on the reader", n)
		}
	}
	if len(durationPoints(got)) != 1 || m.HookPanics() != 0 {
		t.Fatalf("duration points %d, hook panics %d", len(durationPoints(got)), m.HookPanics())
	}

	r := newRig(t, tpsotel.WithChunkProducer(nil))
	r.run(context.Background(), testInfo, completeSteps, 0, nil)
	if _, ok := r.collect(t)["tpsmeter.token.gap"]; !ok {
		t.Error("WithChunkProducer(nil) left the default mode")
	}
}

// TestProducerOutputIsTheCallers: a Produce result shares nothing with the
// producer or a later result, and a done context is an error.
func TestProducerOutputIsTheCallers(t *testing.T) {
	r := newProducerRig(t)
	r.run(context.Background(), testInfo, completeSteps, 0, nil)
	first, err := r.producer.Produce(context.Background())
	if err != nil || len(first) != 1 || len(first[0].Metrics) != 3 {
		t.Fatalf("Produce = %v, %v; want one scope with 3 metrics", first, err)
	}
	h := first[0].Metrics[0].Data.(metricdata.Histogram[float64])
	h.DataPoints[0].BucketCounts[0] = 1 << 40
	h.DataPoints[0].Bounds[0] = -1
	second, _ := r.producer.Produce(context.Background())
	h2 := second[0].Metrics[0].Data.(metricdata.Histogram[float64])
	if h2.DataPoints[0].BucketCounts[0] == 1<<40 || h2.DataPoints[0].Bounds[0] != specDurationBuckets[0] {
		t.Fatal("changing a Produce result changed the next one")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := r.producer.Produce(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Produce with a canceled context: %v", err)
	}
}

// TestProducerOnTwoReaders: one producer may serve several
// readers (here two ManualReaders); each sees the full cumulative data.
func TestProducerOnTwoReaders(t *testing.T) {
	p := tpsotel.NewChunkProducer()
	r1 := sdkmetric.NewManualReader(sdkmetric.WithProducer(p))
	r2 := sdkmetric.NewManualReader(sdkmetric.WithProducer(p))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r1), sdkmetric.WithReader(r2))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	tel, err := tpsotel.New(tpsotel.WithMeterProvider(mp), tpsotel.WithChunkProducer(p))
	if err != nil {
		t.Fatal(err)
	}
	m := tpsmeter.New(tpsmeter.WithTokenizer(wordTokenizer), tpsmeter.WithHooks(tel.Hooks()))
	clock := fakeClock()
	play(m, clock, completeSteps)
	a := collect(t, r1)
	play(m, clock, completeSteps)
	b, c := collect(t, r1), collect(t, r2)
	count := func(ms map[string]metricdata.Metrics) uint64 {
		return ms["tpsmeter.chunk.tokens"].Data.(metricdata.Histogram[int64]).DataPoints[0].Count
	}
	if count(a) != 3 || count(b) != 6 || count(c) != 6 {
		t.Fatalf("chunk.tokens counts %d, %d, %d; want 3, then 6 on both readers", count(a), count(b), count(c))
	}
}

// TestProducerModelCap: the model cap gives the producer's points the same
// model values as the SDK's.
func TestProducerModelCap(t *testing.T) {
	var values []string
	for _, mode := range telemetryModes {
		r := newRigMode(t, mode.producer, tpsotel.WithMaxModels(2))
		for i := range 5 {
			r.run(context.Background(), tpsmeter.RequestInfo{Model: fmt.Sprintf("model-%d", i), Provider: "openai", Operation: "chat"},
				[]step{{after: time.Millisecond, text: "a"}, {after: time.Millisecond, text: " b"}}, 0, nil)
		}
		var v []string
		for s := range allAttrValues(map[string]metricdata.Metrics{"x": r.collect(t)["tpsmeter.token.gap"]}, semconv.GenAIRequestModelKey) {
			v = append(v, s)
		}
		sort.Strings(v)
		values = append(values, fmt.Sprint(v))
	}
	if values[0] != values[1] || values[1] != "[model-0 model-1 other]" {
		t.Fatalf("token.gap model values: SDK %s, producer %s; want [model-0 model-1 other]", values[0], values[1])
	}
}

// TestZeroChunkProducer: the zero ChunkProducer works like a new one.
func TestZeroChunkProducer(t *testing.T) {
	var p tpsotel.ChunkProducer
	if sm, err := p.Produce(context.Background()); err != nil || sm != nil {
		t.Fatalf("zero producer: %v, %v; want nothing", sm, err)
	}
	reader := sdkmetric.NewManualReader(sdkmetric.WithProducer(&p))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	tel, err := tpsotel.New(tpsotel.WithMeterProvider(mp), tpsotel.WithChunkProducer(&p))
	if err != nil {
		t.Fatal(err)
	}
	m := tpsmeter.New(tpsmeter.WithTokenizer(wordTokenizer), tpsmeter.WithHooks(tel.Hooks()))
	play(m, fakeClock(), completeSteps)
	if d, ok := collect(t, reader)["tpsmeter.chunk.tokens"].Data.(metricdata.Histogram[int64]); !ok || d.DataPoints[0].Count != 3 || m.HookPanics() != 0 {
		t.Fatalf("zero producer recorded %+v (hook panics %d), want 3 chunks", d, m.HookPanics())
	}
}

// chunkCount returns the number of values of the per-chunk metric name in
// ms (0 when it is not exported).
func chunkCount(ms map[string]metricdata.Metrics, name string) uint64 {
	var n uint64
	switch d := ms[name].Data.(type) {
	case metricdata.Histogram[float64]:
		for _, p := range d.DataPoints {
			n += p.Count
		}
	case metricdata.Histogram[int64]:
		for _, p := range d.DataPoints {
			n += p.Count
		}
	}
	return n
}

// TestProducerFlushesDuringLongRequests pins when a request's per-chunk
// values reach the ChunkProducer: with the first chunk at least one second
// (of the request's own time) after the previous flush, and at the end;
// in between they stay with the request. A request started but never
// given a chunk leaves nothing behind.
func TestProducerFlushesDuringLongRequests(t *testing.T) {
	r := newProducerRig(t)
	_, idle := r.meter.Start(context.Background(), testInfo) // no chunks at all
	_, rec := r.meter.Start(context.Background(), testInfo)
	chunk := func(after time.Duration) {
		r.clock.Advance(after)
		rec.Chunk(r.clock.Now())
		rec.Content(0, " word")
		rec.EndChunk()
	}
	tokens := func() uint64 { return chunkCount(r.collect(t), "tpsmeter.chunk.tokens") }
	chunk(100 * time.Millisecond) // at 0.1 s
	for range 8 {
		chunk(100 * time.Millisecond) // at 0.2 .. 0.9 s
	}
	if n := tokens(); n != 0 {
		t.Fatalf("%d chunk values exported before a second of the request passed, want 0", n)
	}
	chunk(100 * time.Millisecond) // at 1.0 s: the first flush, with all ten chunks
	if n := tokens(); n != 10 {
		t.Fatalf("%d chunk values exported at 1 s, want 10", n)
	}
	if n := chunkCount(r.collect(t), "gen_ai.client.operation.time_per_output_chunk"); n != 9 {
		t.Errorf("%d gaps exported at 1 s, want 9", n)
	}
	chunk(500 * time.Millisecond) // at 1.5 s: kept
	if n := tokens(); n != 10 {
		t.Fatalf("%d chunk values exported at 1.5 s, want still 10", n)
	}
	chunk(500 * time.Millisecond) // at 2.0 s: the second flush
	if n := tokens(); n != 12 {
		t.Fatalf("%d chunk values exported at 2 s, want 12", n)
	}
	chunk(10 * time.Millisecond) // kept until the end
	rec.End(r.clock.Now(), nil)
	idle.End(r.clock.Now(), errors.New("refused"))
	got := r.collect(t)
	if n := chunkCount(got, "tpsmeter.chunk.tokens"); n != 13 {
		t.Errorf("%d chunk values exported after the end, want 13", n)
	}
	if n := chunkCount(got, "gen_ai.client.operation.time_per_output_chunk"); n != 12 {
		t.Errorf("%d gaps exported after the end, want 12", n)
	}
}
