package bench_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/tpsmeter/tpsmeter"
	"github.com/tpsmeter/tpsmeter/bench"
	"github.com/tpsmeter/tpsmeter/llmsim"
	"github.com/tpsmeter/tpsmeter/stats"
)

// Benchmark a simulated server: 8 requests of the default mix, 4 at a
// time. Against a real endpoint, set BaseURL, Model and APIKey instead.
func Example() {
	srv, err := llmsim.Start(llmsim.Config{Profile: llmsim.Profile{TokensPerSecond: 2000}})
	if err != nil {
		panic(err)
	}
	defer srv.Close()

	res, err := bench.Run(context.Background(), bench.Config{
		Targets:     []bench.Target{{Name: "sim", BaseURL: srv.URL(), Model: "gpt-4o-mini", Hints: true}},
		Requests:    10,
		Concurrency: 4,
	})
	if err != nil {
		panic(err)
	}
	for _, c := range res.Cells {
		fmt.Printf("%s: %d/%d completed, %.0f output tokens each (median)\n",
			c.CellKey, c.Completed, c.Requests, c.Metric(bench.MetricOutputTokens).Quantile(0.5))
	}
	// Output:
	// sim/short/easy: 1/1 completed, 45 output tokens each (median)
	// sim/short/hard: 1/1 completed, 62 output tokens each (median)
	// sim/medium/easy: 3/3 completed, 140 output tokens each (median)
	// sim/medium/hard: 2/2 completed, 158 output tokens each (median)
	// sim/long/easy: 2/2 completed, 517 output tokens each (median)
	// sim/long/hard: 1/1 completed, 518 output tokens each (median)
}

func ExampleParseWorkload() {
	file := `# my prompts
{"id": "greet", "prompt": "Say hello.", "bucket": "short", "class": "easy", "max_tokens": 50}
{"id": "essay", "prompt": "Write an essay on tides.", "bucket": "long", "class": "hard", "max_tokens": 1200}
{"id": "oops", "prompt": "", "bucket": "short"}
`
	_, err := bench.ParseWorkload(strings.NewReader(file), "prompts.jsonl", stats.LengthBuckets{})
	fmt.Println(err)
	w, _ := bench.ParseWorkload(strings.NewReader(strings.SplitAfterN(file, "\n", 4)[0]+strings.SplitAfterN(file, "\n", 4)[1]+strings.SplitAfterN(file, "\n", 4)[2]), "prompts.jsonl", stats.LengthBuckets{})
	for _, p := range w.Prompts {
		fmt.Println(p.ID, p.Bucket, p.Class, p.MaxTokens)
	}
	// Output:
	// prompts.jsonl:4: missing or empty "prompt"
	// greet short easy 50
	// essay long hard 1200
}

// Compare a baseline with a run whose decode rate dropped by 20%.
func ExampleCompare() {
	mk := func(run string, tps float64) *bench.Results {
		c := bench.NewCollector(stats.LengthBuckets{}, 0, 1)
		for i := 0; i < 30; i++ {
			rate := tps * (1 + float64(i%7-3)/100) // ±3% of spread
			c.Add(bench.Record{Target: "api", Phase: bench.PhaseMeasure, Bucket: "medium", Class: "hard",
				Result: tpsmeter.Result{Status: tpsmeter.StatusComplete, OutputChunks: 200, OutputTokens: 200,
					TTFT: 300 * time.Millisecond, DecodeTPS: rate}})
		}
		r := c.Results()
		r.Runs = []bench.RunInfo{{ID: run}}
		return r
	}
	cmp, _ := bench.Compare(mk("nightly-1", 80), mk("nightly-2", 64), bench.CompareOptions{})
	for _, r := range cmp.Rows {
		fmt.Printf("%s %s: %.3g -> %.3g (%+.0f%%) %s\n", r.Key, r.Metric, r.BaseMedian, r.NewMedian, 100*r.MedianChange, r.Verdict)
	}
	fmt.Println("regressed:", cmp.Regressed())
	// Output:
	// api/medium/hard error_rate: 0 -> 0 (+0%) ok
	// api/medium/hard ttft_s: 0.3 -> 0.3 (+0%) ok
	// api/medium/hard decode_tps: 80.4 -> 63.4 (-21%) REGRESSION
	// regressed: true
}
