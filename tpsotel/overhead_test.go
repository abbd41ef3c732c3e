package tpsotel_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/tpsmeter/tpsmeter"
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
// into a real SDK MeterProvider, and that provider's reader.
func telemetryMeter(tb testing.TB) (*tpsmeter.Meter, *sdkmetric.ManualReader) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	tb.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	tel, err := tpsotel.New(tpsotel.WithMeterProvider(mp))
	if err != nil {
		tb.Fatal(err)
	}
	return tpsmeter.New(tpsmeter.WithHooks(tel.Hooks())), reader
}

// BenchmarkOverheadWithTelemetry consumes the same 1,000-chunk stream raw,
// metered, and metered with telemetry recording into the OTel SDK. Compare
// with:
//
//	go test -run '^$' -bench OverheadWithTelemetry -benchtime 200x -count 6 ./tpsotel | benchstat -col /mode -
func BenchmarkOverheadWithTelemetry(b *testing.B) {
	plain := tpsmeter.New()
	withTel, _ := telemetryMeter(b)
	readMetered(plain) // load the encoding and fill the attribute caches outside the timed loops
	readMetered(withTel)
	for _, mode := range []struct {
		name string
		run  func() int
	}{
		{"raw", readRaw},
		{"metered", func() int { return readMetered(plain) }},
		{"metered+otel", func() int { return readMetered(withTel) }},
	} {
		b.Run("mode="+mode.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				mode.run()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1000, "ns/chunk")
		})
	}
}

// processCPU returns the CPU time this process has used (user + system, all
// threads, the garbage collector included). Unlike wall time it does not
// grow when other processes take the shared cores.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// leanMeter is telemetryMeter with the two per-chunk instruments of the
// project's own dropped by a View, as docs/opentelemetry.md shows.
func leanMeter(tb testing.TB) *tpsmeter.Meter {
	drop := sdkmetric.Stream{Aggregation: sdkmetric.AggregationDrop{}}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()), sdkmetric.WithView(
		sdkmetric.NewView(sdkmetric.Instrument{Name: "tpsmeter.token.gap"}, drop),
		sdkmetric.NewView(sdkmetric.Instrument{Name: "tpsmeter.chunk.tokens"}, drop)))
	tb.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	tel, err := tpsotel.New(tpsotel.WithMeterProvider(mp))
	if err != nil {
		tb.Fatal(err)
	}
	return tpsmeter.New(tpsmeter.WithHooks(tel.Hooks()))
}

// BenchmarkOverheadInterleaved runs four modes in turn within every
// iteration, so that a noisy machine loads them alike: the raw stream, the
// meter, the meter with telemetry, and the meter with telemetry whose
// per-chunk tpsmeter.* instruments are dropped by a View ("lean"). It
// reports per mode the wall and the process CPU time per chunk, and the
// CPU-time ratios to the raw stream (CPU time does not grow when other
// processes take the shared cores):
//
//	go test -run '^$' -bench OverheadInterleaved -benchtime 500x -count 3 ./tpsotel
func BenchmarkOverheadInterleaved(b *testing.B) {
	plain := tpsmeter.New()
	full, _ := telemetryMeter(b)
	lean := leanMeter(b)
	names := []string{"raw", "metered", "otel", "lean"}
	modes := []func() int{readRaw, func() int { return readMetered(plain) }, func() int { return readMetered(full) }, func() int { return readMetered(lean) }}
	for _, run := range modes {
		run() // load the encoding and fill the attribute caches outside the timed loop
	}
	var wall, cpu [4]time.Duration
	for b.Loop() {
		for i, run := range modes {
			w, c := time.Now(), processCPU()
			run()
			cpu[i] += processCPU() - c
			wall[i] += time.Since(w)
		}
	}
	perChunk := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(b.N) / 1000 }
	for i, name := range names {
		b.ReportMetric(perChunk(wall[i]), name+"-wall-ns/chunk")
		b.ReportMetric(perChunk(cpu[i]), name+"-cpu-ns/chunk")
		if i > 0 && cpu[0] > 0 {
			b.ReportMetric(float64(cpu[i])/float64(cpu[0]), name+"/raw-cpu")
		}
	}
}

// BenchmarkChunkHook measures the telemetry's per-chunk work alone.
func BenchmarkChunkHook(b *testing.B) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { _ = mp.Shutdown(context.Background()) }()
	tel, _ := tpsotel.New(tpsotel.WithMeterProvider(mp))
	chunk := tel.Hooks().Chunk
	ci := tpsmeter.ChunkInfo{Request: testInfo, Index: 5, Gap: 20 * time.Millisecond, Tokens: 1, Chars: 4}
	chunk(ci)
	b.ReportAllocs()
	for b.Loop() {
		chunk(ci)
	}
}

// TestChunkHookAllocatesNothing pins the hot path: once a request's
// attribute set is cached, recording a chunk allocates nothing.
func TestChunkHookAllocatesNothing(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { _ = mp.Shutdown(context.Background()) }()
	tel, err := tpsotel.New(tpsotel.WithMeterProvider(mp))
	if err != nil {
		t.Fatal(err)
	}
	chunk := tel.Hooks().Chunk
	for _, tokens := range []int{0, 1, 4} {
		ci := tpsmeter.ChunkInfo{Request: testInfo, Index: 3, Gap: 15 * time.Millisecond, Tokens: tokens, Chars: 9}
		chunk(ci)
		if a := testing.AllocsPerRun(200, func() { chunk(ci) }); a != 0 {
			t.Errorf("Chunk hook with %d tokens: %.1f allocations per call, want 0", tokens, a)
		}
	}
	if n := len(collect(t, reader)); n != 3 {
		t.Fatalf("%d per-chunk metrics recorded, want 3", n)
	}
}

// TestTelemetryAllocsPerChunk holds the meter with telemetry on to the
// meter's allocation budget (at most 2 extra allocations per chunk over the
// raw stream, per-stream setup included, over a 1,000-chunk stream) and
// checks that the telemetry adds less than one allocation per 100 chunks
// on top of the meter. Allocation counts are deterministic; times live in
// the benchmark.
func TestTelemetryAllocsPerChunk(t *testing.T) {
	plain := tpsmeter.New()
	withTel, reader := telemetryMeter(t)
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
}
