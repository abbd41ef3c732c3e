package tpsotel_test

import (
	"context"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/tpsmeter/tpsmeter"
	"github.com/tpsmeter/tpsmeter/tpsmetertest"
	"github.com/tpsmeter/tpsmeter/tpsotel"
)

// viewRig is a meter whose telemetry goes through a MeterProvider with views.
func viewRig(t *testing.T, views ...sdkmetric.View) (*tpsmeter.Meter, *tpsmetertest.Clock, *sdkmetric.ManualReader) {
	t.Helper()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader), sdkmetric.WithView(views...))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	tel, err := tpsotel.New(tpsotel.WithMeterProvider(mp))
	if err != nil {
		t.Fatal(err)
	}
	clock := tpsmetertest.NewClock(time.Unix(0, 0))
	return tpsmeter.New(tpsmeter.WithClock(clock), tpsmeter.WithTokenizer(wordTokenizer), tpsmeter.WithHooks(tel.Hooks())), clock, reader
}

func play(m *tpsmeter.Meter, clock *tpsmetertest.Clock, steps []step) {
	_, rec := m.Start(context.Background(), testInfo)
	for _, s := range steps {
		clock.Advance(s.after)
		rec.Chunk(clock.Now())
		rec.Content(0, s.text)
		rec.EndChunk()
	}
	rec.End(clock.Now(), nil)
}

// TestExponentialHistogramView: the View documented in
// docs/opentelemetry.md turns the TTFT histogram exponential.
func TestExponentialHistogramView(t *testing.T) {
	m, clock, reader := viewRig(t, sdkmetric.NewView(
		sdkmetric.Instrument{Name: "tpsmeter.time_to_first_token"},
		sdkmetric.Stream{Aggregation: sdkmetric.AggregationBase2ExponentialHistogram{MaxSize: 160, MaxScale: 20}},
	))
	play(m, clock, completeSteps)
	got := collect(t, reader)
	e, ok := got["tpsmeter.time_to_first_token"].Data.(metricdata.ExponentialHistogram[float64])
	if !ok {
		t.Fatalf("TTFT data is %T, want an exponential histogram", got["tpsmeter.time_to_first_token"].Data)
	}
	if len(e.DataPoints) != 1 || e.DataPoints[0].Count != 1 || e.DataPoints[0].Sum != 0.3 {
		t.Fatalf("exponential TTFT points %+v, want one value 0.3", e.DataPoints)
	}
	if _, ok := got["gen_ai.client.operation.duration"].Data.(metricdata.Histogram[float64]); !ok {
		t.Fatal("the view changed other instruments")
	}
}

// TestDroppedPerChunkInstruments: per-chunk instruments dropped with a View
// (the documented way to cut the per-chunk cost) record nothing, and the
// rest still works.
func TestDroppedPerChunkInstruments(t *testing.T) {
	drop := sdkmetric.Stream{Aggregation: sdkmetric.AggregationDrop{}}
	m, clock, reader := viewRig(t,
		sdkmetric.NewView(sdkmetric.Instrument{Name: "tpsmeter.token.gap"}, drop),
		sdkmetric.NewView(sdkmetric.Instrument{Name: "tpsmeter.chunk.tokens"}, drop),
	)
	play(m, clock, completeSteps)
	got := collect(t, reader)
	for _, n := range []string{"tpsmeter.token.gap", "tpsmeter.chunk.tokens"} {
		if _, ok := got[n]; ok {
			t.Errorf("dropped instrument %s exported", n)
		}
	}
	d, _ := got["gen_ai.client.operation.time_per_output_chunk"].Data.(metricdata.Histogram[float64])
	if len(d.DataPoints) != 1 || d.DataPoints[0].Count != 2 {
		t.Errorf("time_per_output_chunk points %+v, want 2 gaps", d.DataPoints)
	}
}
