package reliability_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	promclient "github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/tpsmeter/tpsmeter"
	"github.com/tpsmeter/tpsmeter/bench"
	"github.com/tpsmeter/tpsmeter/tpsopenai"
	"github.com/tpsmeter/tpsmeter/tpsotel"
)

// secret marks user text: it is in every prompt, every kind of answer
// text, and the servers' error messages.
const secret = "ZQX-SECRET-51f7c2"

// secretServer answers chat and Responses requests whose prompt carries the
// secret with text that carries it too. The prompt picks the variant:
// "mode=stream-error" ends with an error event, "mode=http-error" is a 400.
// seen counts the prompts that arrived with the secret.
func secretServer(seen *atomic.Int32) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if bytes.Contains(body, []byte(secret)) {
			seen.Add(1)
		}
		mode := "ok"
		for _, m := range []string{"stream-error", "http-error", "not-found"} {
			if bytes.Contains(body, []byte("mode="+m)) {
				mode = m
			}
		}
		if mode == "not-found" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprintf(w, `{"error":{"message":"no model for your prompt %s","type":"invalid_request_error","param":null,"code":"model_not_found"}}`, secret)
			return
		}
		if mode == "http-error" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"error":{"message":"your prompt %s is not allowed","type":"invalid_request_error","param":%q,"code":%q}}`, secret, secret, secret)
			return
		}
		sseHeaders(w)
		if strings.HasSuffix(r.URL.Path, "/responses") {
			for _, ev := range []string{
				respCreated(),
				respEvent("response.reasoning_summary_text.delta", `"sequence_number":1,"item_id":"rs_1","output_index":0,"summary_index":0,"delta":"thinking about `+secret+`"`),
				respDelta("The word is " + secret + "."),
				respEvent("response.refusal.delta", `"sequence_number":3,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"I refuse `+secret+`"`),
				respEvent("response.output_item.added", `"sequence_number":4,"output_index":2,"item":{"id":"fc_1","type":"function_call","call_id":"call_1","name":"lookup","arguments":"","status":"in_progress"}`),
				respEvent("response.function_call_arguments.delta", `"sequence_number":5,"item_id":"fc_1","output_index":2,"delta":"{\"q\":\"`+secret+`\"}"`),
			} {
				_ = send(w, ev)
			}
			if mode == "stream-error" {
				_ = send(w, respEvent("error", `"sequence_number":6,"code":"`+secret+`","message":"failed on `+secret+`","param":null`))
				return
			}
			_ = send(w, respCompleted(20))
			return
		}
		for _, ev := range []string{
			chatRole,
			`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini-2024-07-18","choices":[{"index":0,"delta":{"reasoning_content":"thinking about ` + secret + `"},"finish_reason":null}]}` + "\n\n",
			chatEvent("The word is "+secret+".", ""),
			`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini-2024-07-18","choices":[{"index":1,"delta":{"refusal":"I refuse ` + secret + `"},"finish_reason":null}]}` + "\n\n",
			`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini-2024-07-18","choices":[{"index":2,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"lookup","arguments":"{\"q\":\"` + secret + `\"}"}}]},"finish_reason":null}]}` + "\n\n",
		} {
			_ = send(w, ev)
		}
		if mode == "stream-error" {
			_ = send(w, `data: {"error":{"message":"overloaded while saying `+secret+`","type":"server_error","param":null,"code":"`+secret+`"}}`+"\n\n")
			return
		}
		_ = send(w, `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini-2024-07-18","choices":[{"index":0,"delta":{},"finish_reason":"stop"},{"index":1,"delta":{},"finish_reason":"stop"},{"index":2,"delta":{},"finish_reason":"tool_calls"}]}`+"\n\n"+chatUsage(30)+chatDone)
	})
}

