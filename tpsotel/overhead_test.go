package tpsotel_test

import (
	"context"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/exemplar"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/tpsmeter/tpsmeter"
	"github.com/tpsmeter/tpsmeter/internal/cpuratio"
	"github.com/tpsmeter/tpsmeter/internal/streamtest"
	"github.com/tpsmeter/tpsmeter/tpsopenai"
	"github.com/tpsmeter/tpsmeter/tpsotel"
)

// decoded1000 decodes the 1,000-chunk stream that the meter's own overhead
// benchmark in package tpsopenai uses (internal/streamtest), so the numbers
// compare.
func decoded1000() *ssestream.Stream[openai.ChatCompletionChunk] {
	return streamtest.DecodeChat(streamtest.Chat1000)
}

func readRaw() int {
	s := decoded1000()
	n := 0
	for s.Next() {
		n += len(s.Current().Choices)
	}
	_ = s.Close()
	return n
}

func readMetered(m *tpsmeter.Meter) int {
	_, rec := m.Start(context.Background(), tpsmeter.RequestInfo{Model: "gpt-4o-mini", Provider: "openai", Operation: "chat", ServerAddress: "api.openai.com", ServerPort: 443})
	s := tpsopenai.WrapChat(rec, decoded1000())
	n := 0
	for s.Next() {
		n += len(s.Current().Choices)
	}
	_ = s.Close()
	return n
}

// telemetryMeter returns a meter (exact counting on) whose hooks record
// into a real SDK MeterProvider, and that provider's reader: the default
// mode.
func telemetryMeter(tb testing.TB, opts ...sdkmetric.Option) (*tpsmeter.Meter, *sdkmetric.ManualReader) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(append(opts, sdkmetric.WithReader(reader))...)
	tb.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	tel, err := tpsotel.New(tpsotel.WithMeterProvider(mp))
	if err != nil {
		tb.Fatal(err)
	}
	return tpsmeter.New(tpsmeter.WithHooks(tel.Hooks())), reader
}

// producerMeter is telemetryMeter in the low-overhead mode: the per-chunk
// histograms go to a ChunkProducer registered on the reader.
func producerMeter(tb testing.TB) (*tpsmeter.Meter, *sdkmetric.ManualReader) {
	p := tpsotel.NewChunkProducer()
	reader := sdkmetric.NewManualReader(sdkmetric.WithProducer(p))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	tb.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	tel, err := tpsotel.New(tpsotel.WithMeterProvider(mp), tpsotel.WithChunkProducer(p))
	if err != nil {
		tb.Fatal(err)
	}
	return tpsmeter.New(tpsmeter.WithHooks(tel.Hooks())), reader
}

// leanMeter is telemetryMeter with the two per-chunk instruments of the
// project's own dropped by a View, as docs/opentelemetry.md shows.
func leanMeter(tb testing.TB) *tpsmeter.Meter {
	drop := sdkmetric.Stream{Aggregation: sdkmetric.AggregationDrop{}}
	m, _ := telemetryMeter(tb, sdkmetric.WithView(
		sdkmetric.NewView(sdkmetric.Instrument{Name: "tpsmeter.token.gap"}, drop),
		sdkmetric.NewView(sdkmetric.Instrument{Name: "tpsmeter.chunk.tokens"}, drop)))
	return m
}

// BenchmarkOverheadWithTelemetry consumes the same 1,000-chunk stream raw,
// metered, and metered with telemetry recording into the OTel SDK (default
// mode) or into a ChunkProducer. Wall time; on a shared machine prefer
// BenchmarkOverheadInterleaved. Compare with:
//
//	go test -run '^$' -bench OverheadWithTelemetry -benchtime 200x -count 6 ./tpsotel | benchstat -col /mode -
func BenchmarkOverheadWithTelemetry(b *testing.B) {
	plain := tpsmeter.New()
	withTel, _ := telemetryMeter(b)
	withProducer, _ := producerMeter(b)
	for _, mode := range []struct {
		name string
		run  func() int
	}{
		{"raw", readRaw},
		{"metered", func() int { return readMetered(plain) }},
		{"metered+otel", func() int { return readMetered(withTel) }},
		{"metered+otel-producer", func() int { return readMetered(withProducer) }},
	} {
		mode.run() // load the encoding and fill the attribute caches outside the timed loops
		b.Run("mode="+mode.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				mode.run()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1000, "ns/chunk")
		})
	}
}

