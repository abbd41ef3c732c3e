package tpsotel_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	promclient "github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/attribute"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.uber.org/goleak"

	"github.com/tpsmeter/tpsmeter"
	"github.com/tpsmeter/tpsmeter/tpsopenai"
	"github.com/tpsmeter/tpsmeter/tpsotel"
)

const secret = "SECRETMARKER7f3a"

// chatChunk is one Chat Completions SSE event with the given content.
func chatChunk(content string) string {
	return fmt.Sprintf(`data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini-2024-07-18","choices":[{"index":0,"delta":{"content":%q},"finish_reason":null}]}`+"\n\n", content)
}

// privacyServer answers every chat request with a stream whose text
// carries the secret, in one of several shapes.
func privacyServer(t *testing.T, mode string) *httptest.Server {
	t.Helper()
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if !strings.Contains(string(body), secret) {
			t.Errorf("the prompt did not reach the server with its secret")
		}
		if mode == "http error" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"error":{"message":"bad prompt %s","type":"invalid_request_error","code":"%s"}}`, secret, secret)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fl := w.(http.Flusher)
		send := func(s string) { _, _ = io.WriteString(w, s); fl.Flush() }
		send(`data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini-2024-07-18","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}` + "\n\n")
		for _, part := range []string{"The answer", " is ", secret, " and ", secret + "!", " Done."} {
			send(chatChunk(part))
		}
		if mode == "stream error" {
			send(fmt.Sprintf(`data: {"error":{"message":"overloaded while saying %s","type":"server_error"}}`+"\n\n", secret))
			return
		}
		send(`data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini-2024-07-18","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n")
		send(`data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini-2024-07-18","choices":[],"usage":{"prompt_tokens":9,"completion_tokens":14,"total_tokens":23}}` + "\n\n")
		send("data: [DONE]\n\n")
	}))
}

// dumpMetrics writes every name, description, unit, attribute and exemplar
// attribute the reader holds.
func dumpMetrics(rm metricdata.ResourceMetrics) string {
	var b strings.Builder
	enc := attribute.DefaultEncoder()
	b.WriteString(rm.Resource.Encoded(enc))
	for _, sm := range rm.ScopeMetrics {
		fmt.Fprintf(&b, "\n%s %s %s", sm.Scope.Name, sm.Scope.Version, sm.Scope.Attributes.Encoded(enc))
		for _, m := range sm.Metrics {
			fmt.Fprintf(&b, "\n%s|%s|%s", m.Name, m.Description, m.Unit)
			switch d := m.Data.(type) {
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					fmt.Fprintf(&b, "\n  %s %v", p.Attributes.Encoded(enc), p.BucketCounts)
					for _, e := range p.Exemplars {
						fmt.Fprintf(&b, " ex%v", e.FilteredAttributes)
					}
				}
			case metricdata.Histogram[int64]:
				for _, p := range d.DataPoints {
					fmt.Fprintf(&b, "\n  %s %v", p.Attributes.Encoded(enc), p.BucketCounts)
					for _, e := range p.Exemplars {
						fmt.Fprintf(&b, " ex%v", e.FilteredAttributes)
					}
				}
			default:
				fmt.Fprintf(&b, "\n  %+v", d)
			}
		}
	}
	return b.String()
}

// dumpSpans writes every span's name, status, attributes and events.
func dumpSpans(spans []sdktrace.ReadOnlySpan) string {
	var b strings.Builder
	for _, s := range spans {
		attrs := attribute.NewSet(s.Attributes()...)
		fmt.Fprintf(&b, "%s %v %s\n", s.Name(), s.Status(), attrs.Encoded(attribute.DefaultEncoder()))
		for _, e := range s.Events() {
			ev := attribute.NewSet(e.Attributes...)
			fmt.Fprintf(&b, "  event %s %s\n", e.Name, ev.Encoded(attribute.DefaultEncoder()))
		}
	}
	return b.String()
}

// TestNoTextInTelemetry streams answers carrying a secret through the real
// openai-go client (prompt and answer both carry it; so do the error
// messages of the failing variants) and checks that the secret reaches
// none of the exported telemetry: metric data, the Prometheus exposition
// text, span attributes and events, in both modes (per-chunk metrics
// through the SDK or a ChunkProducer).
func TestNoTextInTelemetry(t *testing.T) {
	for _, tm := range telemetryModes {
		for _, mode := range []string{"complete", "stream error", "http error"} {
			t.Run(tm.name+"/"+mode, func(t *testing.T) { noTextInTelemetry(t, tm.producer, mode) })
		}
	}
}