// captureOutput redirects the process's stdout and stderr, the standard
// logger, the default slog logger and OpenTelemetry's error handler and
// internal logger into one buffer until the returned function is called.
// Nothing may call t.Log in between.
func captureOutput(t *testing.T) (restore func() string) {
	t.Helper()
	var mu sync.Mutex
	var buf bytes.Buffer
	write := func(p []byte) {
		mu.Lock()
		buf.Write(p)
		mu.Unlock()
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		b := make([]byte, 4096)
		for {
			n, err := r.Read(b)
			write(b[:n])
			if err != nil {
				return
			}
		}
	}()
	stdout, stderr := os.Stdout, os.Stderr
	logOut, logFlags := log.Writer(), log.Flags()
	prevSlog := slog.Default()
	os.Stdout, os.Stderr = w, w
	log.SetOutput(w)
	slog.SetDefault(slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug})))
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { write([]byte("otel error: " + err.Error() + "\n")) }))
	otel.SetLogger(funcr.New(func(prefix, args string) { write([]byte("otel log: " + prefix + " " + args + "\n")) }, funcr.Options{Verbosity: 10}))
	return func() string {
		os.Stdout, os.Stderr = stdout, stderr
		log.SetOutput(logOut)
		log.SetFlags(logFlags)
		slog.SetDefault(prevSlog)
		otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { log.Print(err) }))
		_ = w.Close()
		<-copied
		_ = r.Close()
		mu.Lock()
		defer mu.Unlock()
		return buf.String()
	}
}

// dumpMetrics writes every scope, metric name, description, unit,
// attribute set and exemplar the reader holds.
func dumpMetrics(rm metricdata.ResourceMetrics) string {
	var b strings.Builder
	enc := attribute.DefaultEncoder()
	b.WriteString(rm.Resource.Encoded(enc))
	for _, sm := range rm.ScopeMetrics {
		fmt.Fprintf(&b, "\n%s %s %s", sm.Scope.Name, sm.Scope.Version, sm.Scope.Attributes.Encoded(enc))
		for _, m := range sm.Metrics {
			fmt.Fprintf(&b, "\n%s|%s|%s %+v", m.Name, m.Description, m.Unit, m.Data)
			var sets []attribute.Set
			switch d := m.Data.(type) {
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					sets = append(sets, p.Attributes)
					for _, e := range p.Exemplars {
						sets = append(sets, attribute.NewSet(e.FilteredAttributes...))
					}
				}
			case metricdata.Histogram[int64]:
				for _, p := range d.DataPoints {
					sets = append(sets, p.Attributes)
					for _, e := range p.Exemplars {
						sets = append(sets, attribute.NewSet(e.FilteredAttributes...))
					}
				}
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					sets = append(sets, p.Attributes)
				}
			case metricdata.Sum[float64]:
				for _, p := range d.DataPoints {
					sets = append(sets, p.Attributes)
				}
			case metricdata.Gauge[int64]:
				for _, p := range d.DataPoints {
					sets = append(sets, p.Attributes)
				}
			case metricdata.Gauge[float64]:
				for _, p := range d.DataPoints {
					sets = append(sets, p.Attributes)
				}
			}
			for _, s := range sets {
				fmt.Fprintf(&b, "\n  %s", s.Encoded(enc))
			}
		}
	}
	return b.String()
}

// dumpSpans writes every span's name, status, attributes, events and links.
func dumpSpans(spans []sdktrace.ReadOnlySpan) string {
	var b strings.Builder
	enc := attribute.DefaultEncoder()
	for _, s := range spans {
		attrs := attribute.NewSet(s.Attributes()...)
		fmt.Fprintf(&b, "%s %+v %s\n", s.Name(), s.Status(), attrs.Encoded(enc))
		for _, e := range s.Events() {
			ev := attribute.NewSet(e.Attributes...)
			fmt.Fprintf(&b, "  event %s %s\n", e.Name, ev.Encoded(enc))
		}
		for _, l := range s.Links() {
			la := attribute.NewSet(l.Attributes...)
			fmt.Fprintf(&b, "  link %s\n", la.Encoded(enc))
		}
	}
	return b.String()
}