// overheadMode is one way of consuming the 1,000-chunk stream.
type overheadMode struct {
	name string
	run  func() int
}

// overheadModes are the ways of consuming the 1,000-chunk stream that
// BenchmarkOverheadInterleaved compares with the raw stream.
func overheadModes(b *testing.B) []overheadMode {
	plain := tpsmeter.New()
	full, _ := telemetryMeter(b)
	noExemplars, _ := telemetryMeter(b, sdkmetric.WithExemplarFilter(exemplar.AlwaysOffFilter))
	lean := leanMeter(b)
	producer, _ := producerMeter(b)
	return []overheadMode{
		{"raw", readRaw}, // the control: raw against raw
		{"metered", func() int { return readMetered(plain) }},
		{"otel", func() int { return readMetered(full) }},
		{"otel-noexemplar", func() int { return readMetered(noExemplars) }},
		{"lean", func() int { return readMetered(lean) }},
		{"producer", func() int { return readMetered(producer) }},
	}
}

// BenchmarkOverheadInterleaved measures the CPU cost of each mode relative
// to the raw openai-go stream, robustly on a noisy shared machine, with the
// alternating A B B A / B A A B method of package internal/cpuratio (the
// process CPU time around each run, GC included). It reports the median of
// the per-iteration ratios (mode/raw-median, the number to quote), the
// ratio of the sums (mode/raw-sum) and the mode's mean CPU time per chunk.
// The modes: raw (the control, raw against raw: expect 1 within about
// ±0.01 at 150 iterations), metered (no telemetry), otel (telemetry, default mode),
// otel-noexemplar (default mode with the SDK's exemplar filter
// always_off), lean (default mode with the two own per-chunk instruments
// dropped by a View) and producer (WithChunkProducer). About 65 ms per
// iteration and mode:
//
//	go test -run '^$' -bench OverheadInterleaved -benchtime 150x -count 3 ./tpsotel
//	go test -run '^$' -bench 'OverheadInterleaved/mode=(raw|producer)$' -benchtime 300x -count 3 ./tpsotel
func BenchmarkOverheadInterleaved(b *testing.B) {
	for _, m := range overheadModes(b) {
		b.Run("mode="+m.name, func(b *testing.B) { interleaved(b, overheadMode{"raw", readRaw}, m) })
	}
}

// BenchmarkTelemetryIncrement is BenchmarkOverheadInterleaved with the
// metered stream (no telemetry) as the baseline: what the telemetry adds
// to the meter, in each mode (mode=metered is the control):
//
//	go test -run '^$' -bench TelemetryIncrement -benchtime 150x -count 3 ./tpsotel
func BenchmarkTelemetryIncrement(b *testing.B) {
	modes := overheadModes(b)
	base := modes[1]
	for _, m := range modes {
		switch m.name {
		case "metered", "otel", "lean", "producer":
			b.Run("mode="+m.name, func(b *testing.B) { interleaved(b, base, m) })
		}
	}
}

// interleaved measures mode against base with package internal/cpuratio
// and reports the median and sum CPU-time ratios mode/base.
func interleaved(b *testing.B, base, mode overheadMode) {
	r := cpuratio.Measure(b, func() { base.run() }, func() { mode.run() })
	b.ReportMetric(r.Median, mode.name+"/"+base.name+"-median")
	b.ReportMetric(r.Sum, mode.name+"/"+base.name+"-sum")
	b.ReportMetric(float64(r.ModeCPU.Nanoseconds())/1000, "cpu-ns/chunk")
}