// noTextInTelemetry is one case of TestNoTextInTelemetry; with producer,
// the per-chunk metrics come from a ChunkProducer registered on both the
// ManualReader and the Prometheus exporter.
func noTextInTelemetry(t *testing.T, producer bool, mode string) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	srv := privacyServer(t, mode)
	defer srv.Close()
	transport := &http.Transport{}
	defer transport.CloseIdleConnections()

	reg := promclient.NewRegistry()
	var readerOpts []sdkmetric.ManualReaderOption
	promOpts := []otelprom.Option{otelprom.WithRegisterer(reg)}
	telOpts := []tpsotel.Option{tpsotel.WithTracing(true), tpsotel.WithCountedTokenUsage(true)}
	if producer {
		p := tpsotel.NewChunkProducer()
		readerOpts = append(readerOpts, sdkmetric.WithProducer(p))
		promOpts = append(promOpts, otelprom.WithProducer(p))
		telOpts = append(telOpts, tpsotel.WithChunkProducer(p))
	}
	reader := sdkmetric.NewManualReader(readerOpts...)
	exp, err := otelprom.New(promOpts...)
	if err != nil {
		t.Fatal(err)
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader), sdkmetric.WithReader(exp))
	defer func() { _ = mp.Shutdown(context.Background()) }()
	sr := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
	defer func() { _ = tp.Shutdown(context.Background()) }()

	tel, err := tpsotel.New(append(telOpts, tpsotel.WithMeterProvider(mp))...)
	if err != nil {
		t.Fatal(err)
	}
	m := tpsmeter.New(tpsmeter.WithHooks(tel.Hooks()))
	client := openai.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("test-key"), option.WithMaxRetries(0),
		option.WithHTTPClient(&http.Client{Transport: transport}), option.WithMiddleware(m.Middleware))

	ctx, span := tp.Tracer("caller").Start(context.Background(), "chat")
	params := openai.ChatCompletionNewParams{
		Model:    "gpt-4o-mini",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Please repeat " + secret)},
	}
	stream := tpsopenai.NewChatStream(ctx, m, client.Chat.Completions.NewStreaming, params)
	var answer strings.Builder
	for stream.Next() {
		for _, c := range stream.Current().Choices {
			answer.WriteString(c.Delta.Content)
		}
	}
	streamErr := stream.Err()
	_ = stream.Close()
	span.End()
	res, ok := stream.Result()
	if !ok {
		t.Fatal("stream has no Result")
	}
	switch mode {
	case "complete":
		if streamErr != nil || !strings.Contains(answer.String(), secret) || res.OutputTokens == 0 {
			t.Fatalf("the secret did not stream: err=%v answer=%q tokens=%d", streamErr, answer.String(), res.OutputTokens)
		}
	default:
		errText := fmt.Sprint(streamErr)
		var ae *openai.Error
		if errors.As(streamErr, &ae) {
			errText += ae.Message + ae.RawJSON()
		}
		if streamErr == nil || !strings.Contains(errText, secret) || res.ErrorType == "" {
			t.Fatalf("want an error carrying the secret: err=%v type=%q", streamErr, res.ErrorType)
		}
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	metricsText := dumpMetrics(rm)
	rw := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(rw, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	exposition := rw.Body.String()
	spansText := dumpSpans(sr.Ended())

	for name, text := range map[string]string{"metric data": metricsText, "Prometheus exposition": exposition, "spans": spansText} {
		// Each dump must have caught the request, or the check below proves nothing.
		if !strings.Contains(text, "gpt-4o-mini") {
			t.Errorf("%s does not mention the request at all:\n%s", name, text)
		}
		if strings.Contains(text, secret) {
			t.Errorf("the secret leaked into the %s:\n%s", name, text)
		}
	}
	if !strings.Contains(exposition, "gen_ai_client_operation_duration_seconds_bucket") {
		t.Errorf("exposition lacks the duration histogram:\n%s", exposition)
	}
	// The per-chunk metrics (the producer's, in that mode) were checked too.
	if mode != "http error" {
		for _, name := range []string{"tpsmeter_chunk_tokens_bucket", "tpsmeter_token_gap_seconds_bucket", "gen_ai_client_operation_time_per_output_chunk_seconds_bucket"} {
			if !strings.Contains(exposition, name) {
				t.Errorf("exposition lacks %s:\n%s", name, exposition)
			}
		}
		if !strings.Contains(metricsText, "tpsmeter.token.gap|") {
			t.Errorf("metric data lacks tpsmeter.token.gap:\n%s", metricsText)
		}
	}
}