// TestNoUserTextAnywhere runs chat and Responses streams whose prompts and
// answers (content, refusal, tool-call arguments, reasoning, summaries) and
// whose servers' error messages carry a secret, through the meter with
// OpenTelemetry metrics (Prometheus exposition included), tracing and
// every opt-in of package tpsotel turned on, and through a tpsbench run;
// then looks for the secret in every metric, attribute, span, log line,
// stdout and stderr, Result encoding, aggregate, hook argument and tpsbench
// output. The project has no content-capture option, so there is no opt-in
// case: the secret must never appear.
func TestNoUserTextAnywhere(t *testing.T) {
	var seen atomic.Int32
	srv := newServer(t, "h1", secretServer(&seen))

	reader := sdkmetric.NewManualReader()
	reg := promclient.NewRegistry()
	exp, err := otelprom.New(otelprom.WithRegisterer(reg))
	if err != nil {
		t.Fatal(err)
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader), sdkmetric.WithReader(exp))
	defer func() { _ = mp.Shutdown(context.Background()) }()
	sr := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
	defer func() { _ = tp.Shutdown(context.Background()) }()

	restore := captureOutput(t)
	output := ""
	defer func() {
		if output == "" {
			restore()
		}
	}()
	tel, telErr := tpsotel.New(tpsotel.WithMeterProvider(mp), tpsotel.WithTracing(true), tpsotel.WithCountedTokenUsage(true))
	var hookArgs bytes.Buffer
	var hookMu sync.Mutex
	dump := func(v any) {
		hookMu.Lock()
		defer hookMu.Unlock()
		b, err := json.Marshal(v)
		if err != nil {
			fmt.Fprintf(&hookArgs, "unencodable %T: %v\n", v, err)
		}
		hookArgs.Write(b)
		fmt.Fprintf(&hookArgs, "\n%+v\n", v)
	}
	m := tpsmeter.New(tpsmeter.WithHooks(tel.Hooks()), tpsmeter.WithHooks(tpsmeter.Hooks{
		// Context fields are the caller's own context, handed back: not telemetry.
		FirstToken: func(i tpsmeter.FirstTokenInfo) { i.Context = nil; dump(i) },
		Chunk:      func(i tpsmeter.ChunkInfo) { i.Context = nil; dump(i) },
		StallStart: func(i tpsmeter.StallInfo) { i.Context = nil; dump(i) },
		Finish: func(i tpsmeter.FinishInfo) {
			i.Context = nil
			i.Result.Err = nil // the stream's own error, handed back to the caller unchanged: not telemetry
			dump(i)
		},
	}))
	client := newClient(srv, option.WithMiddleware(m.Middleware))

	var streamed strings.Builder // what the callers received: must contain the secret
	var results []tpsmeter.Result
	for _, mode := range []string{"ok", "stream-error", "http-error"} {
		prompt := "Repeat " + secret + " mode=" + mode
		ctx, span := tp.Tracer("caller").Start(context.Background(), "llm request")
		cp := chatParams(prompt)
		cp.Messages = append([]openai.ChatCompletionMessageParamUnion{openai.SystemMessage("system " + secret)}, cp.Messages...)
		cs := tpsopenai.NewChatStream(ctx, m, client.Chat.Completions.NewStreaming, cp)
		for cs.Next() {
			c := cs.Current()
			for _, ch := range c.Choices {
				streamed.WriteString(ch.Delta.Content + ch.Delta.Refusal)
			}
		}
		streamed.WriteString(fmt.Sprint(cs.Err()))
		r, _ := cs.Result()
		results = append(results, r)
		rs := tpsopenai.NewResponseStream(ctx, m, client.Responses.NewStreaming, responsesParams(prompt))
		for rs.Next() {
			streamed.WriteString(rs.Current().Delta)
		}
		r, _ = rs.Result()
		results = append(results, r)
		span.End()
	}

	// A tpsbench run with the secret in its prompts.
	dir := t.TempDir()
	var csvBuf bytes.Buffer
	csvw := bench.NewCSVWriter(&csvBuf)
	wl := bench.Workload{Name: "secret prompts", Prompts: []bench.Prompt{
		{ID: "p1", Prompt: "Repeat " + secret, System: "system " + secret, Class: "easy"},
		{ID: "p2", Prompt: "Again " + secret + " mode=stream-error", Class: "hard"},
	}}
	res, benchErr := bench.Run(context.Background(), bench.Config{
		Targets: []bench.Target{
			{Name: "chat", BaseURL: srv.URL, Model: model, APIKey: "k-" + secret},
			{Name: "responses", BaseURL: srv.URL, Model: model, APIKey: "k-" + secret, API: bench.APIResponses},
		},
		Workload: wl, Requests: 6, Concurrency: 2, Warmup: 1, Seed: 1,
		OnRecord:   func(r bench.Record) { _ = csvw.Write(r) },
		HTTPClient: srv.Client(),
	})
	var files = map[string]string{}
	if benchErr == nil {
		_ = csvw.Flush()
		files["tpsbench CSV"] = csvBuf.String()
		path := filepath.Join(dir, "results.json")
		if err := res.Save(path); err != nil {
			benchErr = err
		} else if b, err := os.ReadFile(path); err == nil {
			files["tpsbench results file"] = string(b)
		}
		var html, table bytes.Buffer
		if err := bench.WriteHTML(&html, res); err != nil {
			benchErr = errors.Join(benchErr, err)
		}
		if err := bench.WriteTable(&table, res); err != nil {
			benchErr = errors.Join(benchErr, err)
		}
		files["tpsbench HTML report"] = html.String()
		files["tpsbench tables"] = table.String()
	}
	// A run that a 404 aborts: the results file names why.
	abortRes, abortErr := bench.Run(context.Background(), bench.Config{
		Targets:  []bench.Target{{Name: "gone", BaseURL: srv.URL, Model: model, APIKey: "k"}},
		Workload: bench.Workload{Name: "w", Prompts: []bench.Prompt{{Prompt: "Repeat " + secret + " mode=not-found"}}},
		Requests: 2, Concurrency: 1, Seed: 1, HTTPClient: srv.Client(),
	})
	if abortRes != nil {
		var b bytes.Buffer
		_ = abortRes.WriteJSON(&b)
		files["tpsbench results file of an aborted run"] = b.String()
	}
	// Controls: each capture works.
	log.Print("capture-check log")
	slog.Info("capture-check slog")
	otel.Handle(errors.New("capture-check otel"))
	fmt.Fprintln(os.Stdout, "capture-check stdout")
	fmt.Fprintln(os.Stderr, "capture-check stderr")
	time.Sleep(10 * time.Millisecond)
	output = restore()
	for _, c := range []string{"log", "slog", "otel", "stdout", "stderr"} {
		if !strings.Contains(output, "capture-check "+c) {
			t.Errorf("the %s capture does not work: %q", c, output)
		}
	}

	if telErr != nil {
		t.Fatalf("tpsotel.New: %v", telErr)
	}
	if benchErr != nil {
		t.Fatalf("tpsbench run: %v", benchErr)
	}
	if abortRes == nil || !errors.Is(abortErr, bench.ErrNotFound) {
		t.Errorf("tpsbench run against a 404: %v, want ErrNotFound and partial results", abortErr)
	}
	// The secret really went through: to the server, and back to the callers.
	if seen.Load() < 6+8 || !strings.Contains(streamed.String(), secret) {
		t.Fatalf("the secret did not travel: %d prompts with it reached the server, callers saw it: %v", seen.Load(), strings.Contains(streamed.String(), secret))
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	rw := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(rw, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	resultsJSON, _ := json.Marshal(results)
	snap, _ := json.Marshal(m.Snapshot())
	checked := map[string]string{
		"OpenTelemetry metric data": dumpMetrics(rm),
		"Prometheus exposition":     rw.Body.String(),
		"spans":                     dumpSpans(sr.Ended()),
		"Result JSON":               string(resultsJSON),
		"Meter.Snapshot JSON":       string(snap),
		"Meter.Snapshot %+v":        fmt.Sprintf("%+v", m.Snapshot()),
		"hook arguments":            hookArgs.String(),
		"logs, stdout and stderr":   output,
	}
	for k, v := range files {
		checked[k] = v
	}
	// Each place must have seen the requests (its control string), or
	// finding no secret there proves nothing.
	controls := map[string]string{
		"OpenTelemetry metric data": model, "Prometheus exposition": model, "spans": model,
		"Result JSON": model, "Meter.Snapshot JSON": model, "Meter.Snapshot %+v": model, "hook arguments": model,
		"logs, stdout and stderr": "capture-check", "tpsbench results file": model, "tpsbench CSV": "p1",
		"tpsbench HTML report": model, "tpsbench tables": "responses", "tpsbench results file of an aborted run": `"aborted"`,
	}
	for name, text := range checked {
		t.Run(name, func(t *testing.T) {
			if c := controls[name]; !strings.Contains(text, c) {
				t.Errorf("%s does not contain %q: it did not see the requests, so the check proves nothing", name, c)
			}
			if i := strings.Index(text, secret); i >= 0 {
				t.Errorf("%s contains the secret: ...%s...", name, text[max(0, i-200):min(len(text), i+100)])
			}
		})
	}
	if len(checked) != len(controls) {
		t.Errorf("checked %d places, want %d", len(checked), len(controls))
	}
	for _, r := range results {
		if r.Model != model {
			t.Errorf("Result of model %q", r.Model)
		}
	}
}