// chunkHookModes are the Telemetry set-ups whose Chunk hook
// BenchmarkChunkHook and TestChunkHookAllocatesNothing measure, each with
// its reader.
func chunkHookModes(tb testing.TB) []struct {
	name   string
	hooks  tpsmeter.Hooks
	reader *sdkmetric.ManualReader
} {
	newTel := func(readerOpts []sdkmetric.ManualReaderOption, mpOpts []sdkmetric.Option, opts ...tpsotel.Option) (tpsmeter.Hooks, *sdkmetric.ManualReader) {
		reader := sdkmetric.NewManualReader(readerOpts...)
		mp := sdkmetric.NewMeterProvider(append(mpOpts, sdkmetric.WithReader(reader))...)
		tb.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
		tel, err := tpsotel.New(append(opts, tpsotel.WithMeterProvider(mp))...)
		if err != nil {
			tb.Fatal(err)
		}
		return tel.Hooks(), reader
	}
	sdkHooks, sdkReader := newTel(nil, nil)
	noExHooks, noExReader := newTel(nil, []sdkmetric.Option{sdkmetric.WithExemplarFilter(exemplar.AlwaysOffFilter)})
	p := tpsotel.NewChunkProducer()
	prodHooks, prodReader := newTel([]sdkmetric.ManualReaderOption{sdkmetric.WithProducer(p)}, nil, tpsotel.WithChunkProducer(p))
	return []struct {
		name   string
		hooks  tpsmeter.Hooks
		reader *sdkmetric.ManualReader
	}{
		{"sdk", sdkHooks, sdkReader},
		{"sdk-noexemplar", noExHooks, noExReader},
		{"producer", prodHooks, prodReader},
	}
}

// BenchmarkChunkHook measures the telemetry's per-chunk work alone: three
// recordings for an output chunk of one token (token.gap once), in each
// mode, with the request's state from the Start hook (state=start, what
// the meter does) and without it (state=none: the Chunk hook called on its
// own looks the attribute set up, and in the producer mode records into
// a state of its own and merges it at once).
func BenchmarkChunkHook(b *testing.B) {
	for _, mode := range chunkHookModes(b) {
		for _, withState := range []bool{true, false} {
			name := "mode=" + mode.name + "/state=none"
			ci := tpsmeter.ChunkInfo{Request: testInfo, Index: 5, Gap: 20 * time.Millisecond, Tokens: 1, Chars: 4}
			if withState {
				name = "mode=" + mode.name + "/state=start"
				ci.State = mode.hooks.Start(tpsmeter.StartInfo{Context: context.Background(), Request: testInfo})
			}
			b.Run(name, func(b *testing.B) {
				mode.hooks.Chunk(ci)
				b.ReportAllocs()
				for b.Loop() {
					mode.hooks.Chunk(ci)
				}
			})
		}
	}
}

