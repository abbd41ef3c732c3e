package tpsotel_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/semconv/v1.41.0/genaiconv"

	"github.com/tpsmeter/tpsmeter"
	"github.com/tpsmeter/tpsmeter/tpsotel"
)

// The bucket boundaries the GenAI semantic conventions advise
// (../shared/research/anchors.md), and the documented boundaries of the
// project's own metrics (docs/opentelemetry.md).
var (
	specDurationBuckets = []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}
	specTokenBuckets    = []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864}

	docTTFTBuckets          = []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6, 0.75, 1, 1.25, 1.5, 2, 2.5, 3, 4, 5, 7.5, 10, 15, 20, 30, 60}
	docRateBuckets          = []float64{1, 2, 3, 5, 7.5, 10, 15, 20, 25, 30, 40, 50, 60, 75, 100, 125, 150, 200, 250, 300, 400, 500, 750, 1000}
	docTokenGapBuckets      = []float64{0.0005, 0.001, 0.002, 0.003, 0.005, 0.0075, 0.01, 0.015, 0.02, 0.025, 0.03, 0.04, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5, 1, 2, 5}
	docChunkTokenBuckets    = []float64{0, 1, 2, 3, 4, 5, 6, 8, 10, 16, 32, 64, 128, 256, 1024}
	docStallBuckets         = []float64{0, 1, 2, 3, 5, 10, 20}
	docStallDurationBuckets = []float64{0, 1, 1.5, 2, 3, 5, 7.5, 10, 15, 20, 30, 60, 120, 300}
	docUsageDiffBuckets     = []float64{-1000, -100, -10, -5, -2, -1, 0, 1, 2, 5, 10, 100, 1000, 10000, 100000}
)

var testInfo = tpsmeter.RequestInfo{
	Model: "gpt-test", Provider: "openai", Operation: "chat",
	ServerAddress: "api.example.test", ServerPort: 443, Class: "easy",
}

// chunkSet is the attribute set of per-chunk metrics for testInfo.
var chunkSet = attribute.NewSet(
	semconv.GenAIOperationNameKey.String("chat"),
	semconv.GenAIProviderNameKey.String("openai"),
	semconv.GenAIRequestModelKey.String("gpt-test"),
	semconv.ServerAddressKey.String("api.example.test"),
	semconv.ServerPortKey.Int(443),
)

func withAttrs(s attribute.Set, kvs ...attribute.KeyValue) attribute.Set {
	return attribute.NewSet(append(s.ToSlice(), kvs...)...)
}

func secs(d time.Duration) float64 { return d.Seconds() }

// completeSteps is a stream with a role-only first chunk (TTFC 100 ms),
// three output chunks (TTFT 300 ms; gaps 50 ms and 1.5 s, the second a
// stall) credited 2, 3 and 1 tokens, and a finish chunk with usage.
var completeSteps = []step{
	{after: 100 * time.Millisecond, respMod: "gpt-test-2025"},
	{after: 200 * time.Millisecond, text: "hello there"},
	{after: 50 * time.Millisecond, text: " one two three"},
	{after: 1500 * time.Millisecond, text: " four"},
	{after: 10 * time.Millisecond, finish: "stop", usage: &tpsmeter.Usage{PromptTokens: 12, CompletionTokens: 7, TotalTokens: 19}},
}

