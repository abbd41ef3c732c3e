package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// The end-to-end test of package tpsotel: this example app exports with the
// OTel Prometheus exporter, in both modes at once (two apps: per-chunk
// histograms through the SDK's instruments, and through a
// tpsotel.ChunkProducer registered on the exporter), a real Prometheus
// server (Debian's prometheus package, installed by .ci/run) scrapes both
// every second while a few hundred metered streams run in each, and for
// each app PromQL histogram_quantile(0.95, ...) of TTFT, time to first
// chunk, time per output chunk and per-token gap must agree with the
// meter's own P95 within one bucket.

// e2eStreams is the number of streams metered under Prometheus.
const e2eStreams = 300

// prometheusBinary finds the prometheus server. Missing, it fails the test
// in CI (CI set) and skips it elsewhere, saying why.
func prometheusBinary(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("prometheus"); err == nil {
		return p
	}
	if _, err := os.Stat("/usr/bin/prometheus"); err == nil {
		return "/usr/bin/prometheus"
	}
	msg := "the prometheus server is not installed (apt-get install -y --no-install-recommends prometheus; .ci/run does it)"
	if os.Getenv("CI") != "" {
		t.Fatalf("CI: %s", msg)
	}
	t.Skip(msg)
	return ""
}

// freeAddr returns a 127.0.0.1 address with a port that was free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