// BenchmarkProduce measures one collection of the producer's three
// histograms with one attribute set (a scrape's share of the producer).
func BenchmarkProduce(b *testing.B) {
	p := tpsotel.NewChunkProducer()
	reader := sdkmetric.NewManualReader(sdkmetric.WithProducer(p))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { _ = mp.Shutdown(context.Background()) }()
	tel, _ := tpsotel.New(tpsotel.WithMeterProvider(mp), tpsotel.WithChunkProducer(p))
	tel.Hooks().Chunk(tpsmeter.ChunkInfo{Request: testInfo, Index: 5, Gap: 20 * time.Millisecond, Tokens: 1})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Produce(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// TestChunkHookAllocatesNothing pins the hot path: once a request's
// attribute set is cached, recording a chunk allocates nothing, in every
// mode, with the request's state from Start and without it; the values
// reach the reader.
func TestChunkHookAllocatesNothing(t *testing.T) {
	for _, mode := range chunkHookModes(t) {
		t.Run(mode.name, func(t *testing.T) {
			state := mode.hooks.Start(tpsmeter.StartInfo{Context: context.Background(), Request: testInfo})
			for _, st := range []any{state, nil} {
				for _, tokens := range []int{0, 1, 4} {
					ci := tpsmeter.ChunkInfo{Request: testInfo, Index: 3, Gap: 15 * time.Millisecond, Tokens: tokens, Chars: 9, State: st}
					mode.hooks.Chunk(ci)
					if a := testing.AllocsPerRun(200, func() { mode.hooks.Chunk(ci) }); a != 0 {
						t.Errorf("Chunk hook with %d tokens (state %T): %.1f allocations per call, want 0", tokens, st, a)
					}
				}
			}
			mode.hooks.Finish(tpsmeter.FinishInfo{Context: context.Background(), Request: testInfo, State: state})
			got := collect(t, mode.reader)
			for _, name := range []string{"gen_ai.client.operation.time_per_output_chunk", "tpsmeter.token.gap", "tpsmeter.chunk.tokens"} {
				if _, ok := got[name]; !ok {
					t.Errorf("%s not recorded", name)
				}
			}
			// Every call counted: 2 states x 3 token counts x (1 + 201 calls
			// of AllocsPerRun(200)); the stateful ones flushed by Finish.
			if n, want := chunkCount(got, "tpsmeter.chunk.tokens"), uint64(2*3*202); n != want {
				t.Errorf("chunk.tokens counted %d values, want %d", n, want)
			}
		})
	}
}

// TestTelemetryAllocsPerChunk holds the meter with telemetry on to the
// meter's allocation budget (at most 2 extra allocations per chunk over the
// raw stream, per-stream setup included, over a 1,000-chunk stream) and
// checks that the telemetry adds less than one allocation per 20 chunks
// on top of the meter, in both modes. Allocation counts are deterministic;
// times live in the benchmark.
func TestTelemetryAllocsPerChunk(t *testing.T) {
	for _, mode := range telemetryModes {
		t.Run(mode.name, func(t *testing.T) {
			plain := tpsmeter.New()
			withTel, reader := telemetryMeter(t)
			if mode.producer {
				withTel, reader = producerMeter(t)
			}
			readMetered(plain)
			readMetered(withTel)
			raw := testing.AllocsPerRun(10, func() { readRaw() })
			met := testing.AllocsPerRun(10, func() { readMetered(plain) })
			tel := testing.AllocsPerRun(10, func() { readMetered(withTel) })
			t.Logf("allocs per 1,000-chunk stream: raw %.0f, metered %.0f, metered+otel %.0f", raw, met, tel)
			if extra := (tel - raw) / 1000; extra > 2 {
				t.Errorf("metering with telemetry adds %.3f allocations per chunk, budget 2", extra)
			}
			// Per-request allocations only: a handful per stream (attribute sets,
			// the SDK's and the sketches' occasional growth when a new value range
			// shows up, which varies from run to run), never one per chunk, which
			// would add 1,000 here.
			if extra := (tel - met) / 1000; extra >= 0.05 {
				t.Errorf("telemetry adds %.3f allocations per chunk to the meter, want < 0.05 (per-request only)", extra)
			}
			// Every gap was recorded: 1 warm-up + 11 runs of AllocsPerRun(10)
			// (it runs once more to warm up), 996 gaps between 997 output chunks each.
			d, _ := collect(t, reader)["gen_ai.client.operation.time_per_output_chunk"].Data.(metricdata.Histogram[float64])
			var gaps uint64
			for _, p := range d.DataPoints {
				gaps += p.Count
			}
			if want := uint64(12 * 996); gaps != want {
				t.Errorf("time_per_output_chunk counted %d gaps, want %d", gaps, want)
			}
		})
	}
}
