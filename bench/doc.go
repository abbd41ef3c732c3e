// Package bench runs latency and throughput benchmarks of OpenAI-compatible
// streaming endpoints on top of tpsmeter: the engine of cmd/tpsbench, for
// tools that want the same runs, results files, reports and regression
// gate.
//
// A run sends the requests of a Workload (prompts with an expected output
// length bucket and a class such as easy or hard) to one or more Targets at
// once, closed-loop (a fixed number of requests in flight) or open-loop
// (Poisson arrivals), after warm-up requests that are excluded, followed by
// cold-start probes (one request after each idle gap). Every request is
// measured by a tpsmeter.Meter through package tpsopenai; the runner keeps,
// per target x bucket x class (a Cell), a mergeable quantile sketch and a
// bounded sample of each metric (Dist), errors by type, and the load it
// actually achieved (its own client lag).
//
// # Quick start
//
//	res, err := bench.Run(ctx, bench.Config{
//		Targets:  []bench.Target{{Name: "prod", BaseURL: "https://api.openai.com/v1", Model: "gpt-4o-mini", APIKey: key}},
//		Duration: time.Minute, Concurrency: 4, Warmup: 2,
//	})
//	bench.WriteTable(os.Stdout, res) // terminal tables and findings
//	res.Save("results.json")          // the versioned results file
//
// Then Compare two results (Mann-Whitney U on the per-request samples, a
// regression being significant and worse than a threshold), Merge results of
// runs on many machines (sketches merge exactly), WriteHTML a self-contained
// report, and stream a per-request CSV with CSVWriter as Config.OnRecord.
// docs/tpsbench.md is the manual.
//
// # Concurrency
//
// A Runner runs once; its Progress may be read from any goroutine while it
// runs. Collector is safe for concurrent use. Results, Cell, Dist and
// CSVWriter are not; Config, Target, Workload, Prompt, Record, Settings and
// the summaries are plain values.
package bench
