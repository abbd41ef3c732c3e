package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// scrape fetches the app's /metrics text.
func scrape(t *testing.T, addr string) string {
	t.Helper()
	res, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("scrape: status %d, %v", res.StatusCode, err)
	}
	return string(b)
}

// sumSamples adds the values of every sample of the named series in a
// Prometheus text exposition.
func sumSamples(exposition, name string) (float64, int) {
	var sum float64
	n := 0
	sc := bufio.NewScanner(strings.NewReader(exposition))
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err == nil {
			sum += v
			n++
		}
	}
	return sum, n
}

// appModes are the example's two ways of recording the per-chunk
// histograms, which every test runs.
var appModes = []struct {
	name        string
	lowOverhead bool
}{{"sdk", false}, {"producer", true}}

// TestSmoke runs the example app with a few streams, in both modes, and
// reads its /metrics as Prometheus would: every documented series is there,
// with the right counts. It needs no Prometheus server, so it always runs.
func TestSmoke(t *testing.T) {
	for _, mode := range appModes {
		t.Run(mode.name, func(t *testing.T) { smoke(t, mode.lowOverhead) })
	}
}

func smoke(t *testing.T, lowOverhead bool) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	a, err := newApp("127.0.0.1:0", lowOverhead)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	const streams = 12
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := a.Run(ctx, streams, 4); err != nil {
		t.Fatalf("Run: %v", err)
	}
	text := scrape(t, a.MetricsAddr)
	gaps := float64(streams * (len(answerWords) - 1))
	for _, c := range []struct {
		series string
		want   float64
	}{
		{"gen_ai_client_operation_duration_seconds_count", streams},
		{"gen_ai_client_operation_time_to_first_chunk_seconds_count", streams},
		{"gen_ai_client_operation_time_per_output_chunk_seconds_count", gaps},
		{"gen_ai_client_token_usage_count", 2 * streams}, // input and output
		{"tpsmeter_time_to_first_token_seconds_count", streams},
		{"tpsmeter_decode_rate_per_second_count", streams},
		{"tpsmeter_perceived_rate_per_second_count", streams},
		{"tpsmeter_stalls_count", streams},
		{"tpsmeter_stall_duration_seconds_count", streams},
		{"tpsmeter_usage_difference_count", streams},
		{"tpsmeter_token_gap_seconds_count", -1}, // one per token after the first chunk: depends on the tokenizer
		{"tpsmeter_chunk_tokens_count", float64(streams * len(answerWords))},
	} {
		got, n := sumSamples(text, c.series)
		if n == 0 {
			t.Errorf("series %s missing from /metrics", c.series)
			continue
		}
		if c.want >= 0 && got != c.want {
			t.Errorf("%s = %v, want %v", c.series, got, c.want)
		}
	}
	if !strings.Contains(text, `gen_ai_request_model="gpt-4o-mini"`) || !strings.Contains(text, `gen_ai_response_model="`+upstreamModel+`"`) {
		t.Errorf("model labels missing:\n%s", text)
	}
	// The per-chunk series carry the same scope labels in both modes.
	for _, series := range []string{"gen_ai_client_operation_time_per_output_chunk_seconds_count{", "tpsmeter_token_gap_seconds_count{", "tpsmeter_chunk_tokens_count{"} {
		if !strings.Contains(text, series+`gen_ai_operation_name="chat",gen_ai_provider_name="openai",gen_ai_request_model="gpt-4o-mini",otel_scope_name="github.com/tpsmeter/tpsmeter/tpsotel",otel_scope_schema_url="https://opentelemetry.io/schemas/1.41.0",otel_scope_version="0.1.0",server_address="127.0.0.1"`) {
			t.Errorf("%s lacks the request's and the scope's labels:\n%s", series, text)
		}
	}
	snap := a.Meter.Snapshot()
	if len(snap) != 1 || snap[0].Requests != streams || snap[0].Partial != 0 {
		t.Fatalf("meter snapshot %+v, want %d complete requests in one group", snap, streams)
	}
}