// lockedBuffer collects a child process's output safely.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startPrometheus runs a Prometheus server on 127.0.0.1 that scrapes every
// target (job name to host:port) every second, with its storage in a
// temporary directory, and stops it when the test ends. It returns the
// server's base URL.
func startPrometheus(t *testing.T, bin string, targets map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	cfg := `global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
`
	jobs := make([]string, 0, len(targets))
	for job := range targets {
		jobs = append(jobs, job)
	}
	sort.Strings(jobs)
	for _, job := range jobs {
		cfg += fmt.Sprintf(`  - job_name: %q
    scrape_interval: 1s
    scrape_timeout: 900ms
    static_configs:
      - targets: [%q]
`, job, targets[job])
	}
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	out := &lockedBuffer{}
	cmd := exec.Command(bin,
		"--config.file="+cfgPath,
		"--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr,
	)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("prometheus output:\n%s", out.String())
		}
	})
	base := "http://" + addr
	deadline := time.Now().Add(20 * time.Second)
	for {
		res, err := http.Get(base + "/-/ready")
		if err == nil {
			_ = res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return base
			}
		}
		select {
		case <-done:
			t.Fatalf("prometheus exited before it was ready:\n%s", out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus not ready after 20 s (last error %v):\n%s", err, out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// promSample is one element of an instant query's vector result.
type promSample struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"`
}

func (s promSample) float(t *testing.T) float64 {
	t.Helper()
	str, _ := s.Value[1].(string)
	v, err := strconv.ParseFloat(str, 64)
	if err != nil {
		t.Fatalf("sample value %v: %v", s.Value, err)
	}
	return v
}

// query runs an instant PromQL query and returns its vector.
func query(t *testing.T, base, q string) []promSample {
	t.Helper()
	res, err := http.Get(base + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		t.Fatalf("query %s: %v", q, err)
	}
	defer res.Body.Close()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string       `json:"resultType"`
			Result     []promSample `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
		t.Fatalf("query %s: decoding: %v", q, err)
	}
	if body.Status != "success" || body.Data.ResultType != "vector" {
		t.Fatalf("query %s: status %s, type %s, error %s", q, body.Status, body.Data.ResultType, body.Error)
	}
	return body.Data.Result
}

// scalar runs a query expected to return exactly one sample.
func scalar(t *testing.T, base, q string) float64 {
	t.Helper()
	r := query(t, base, q)
	if len(r) != 1 {
		t.Fatalf("query %s: %d samples, want 1: %+v", q, len(r), r)
	}
	return r[0].float(t)
}

// bounds returns the histogram's le boundaries, as Prometheus stored them.
func bounds(t *testing.T, base, bucketSeries string) []float64 {
	t.Helper()
	var out []float64
	for _, s := range query(t, base, "count by (le) ("+bucketSeries+")") {
		le, err := strconv.ParseFloat(s.Metric["le"], 64)
		if err != nil {
			t.Fatalf("le %q: %v", s.Metric["le"], err)
		}
		if !math.IsInf(le, 1) {
			out = append(out, le)
		}
	}
	sort.Float64s(out)
	if len(out) < 5 {
		t.Fatalf("%s has only %d finite buckets in Prometheus", bucketSeries, len(out))
	}
	return out
}

// bucketIndex is the index of the bucket (b[i-1], b[i]] holding v.
func bucketIndex(b []float64, v float64) int {
	return sort.SearchFloat64s(b, v) // first i with b[i] >= v
}

// waitFor polls an instant query until it returns one sample equal to want.
func waitFor(t *testing.T, base, q string, want float64, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		r := query(t, base, q)
		if len(r) == 1 && r[0].float(t) == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s = %+v after %v, want %v", q, r, within, want)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func TestPrometheusEndToEnd(t *testing.T) {
	bin := prometheusBinary(t)
	leaks := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, leaks) }) // last: after Prometheus and the apps are stopped

	apps := map[string]*app{}
	targets := map[string]string{}
	for _, mode := range appModes {
		a, err := newApp("127.0.0.1:0", mode.lowOverhead)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(a.Close)
		job := "tpsmeter-example-" + mode.name
		apps[job], targets[job] = a, a.MetricsAddr
	}
	base := startPrometheus(t, bin, targets)
	// Prometheus applies discovered targets a few seconds after start:
	// wait for its first successful scrape of each, so that it scrapes
	// while the streams run.
	for job := range targets {
		waitFor(t, base, `up{job="`+job+`"}`, 1, 20*time.Second)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	start := time.Now()
	errs := make(chan error, len(apps))
	for _, a := range apps {
		go func() { errs <- a.Run(ctx, e2eStreams, 24) }()
	}
	for range apps {
		if err := <-errs; err != nil {
			t.Fatalf("streams: %v", err)
		}
	}
	t.Logf("%d streams in each of %d apps in %v", e2eStreams, len(apps), time.Since(start).Round(time.Millisecond))

	for _, mode := range appModes {
		job := "tpsmeter-example-" + mode.name
		t.Run(mode.name, func(t *testing.T) { checkScraped(t, base, job, apps[job]) })
	}
}

// checkScraped compares what Prometheus scraped from one app with the
// app's meter.
func checkScraped(t *testing.T, base, job string, a *app) {
	sel := `{job="` + job + `"}`
	gaps := float64(e2eStreams * (len(answerWords) - 1))
	// Wait until a scrape after the last stream has landed: the count of
	// TTFT observations (recorded at the end of a request) equals the
	// streams run, and the count of chunk gaps (per chunk: the
	// ChunkProducer's in producer mode) every gap of them.
	waitFor(t, base, "sum(tpsmeter_time_to_first_token_seconds_count"+sel+")", e2eStreams, 20*time.Second)
	waitFor(t, base, "sum(gen_ai_client_operation_time_per_output_chunk_seconds_count"+sel+")", gaps, 20*time.Second)
	waitFor(t, base, "sum(tpsmeter_chunk_tokens_count"+sel+")", float64(e2eStreams*len(answerWords)), 20*time.Second)
	// Scraped while the streams ran: the series have several samples.
	for _, series := range []string{"tpsmeter_time_to_first_token_seconds_count", "gen_ai_client_operation_time_per_output_chunk_seconds_count"} {
		if n := scalar(t, base, "count_over_time("+series+sel+"[1m])"); n < 2 {
			t.Fatalf("Prometheus holds %v samples of %s, want at least 2 (scrapes during the run)", n, series)
		}
	}
	// The per-chunk series come under tpsotel's scope, as the SDK's do.
	if n := scalar(t, base, `count(tpsmeter_token_gap_seconds_count{job="`+job+`",otel_scope_name="github.com/tpsmeter/tpsmeter/tpsotel",otel_scope_version="0.1.0"})`); n != 1 {
		t.Errorf("%v token-gap series under tpsotel's scope, want 1", n)
	}

	snap := a.Meter.Snapshot()
	if len(snap) != 1 || snap[0].Requests != e2eStreams || snap[0].TTFT.Count != e2eStreams {
		t.Fatalf("meter snapshot %+v, want one group of %d requests with TTFT", snap, e2eStreams)
	}
	if snap[0].ChunkGap.Count != int64(gaps) {
		t.Fatalf("meter counted %d chunk gaps, Prometheus %v", snap[0].ChunkGap.Count, gaps)
	}
	for _, c := range []struct {
		name, series string
		meterP95     float64
	}{
		{"TTFT (first visible output)", "tpsmeter_time_to_first_token_seconds_bucket", snap[0].TTFT.P95},
		{"time to first chunk (GenAI semconv)", "gen_ai_client_operation_time_to_first_chunk_seconds_bucket", snap[0].TimeToFirstChunk.P95},
		{"time per output chunk (GenAI semconv, per chunk)", "gen_ai_client_operation_time_per_output_chunk_seconds_bucket", snap[0].ChunkGap.P95},
		{"per-token gap (per chunk)", "tpsmeter_token_gap_seconds_bucket", snap[0].TokenGap.P95},
	} {
		t.Run(c.name, func(t *testing.T) {
			q := "histogram_quantile(0.95, sum by (le) (" + c.series + sel + "))"
			got := scalar(t, base, q)
			b := bounds(t, base, c.series+sel)
			gi, mi := bucketIndex(b, got), bucketIndex(b, c.meterP95)
			t.Logf("%s = %.4f s (bucket %d); meter P95 = %.4f s (bucket %d); bounds %v", q, got, gi, c.meterP95, mi, b)
			if gi-mi > 1 || mi-gi > 1 {
				t.Errorf("Prometheus P95 %.4f s and the meter's P95 %.4f s are more than one bucket apart", got, c.meterP95)
			}
		})
	}

	// The docs' per-model queries work on the scraped series.
	for _, q := range []string{
		`histogram_quantile(0.95, sum by (le, gen_ai_request_model) (rate(tpsmeter_time_to_first_token_seconds_bucket` + sel + `[1m])))`,
		`histogram_quantile(0.5, sum by (le, gen_ai_request_model) (rate(tpsmeter_decode_rate_per_second_bucket` + sel + `[1m])))`,
		`histogram_quantile(0.99, sum by (le, gen_ai_request_model) (rate(tpsmeter_token_gap_seconds_bucket` + sel + `[1m])))`,
	} {
		r := query(t, base, q)
		if len(r) != 1 || r[0].Metric["gen_ai_request_model"] != "gpt-4o-mini" {
			t.Errorf("%s: %+v, want one sample for gpt-4o-mini", q, r)
			continue
		}
		if v := r[0].float(t); math.IsNaN(v) || v <= 0 {
			t.Errorf("%s = %v, want a positive number", q, v)
		}
	}
}