// TestMetricsOfACompleteStream pins every metric of one scripted stream:
// name, description, unit, explicit buckets, attributes and values.
func TestMetricsOfACompleteStream(t *testing.T) {
	r := newRig(t)
	res := r.run(context.Background(), testInfo, completeSteps, 5*time.Millisecond, nil)

	// The meter's own numbers that the metrics must carry.
	if res.OutputTokens != 6 || res.UsageDiff != 1 || res.OutputBucket != "short" || res.Perceived.Stalls != 1 {
		t.Fatalf("scenario drifted: tokens=%d diff=%d bucket=%q stalls=%d", res.OutputTokens, res.UsageDiff, res.OutputBucket, res.Perceived.Stalls)
	}
	if want := 4 / secs(1550*time.Millisecond); math.Abs(res.DecodeTPS-want) > 1e-9 {
		t.Fatalf("DecodeTPS = %v, want %v", res.DecodeTPS, want)
	}
	if res.Perceived.PerceivedTPS <= 0 {
		t.Fatalf("PerceivedTPS = %v, want > 0", res.Perceived.PerceivedTPS)
	}

	finishSet := withAttrs(chunkSet,
		semconv.GenAIResponseModelKey.String("gpt-test-2025"),
		tpsotel.OutputBucketKey.String("short"))
	gap1, gap2 := secs(50*time.Millisecond), secs(1500*time.Millisecond)

	fh := func(name, unit string, pts ...metricdata.HistogramDataPoint[float64]) metricdata.Metrics {
		return metricdata.Metrics{Name: name, Unit: unit, Data: metricdata.Histogram[float64]{Temporality: metricdata.CumulativeTemporality, DataPoints: pts}}
	}
	ih := func(name, unit string, pts ...metricdata.HistogramDataPoint[int64]) metricdata.Metrics {
		return metricdata.Metrics{Name: name, Unit: unit, Data: metricdata.Histogram[int64]{Temporality: metricdata.CumulativeTemporality, DataPoints: pts}}
	}
	spec := func(m metricdata.Metrics, desc string) metricdata.Metrics { m.Description = desc; return m }

	want := []metricdata.Metrics{
		spec(fh("gen_ai.client.operation.duration", "s",
			point(finishSet, specDurationBuckets, secs(1865*time.Millisecond))),
			genaiconv.ClientOperationDuration{}.Description()),
		spec(fh("gen_ai.client.operation.time_to_first_chunk", "s",
			point(finishSet, specDurationBuckets, secs(100*time.Millisecond))),
			genaiconv.ClientOperationTimeToFirstChunk{}.Description()),
		spec(fh("gen_ai.client.operation.time_per_output_chunk", "s",
			point(chunkSet, specDurationBuckets, gap1, gap2)),
			genaiconv.ClientOperationTimePerOutputChunk{}.Description()),
		spec(ih("gen_ai.client.token.usage", "{token}",
			point(withAttrs(finishSet, semconv.GenAITokenTypeInput), specTokenBuckets, int64(12)),
			point(withAttrs(finishSet, semconv.GenAITokenTypeOutput), specTokenBuckets, int64(7))),
			genaiconv.ClientTokenUsage{}.Description()),
		fh("tpsmeter.time_to_first_token", "s", point(finishSet, docTTFTBuckets, secs(300*time.Millisecond))),
		fh("tpsmeter.decode.rate", "{token}/s", point(finishSet, docRateBuckets, res.DecodeTPS)),
		fh("tpsmeter.perceived.rate", "{token}/s", point(finishSet, docRateBuckets, res.Perceived.PerceivedTPS)),
		ih("tpsmeter.stalls", "{stall}", point(finishSet, docStallBuckets, int64(1))),
		fh("tpsmeter.stall.duration", "s", point(finishSet, docStallDurationBuckets, gap2)),
		ih("tpsmeter.usage.difference", "{token}", point(finishSet, docUsageDiffBuckets, int64(1))),
		fh("tpsmeter.token.gap", "s", point(chunkSet, docTokenGapBuckets, gap1/3, gap1/3, gap1/3, gap2)),
		ih("tpsmeter.chunk.tokens", "{token}", point(chunkSet, docChunkTokenBuckets, int64(2), int64(3), int64(1))),
	}

	got := r.collect(t)
	if len(got) != len(want) {
		names := make([]string, 0, len(got))
		for n := range got {
			names = append(names, n)
		}
		t.Errorf("exported %d metrics %v, want %d", len(got), names, len(want))
	}
	for _, w := range want {
		t.Run(w.Name, func(t *testing.T) {
			g, ok := got[w.Name]
			if !ok {
				t.Fatalf("metric %s not exported", w.Name)
			}
			if strings.HasPrefix(w.Name, "tpsmeter.") {
				if g.Description == "" {
					t.Errorf("%s has no description", w.Name)
				}
				w.Description = g.Description
			}
			metricdatatest.AssertEqual(t, w, g, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
		})
	}
}

// TestNoServerMetricNames: client-side numbers never go under gen_ai.server.*.
func TestNoServerMetricNames(t *testing.T) {
	r := newRig(t, tpsotel.WithCountedTokenUsage(true))
	r.run(context.Background(), testInfo, completeSteps, 0, nil)
	r.run(context.Background(), testInfo, completeSteps[:3], 0, nil)
	for name := range r.collect(t) {
		if strings.HasPrefix(name, "gen_ai.server.") {
			t.Errorf("client-side metric recorded under server name %s", name)
		}
		if !strings.HasPrefix(name, "gen_ai.client.") && !strings.HasPrefix(name, "tpsmeter.") {
			t.Errorf("metric %s is outside the two documented namespaces", name)
		}
	}
}

// TestScope: the meter is named by import path, with the library version
// and the semconv schema; in producer mode the ChunkProducer's metrics come
// under the same scope.
func TestScope(t *testing.T) {
	for _, mode := range telemetryModes {
		t.Run(mode.name, func(t *testing.T) {
			r := newRigMode(t, mode.producer)
			r.run(context.Background(), testInfo, completeSteps, 0, nil)
			var rm metricdata.ResourceMetrics
			if err := r.reader.Collect(context.Background(), &rm); err != nil {
				t.Fatal(err)
			}
			wantScopes := map[bool]int{false: 1, true: 2}[mode.producer] // the producer's ScopeMetrics come after the SDK's
			if len(rm.ScopeMetrics) != wantScopes {
				t.Fatalf("got %d ScopeMetrics, want %d", len(rm.ScopeMetrics), wantScopes)
			}
			if tpsotel.ScopeName != "github.com/tpsmeter/tpsmeter/tpsotel" {
				t.Errorf("ScopeName = %q, want the package's import path", tpsotel.ScopeName)
			}
			for _, sm := range rm.ScopeMetrics {
				sc := sm.Scope
				if sc.Name != tpsotel.ScopeName {
					t.Errorf("scope name %q, want %q", sc.Name, tpsotel.ScopeName)
				}
				if sc.Version != tpsotel.Version || sc.Version == "" {
					t.Errorf("scope version %q, want %q", sc.Version, tpsotel.Version)
				}
				if sc.SchemaURL != semconv.SchemaURL {
					t.Errorf("schema URL %q, want %q", sc.SchemaURL, semconv.SchemaURL)
				}
			}
		})
	}
}

// TestErrorPaths: a failed request carries error.type on the metrics
// recorded at its end, and only the metrics whose events happened.
func TestErrorPaths(t *testing.T) {
	base := attribute.NewSet(chunkSet.ToSlice()...)
	tests := []struct {
		name      string
		steps     []step
		err       error
		errorType string
		present   []string
		absent    []string
	}{
		{
			name:      "deadline after the first output",
			steps:     []step{{after: 300 * time.Millisecond, text: "hello"}},
			err:       context.DeadlineExceeded,
			errorType: "deadline_exceeded",
			present:   []string{"gen_ai.client.operation.duration", "gen_ai.client.operation.time_to_first_chunk", "tpsmeter.time_to_first_token", "tpsmeter.chunk.tokens"},
			absent:    []string{"gen_ai.client.token.usage", "tpsmeter.usage.difference", "gen_ai.client.operation.time_per_output_chunk", "tpsmeter.decode.rate"},
		},
		{
			name:      "failed before any chunk",
			err:       errors.New("connection refused by a test"),
			errorType: "_OTHER",
			present:   []string{"gen_ai.client.operation.duration"},
			absent:    []string{"gen_ai.client.operation.time_to_first_chunk", "tpsmeter.time_to_first_token", "tpsmeter.chunk.tokens", "tpsmeter.stalls", "gen_ai.client.token.usage"},
		},
		{
			name:      "truncated after a role-only chunk",
			steps:     []step{{after: 100 * time.Millisecond}},
			err:       tpsmeter.ErrTruncated,
			errorType: "truncated",
			present:   []string{"gen_ai.client.operation.duration", "gen_ai.client.operation.time_to_first_chunk"},
			absent:    []string{"tpsmeter.time_to_first_token", "tpsmeter.chunk.tokens", "tpsmeter.stalls"},
		},
		{
			name:      "closed early after two chunks",
			steps:     []step{{after: 100 * time.Millisecond, text: "a b"}, {after: 20 * time.Millisecond, text: " c"}},
			err:       tpsmeter.ErrClosedEarly,
			errorType: "closed_early",
			present:   []string{"gen_ai.client.operation.duration", "tpsmeter.time_to_first_token", "gen_ai.client.operation.time_per_output_chunk", "tpsmeter.decode.rate"},
			absent:    []string{"gen_ai.client.token.usage"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t)
			res := r.run(context.Background(), testInfo, tc.steps, 2*time.Second, tc.err)
			if res.ErrorType != tc.errorType {
				t.Fatalf("Result.ErrorType = %q, want %q", res.ErrorType, tc.errorType)
			}
			got := r.collect(t)
			for _, n := range tc.absent {
				if _, ok := got[n]; ok {
					t.Errorf("%s recorded for a request without that event", n)
				}
			}
			wantFinish := withAttrs(base, tpsotel.OutputBucketKey.String(res.OutputBucket), semconv.ErrorTypeKey.String(tc.errorType))
			for _, n := range tc.present {
				m, ok := got[n]
				if !ok {
					t.Errorf("%s not recorded", n)
					continue
				}
				want := wantFinish
				if n == "tpsmeter.chunk.tokens" || n == "gen_ai.client.operation.time_per_output_chunk" {
					want = base // per-chunk metrics: the error is not known yet
				}
				for _, s := range attrSets(m) {
					if !s.Equals(&want) {
						t.Errorf("%s attributes %v, want %v", n, s.Encoded(attribute.DefaultEncoder()), want.Encoded(attribute.DefaultEncoder()))
					}
				}
			}
			d := got["gen_ai.client.operation.duration"].Data.(metricdata.Histogram[float64])
			if len(d.DataPoints) != 1 || d.DataPoints[0].Count != 1 || d.DataPoints[0].Sum != res.Duration.Seconds() {
				t.Errorf("duration points %+v, want one of %v s", d.DataPoints, res.Duration.Seconds())
			}
		})
	}
}

