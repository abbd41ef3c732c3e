package tpsotel_test

import (
	"context"
	"fmt"
	"sort"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/tpsmeter/tpsmeter"
	"github.com/tpsmeter/tpsmeter/tpsmetertest"
	"github.com/tpsmeter/tpsmeter/tpsotel"
)

// Example records one stream's numbers as OpenTelemetry metrics. A fake
// clock makes it deterministic; a real application uses the default clock
// and an exporter (Prometheus, OTLP) as the MeterProvider's reader.
func Example() {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	tel, err := tpsotel.New(tpsotel.WithMeterProvider(mp))
	if err != nil {
		fmt.Println(err)
		return
	}
	clock := tpsmetertest.NewClock(time.Unix(0, 0))
	m := tpsmeter.New(tpsmeter.WithClock(clock), tpsmeter.WithHooks(tel.Hooks()))

	// The low-level API; stream adapters such as tpsopenai.NewChatStream
	// make these calls for you.
	_, rec := m.Start(context.Background(), tpsmeter.RequestInfo{Model: "gpt-4o-mini", Provider: "openai", Operation: "chat"})
	for i, text := range []string{"Hello", " world", "!"} {
		gap := 20 * time.Millisecond
		if i == 0 {
			gap = 250 * time.Millisecond // the time to first token
		}
		clock.Advance(gap)
		rec.Chunk(clock.Now())
		rec.Content(0, text)
		rec.EndChunk()
	}
	rec.End(clock.Now(), nil)

	var rm metricdata.ResourceMetrics
	_ = reader.Collect(context.Background(), &rm)
	var lines []string
	for _, sm := range rm.ScopeMetrics {
		for _, mt := range sm.Metrics {
			switch d := mt.Data.(type) {
			case metricdata.Histogram[float64]:
				lines = append(lines, fmt.Sprintf("%-45s %-9s count=%d sum=%.3f", mt.Name, mt.Unit, d.DataPoints[0].Count, d.DataPoints[0].Sum))
			case metricdata.Histogram[int64]:
				lines = append(lines, fmt.Sprintf("%-45s %-9s count=%d sum=%d", mt.Name, mt.Unit, d.DataPoints[0].Count, d.DataPoints[0].Sum))
			}
		}
	}
	sort.Strings(lines)
	for _, l := range lines {
		fmt.Println(l)
	}
	// Output:
	// gen_ai.client.operation.duration              s         count=1 sum=0.290
	// gen_ai.client.operation.time_per_output_chunk s         count=2 sum=0.040
	// gen_ai.client.operation.time_to_first_chunk   s         count=1 sum=0.250
	// tpsmeter.chunk.tokens                         {token}   count=3 sum=3
	// tpsmeter.decode.rate                          {token}/s count=1 sum=50.000
	// tpsmeter.perceived.rate                       {token}/s count=1 sum=43.750
	// tpsmeter.stall.duration                       s         count=1 sum=0.000
	// tpsmeter.stalls                               {stall}   count=1 sum=0
	// tpsmeter.time_to_first_token                  s         count=1 sum=0.250
	// tpsmeter.token.gap                            s         count=2 sum=0.040
}

// ExampleWithChunkProducer wires the low-overhead mode: the per-chunk
// histograms are aggregated by a ChunkProducer registered on the reader
// (here a ManualReader; with Prometheus, otelprom.WithProducer(p)), and
// reach the reader with the SDK's own metrics.
func ExampleWithChunkProducer() {
	p := tpsotel.NewChunkProducer()
	reader := sdkmetric.NewManualReader(sdkmetric.WithProducer(p))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	tel, err := tpsotel.New(tpsotel.WithMeterProvider(mp), tpsotel.WithChunkProducer(p))
	if err != nil {
		fmt.Println(err)
		return
	}
	clock := tpsmetertest.NewClock(time.Unix(0, 0))
	m := tpsmeter.New(tpsmeter.WithClock(clock), tpsmeter.WithHooks(tel.Hooks()))

	_, rec := m.Start(context.Background(), tpsmeter.RequestInfo{Model: "gpt-4o-mini", Provider: "openai", Operation: "chat"})
	for i, text := range []string{"Hello", " world", "!"} {
		gap := 20 * time.Millisecond
		if i == 0 {
			gap = 250 * time.Millisecond
		}
		clock.Advance(gap)
		rec.Chunk(clock.Now())
		rec.Content(0, text)
		rec.EndChunk()
	}
	rec.End(clock.Now(), nil)

	// The reader returns the SDK's metrics, then the producer's: the
	// per-chunk histograms, under the same scope.
	var rm metricdata.ResourceMetrics
	_ = reader.Collect(context.Background(), &rm)
	last := rm.ScopeMetrics[len(rm.ScopeMetrics)-1]
	fmt.Println(len(rm.ScopeMetrics), "ScopeMetrics; the producer's:", last.Scope.Name)
	for _, mt := range last.Metrics {
		switch d := mt.Data.(type) {
		case metricdata.Histogram[float64]:
			fmt.Printf("%-45s count=%d sum=%.3f max=%.3f\n", mt.Name, d.DataPoints[0].Count, d.DataPoints[0].Sum, must(d.DataPoints[0].Max.Value()))
		case metricdata.Histogram[int64]:
			fmt.Printf("%-45s count=%d sum=%d max=%d\n", mt.Name, d.DataPoints[0].Count, d.DataPoints[0].Sum, must(d.DataPoints[0].Max.Value()))
		}
	}
	// Output:
	// 2 ScopeMetrics; the producer's: github.com/tpsmeter/tpsmeter/tpsotel
	// gen_ai.client.operation.time_per_output_chunk count=2 sum=0.040 max=0.020
	// tpsmeter.token.gap                            count=2 sum=0.040 max=0.020
	// tpsmeter.chunk.tokens                         count=3 sum=3 max=1
}

// must drops the ok of an Extrema's Value.
func must[N int64 | float64](v N, _ bool) N { return v }
