package tpsotel_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/tpsmeter/tpsmeter"
	"github.com/tpsmeter/tpsmeter/tpsotel"
)

// TestModelCardinalityCap: 10,000 distinct request models (each answered
// by a distinct response model), from several goroutines at once, give at
// most cap+1 distinct model values ("other" included) across every metric,
// in both modes (per-chunk metrics through the SDK or a ChunkProducer).
func TestModelCardinalityCap(t *testing.T) {
	tests := []struct {
		name    string
		opts    []tpsotel.Option
		cap     int
		streams int
	}{
		{"default cap", nil, tpsotel.DefaultMaxModels, 10_000},
		{"cap 3", []tpsotel.Option{tpsotel.WithMaxModels(3)}, 3, 1_000},
		{"non-positive keeps the default", []tpsotel.Option{tpsotel.WithMaxModels(-1)}, tpsotel.DefaultMaxModels, 1_000},
	}
	const workers = 4
	for _, mode := range telemetryModes {
		for _, tc := range tests {
			streams := tc.streams
			t.Run(mode.name+"/"+tc.name, func(t *testing.T) {
				r := newRigMode(t, mode.producer, tc.opts...)
				var wg sync.WaitGroup
				for w := range workers {
					wg.Go(func() {
						for i := w; i < streams; i += workers {
							info := tpsmeter.RequestInfo{Model: fmt.Sprintf("model-%05d", i), Provider: "openai", Operation: "chat"}
							r.run(context.Background(), info, []step{
								{after: time.Millisecond, text: "a", respMod: fmt.Sprintf("served-%05d", i)},
								{after: time.Millisecond, text: " b"},
							}, 0, nil)
						}
					})
				}
				wg.Wait()
				ms := r.collect(t)
				req := allAttrValues(ms, semconv.GenAIRequestModelKey)
				resp := allAttrValues(ms, semconv.GenAIResponseModelKey)
				union := map[string]bool{}
				for v := range req {
					union[v] = true
				}
				for v := range resp {
					union[v] = true
				}
				if len(union) > tc.cap+1 {
					t.Errorf("%d distinct model values, cap %d (+1 for %q)", len(union), tc.cap, tpsotel.OverflowModel)
				}
				if !req[tpsotel.OverflowModel] || !resp[tpsotel.OverflowModel] {
					t.Errorf("overflow value %q missing: request has it %v, response has it %v", tpsotel.OverflowModel, req[tpsotel.OverflowModel], resp[tpsotel.OverflowModel])
				}
				if len(req) < 2 {
					t.Errorf("only %d request model values: the cap kept no real names", len(req))
				}
				// Nothing was lost: every request is counted in the duration histogram.
				var n uint64
				for _, p := range durationPoints(ms) {
					n += p.Count
				}
				if n != uint64(streams) {
					t.Errorf("duration histogram counted %d requests, want %d", n, streams)
				}
				// And every chunk in the per-chunk histogram (the producer's in that mode).
				var chunks uint64
				ct, _ := ms["tpsmeter.chunk.tokens"].Data.(metricdata.Histogram[int64])
				for _, p := range ct.DataPoints {
					chunks += p.Count
				}
				if chunks != uint64(2*streams) {
					t.Errorf("chunk.tokens counted %d chunks, want %d", chunks, 2*streams)
				}
			})
		}
	}
}
