// Command prometheus is a runnable example of package tpsotel: it meters
// streamed chat completions made with the official openai-go client against
// a simulated server on 127.0.0.1 (offline, with a known TTFT distribution)
// and exports the measurements with the OpenTelemetry Prometheus exporter
// on /metrics, for a Prometheus server to scrape. By default it uses
// tpsotel's low-overhead mode: the per-chunk histograms are aggregated by a
// tpsotel.ChunkProducer registered on the exporter (-low-overhead=false
// records them through the SDK's instruments instead; the exposition is the
// same).
//
//	go run ./examples/prometheus -listen 127.0.0.1:9464 -streams 300 -hold 1m
//
// Then, with Prometheus scraping 127.0.0.1:9464, the P95 TTFT per model is
//
//	histogram_quantile(0.95, sum by (le, gen_ai_request_model) (rate(tpsmeter_time_to_first_token_seconds_bucket[5m])))
//
// The end-to-end test (e2e_test.go) runs this app, in both modes, under a
// real Prometheus server and checks that query, and the P95 per-chunk and
// per-token gaps, against the meter's own P95.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"time"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:9464", "address of the /metrics endpoint")
	streams := flag.Int("streams", 300, "number of streams to meter")
	concurrency := flag.Int("concurrency", 24, "streams in flight at once")
	hold := flag.Duration("hold", 30*time.Second, "keep serving /metrics this long after the streams (until interrupted); 0 exits at once")
	lowOverhead := flag.Bool("low-overhead", true, "aggregate the per-chunk histograms with a tpsotel.ChunkProducer registered on the exporter (false: through the SDK's instruments)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	a, err := newApp(*listen, *lowOverhead)
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()
	fmt.Printf("metrics on http://%s/metrics\n", a.MetricsAddr)
	start := time.Now()
	if err := a.Run(ctx, *streams, *concurrency); err != nil {
		log.Printf("streams: %v", err)
	}
	fmt.Printf("%d streams in %v\n", *streams, time.Since(start).Round(time.Millisecond))
	for _, g := range a.Meter.Snapshot() {
		fmt.Printf("%s/%s %s: %d requests, TTFT P50 %.3fs P95 %.3fs, decode %.0f tok/s (P50)\n",
			g.Key.Provider, g.Key.Model, g.Key.Bucket, g.Requests, g.TTFT.P50, g.TTFT.P95, g.DecodeTPS.P50)
	}
	if *hold > 0 {
		fmt.Printf("serving /metrics for %v (Ctrl-C to stop)\n", *hold)
		select {
		case <-time.After(*hold):
		case <-ctx.Done():
		}
	}
}
