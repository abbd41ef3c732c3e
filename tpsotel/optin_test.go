package tpsotel_test

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/tpsmeter/tpsmeter"
	"github.com/tpsmeter/tpsmeter/tpsotel"
)

// TestTokenUsageOptIn: gen_ai.client.token.usage carries the server's usage;
// the meter's own count appears there only when opted in, only for requests
// without server usage, and marked with tpsmeter.token.basis.
func TestTokenUsageOptIn(t *testing.T) {
	noUsage := []step{
		{after: 100 * time.Millisecond, text: "one two"},
		{after: 10 * time.Millisecond, text: " three", finish: "stop"},
	}
	withUsage := append(append([]step(nil), noUsage...), step{after: time.Millisecond, usage: &tpsmeter.Usage{PromptTokens: 5, CompletionTokens: 4, TotalTokens: 9}})
	finish := withAttrs(chunkSet, tpsotel.OutputBucketKey.String("short"))
	server := []metricdata.HistogramDataPoint[int64]{
		point(withAttrs(finish, semconv.GenAITokenTypeInput), specTokenBuckets, int64(5)),
		point(withAttrs(finish, semconv.GenAITokenTypeOutput), specTokenBuckets, int64(4)),
	}
	counted := []metricdata.HistogramDataPoint[int64]{
		point(withAttrs(finish, semconv.GenAITokenTypeOutput, tpsotel.TokenBasisKey.String("custom")), specTokenBuckets, int64(3)),
	}
	tests := []struct {
		name  string
		optIn bool
		steps []step
		want  []metricdata.HistogramDataPoint[int64] // nil: no token usage metric at all
	}{
		{"default, no server usage: nothing", false, noUsage, nil},
		{"opted in, no server usage: counted, marked", true, noUsage, counted},
		{"default, server usage", false, withUsage, server},
		{"opted in, server usage wins", true, withUsage, server},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, tpsotel.WithCountedTokenUsage(tc.optIn))
			r.run(context.Background(), testInfo, tc.steps, 0, nil)
			got, ok := r.collect(t)["gen_ai.client.token.usage"]
			if tc.want == nil {
				if ok {
					t.Fatalf("token usage recorded without server usage or opt-in: %+v", got.Data)
				}
				return
			}
			if !ok {
				t.Fatal("gen_ai.client.token.usage not recorded")
			}
			metricdatatest.AssertAggregationsEqual(t, metricdata.Histogram[int64]{Temporality: metricdata.CumulativeTemporality, DataPoints: tc.want}, got.Data, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
			for _, s := range attrSets(got) {
				if _, marked := s.Value(tpsotel.TokenBasisKey); marked != (tc.want[0].Attributes.HasValue(tpsotel.TokenBasisKey)) {
					t.Errorf("basis marking wrong on %v", s.Encoded(attribute.DefaultEncoder()))
				}
			}
		})
	}
}