func attrSets(m metricdata.Metrics) []attribute.Set {
	var out []attribute.Set
	switch d := m.Data.(type) {
	case metricdata.Histogram[float64]:
		for _, p := range d.DataPoints {
			out = append(out, p.Attributes)
		}
	case metricdata.Histogram[int64]:
		for _, p := range d.DataPoints {
			out = append(out, p.Attributes)
		}
	}
	return out
}

// TestMissingRequiredAttributes: an undescribed request still gets the
// required gen_ai.operation.name and gen_ai.provider.name, as "_OTHER", and
// no empty optional attributes.
func TestMissingRequiredAttributes(t *testing.T) {
	r := newRig(t)
	r.run(context.Background(), tpsmeter.RequestInfo{}, []step{{after: time.Millisecond, text: "x"}, {after: time.Millisecond, text: " y"}}, 0, nil)
	want := attribute.NewSet(semconv.GenAIOperationNameKey.String("_OTHER"), semconv.GenAIProviderNameKey.String("_OTHER"))
	for _, s := range attrSets(r.collect(t)["tpsmeter.chunk.tokens"]) {
		if !s.Equals(&want) {
			t.Errorf("attributes %v, want %v", s.Encoded(attribute.DefaultEncoder()), want.Encoded(attribute.DefaultEncoder()))
		}
	}
}
