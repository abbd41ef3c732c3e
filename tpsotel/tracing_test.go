package tpsotel_test

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/tpsmeter/tpsmeter/tpsotel"
)

func spanAttrs(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	out := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes() {
		out[kv.Key] = kv.Value
	}
	return out
}

// TestTracing: with WithTracing(true) the caller's span gets one
// first-token event and the Result's main fields; without it, nothing.
func TestTracing(t *testing.T) {
	tests := []struct {
		name string
		on   bool
	}{{"on", true}, {"off by default", false}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sr := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
			defer func() { _ = tp.Shutdown(context.Background()) }()
			var opts []tpsotel.Option
			if tc.on {
				opts = append(opts, tpsotel.WithTracing(true))
			}
			r := newRig(t, opts...)
			ctx, span := tp.Tracer("caller").Start(context.Background(), "chat gpt-test")
			res := r.run(ctx, testInfo, completeSteps, 5*time.Millisecond, nil)
			span.End()

			ended := sr.Ended()
			if len(ended) != 1 {
				t.Fatalf("%d spans ended, want the caller's one (the package starts none)", len(ended))
			}
			s := ended[0]
			attrs := spanAttrs(s)
			if !tc.on {
				if len(s.Events()) != 0 || len(attrs) != 0 {
					t.Fatalf("tracing off, yet span has events %v and attributes %v", s.Events(), attrs)
				}
				return
			}
			if len(s.Events()) != 1 || s.Events()[0].Name != tpsotel.FirstTokenEvent {
				t.Fatalf("span events %v, want one %q", s.Events(), tpsotel.FirstTokenEvent)
			}
			ev := map[attribute.Key]attribute.Value{}
			for _, kv := range s.Events()[0].Attributes {
				ev[kv.Key] = kv.Value
			}
			if ev["tpsmeter.time_to_first_token"].AsFloat64() != 0.3 || ev["tpsmeter.first_chunk.tokens"].AsInt64() != 2 {
				t.Errorf("first-token event attributes %v, want TTFT 0.3 s and 2 tokens", ev)
			}
			want := map[attribute.Key]attribute.Value{
				"tpsmeter.time_to_first_token":        attribute.Float64Value(res.TTFT.Seconds()),
				"tpsmeter.time_to_first_chunk":        attribute.Float64Value(res.TimeToFirstChunk.Seconds()),
				"tpsmeter.duration":                   attribute.Float64Value(res.Duration.Seconds()),
				"tpsmeter.decode.rate":                attribute.Float64Value(res.DecodeTPS),
				"tpsmeter.e2e.rate":                   attribute.Float64Value(res.E2ETPS),
				"tpsmeter.perceived.rate":             attribute.Float64Value(res.Perceived.PerceivedTPS),
				"tpsmeter.stalls":                     attribute.IntValue(1),
				"tpsmeter.stall.duration":             attribute.Float64Value(1.5),
				"tpsmeter.output.tokens":              attribute.IntValue(6),
				"tpsmeter.output.chunks":              attribute.IntValue(3),
				"tpsmeter.token.basis":                attribute.StringValue("custom"),
				"tpsmeter.output.bucket":              attribute.StringValue("short"),
				"tpsmeter.status":                     attribute.StringValue("complete"),
				"tpsmeter.usage.difference":           attribute.Int64Value(1),
				semconv.GenAIUsageInputTokensKey:      attribute.Int64Value(12),
				semconv.GenAIUsageOutputTokensKey:     attribute.Int64Value(7),
				semconv.GenAIResponseModelKey:         attribute.StringValue("gpt-test-2025"),
				semconv.GenAIResponseFinishReasonsKey: attribute.StringSliceValue([]string{"stop"}),
			}
			for k, v := range want {
				if got, ok := attrs[k]; !ok || got.Type() != v.Type() || got.Emit() != v.Emit() {
					t.Errorf("span attribute %s = %v (present %v), want %v", k, got.Emit(), ok, v.Emit())
				}
			}
			if _, ok := attrs[semconv.ErrorTypeKey]; ok {
				t.Errorf("error.type on the span of a complete request")
			}
		})
	}
}

// TestTracingWithoutSpan: no span in the context, or a non-recording one,
// is not an error and changes nothing.
func TestTracingWithoutSpan(t *testing.T) {
	r := newRig(t, tpsotel.WithTracing(true))
	r.run(context.Background(), testInfo, completeSteps, 0, nil)
	if r.meter.HookPanics() != 0 {
		t.Fatalf("%d hook panics without a span", r.meter.HookPanics())
	}
	if n := len(durationPoints(r.collect(t))); n != 1 {
		t.Fatalf("%d duration points, want 1", n)
	}
}
