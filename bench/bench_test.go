package bench_test

import (
	"context"
	"testing"
	"time"

	"github.com/tpsmeter/tpsmeter/bench"
	"github.com/tpsmeter/tpsmeter/llmsim"
	"github.com/tpsmeter/tpsmeter/stats"
)

// BenchmarkCollectorAdd: the cost of folding one finished 150-token
// request (one value per metric, one per chunk) into the results.
func BenchmarkCollectorAdd(b *testing.B) {
	c := bench.NewCollector(stats.LengthBuckets{}, 0, 1)
	rec := synthRecord("t", "medium", "hard", 250*time.Millisecond, 80, 150)
	b.ReportAllocs()
	for b.Loop() {
		c.Add(rec)
	}
}

// BenchmarkRequestInstant: one whole request through the runner (meter,
// openai-go client, HTTP, in-process simulator with no delays) for a
// 64-token answer: the client-side overhead per request, simulator included.
func BenchmarkRequestInstant(b *testing.B) {
	srv, err := llmsim.Start(llmsim.Config{Profile: llmsim.Profile{}})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	cfg := bench.Config{
		Targets:     []bench.Target{{Name: "sim", BaseURL: srv.URL(), Model: "gpt-4o-mini", Hints: true}},
		Workload:    oneShape("hard", "short", 64),
		Concurrency: 1, Requests: b.N, SampleCap: 100,
	}
	b.ReportAllocs()
	b.ResetTimer()
	if _, err := bench.Run(context.Background(), cfg); err != nil {
		b.Fatal(err)
	}
}
