package tpsopenai_test

import (
	"context"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/tpsmeter/tpsmeter"
	"github.com/tpsmeter/tpsmeter/internal/cpuratio"
	"github.com/tpsmeter/tpsmeter/internal/streamtest"
	"github.com/tpsmeter/tpsmeter/tpsopenai"
)

// rawStream decodes the shared 1,000-chunk stream with openai-go's own
// decoder (no network: the benchmark isolates the per-chunk work).
func rawStream() *ssestream.Stream[openai.ChatCompletionChunk] {
	return streamtest.DecodeChat(streamtest.Chat1000)
}

func consumeRaw() int {
	s := rawStream()
	n := 0
	for s.Next() {
		n += len(s.Current().Choices)
	}
	_ = s.Close()
	return n
}

func consumeMetered(m *tpsmeter.Meter) int {
	_, rec := m.Start(context.Background(), tpsmeter.RequestInfo{Model: "gpt-4o-mini", Provider: "openai", Operation: "chat"})
	s := tpsopenai.WrapChat(rec, rawStream())
	n := 0
	for s.Next() {
		n += len(s.Current().Choices)
	}
	_ = s.Close()
	return n
}

// BenchmarkOverhead consumes the same 1,000-chunk stream raw and metered
// (exact counting on). Compare with:
//
//	go test -run '^$' -bench Overhead -count 10 ./tpsopenai | benchstat -col /mode -
func BenchmarkOverhead(b *testing.B) {
	m := tpsmeter.New()
	consumeMetered(m) // load the encoding outside the timed loop
	b.Run("mode=raw", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			consumeRaw()
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1000, "ns/chunk")
	})
	b.Run("mode=metered", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			consumeMetered(m)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1000, "ns/chunk")
	})
}

// BenchmarkOverheadRatio is the acceptance benchmark of the meter's time
// budget (metered/raw at most 1.05): it compares the process CPU time of
// consuming the stream metered with that of consuming it raw, with the
// alternating A B B A / B A A B method of package internal/cpuratio. It
// reports the median of the per-iteration ratios (median-ratio, the number
// to quote) and the ratio of the sums. mode=control compares raw with raw:
// it shows what the method reads when there is nothing to find.
//
//	go test -run '^$' -bench OverheadRatio -benchtime 300x -count 3 ./tpsopenai
func BenchmarkOverheadRatio(b *testing.B) {
	m := tpsmeter.New()
	for _, mode := range []struct {
		name string
		run  func()
	}{
		{"control", func() { consumeRaw() }},
		{"metered", func() { consumeMetered(m) }},
	} {
		b.Run("mode="+mode.name, func(b *testing.B) {
			r := cpuratio.Measure(b, func() { consumeRaw() }, mode.run)
			b.ReportMetric(r.Median, "median-ratio")
			b.ReportMetric(r.Sum, "sum-ratio")
			b.ReportMetric(float64(r.BaseCPU.Nanoseconds())/1000, "raw-cpu-ns/chunk")
			b.ReportMetric(float64(r.ModeCPU.Nanoseconds())/1000, "mode-cpu-ns/chunk")
		})
	}
}

// TestMeteredAllocsPerChunk pins the allocation budget (a count, not a
// time, so it is deterministic): metering adds at most 2 allocations per
// chunk on average over a 1,000-chunk stream, per-stream setup included.
func TestMeteredAllocsPerChunk(t *testing.T) {
	m := tpsmeter.New()
	consumeMetered(m)
	raw := testing.AllocsPerRun(20, func() { consumeRaw() })
	met := testing.AllocsPerRun(20, func() { consumeMetered(m) })
	extra := (met - raw) / 1000
	t.Logf("allocs per stream: raw %.0f, metered %.0f: %.3f extra per chunk", raw, met, extra)
	if extra > 2 {
		t.Errorf("metering adds %.2f allocations per chunk, budget 2", extra)
	}
}
