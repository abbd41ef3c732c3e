//go:build linux

package llmsim_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/tpsmeter/tpsmeter/llmsim"
)

// clientTrace is what one client saw: when it sent the request and when each
// content chunk arrived.
type clientTrace struct {
	id       string
	sent     time.Time
	wrote    time.Time // the request was written to the connection (httptrace WroteRequest)
	arrivals []time.Time
}

// traceWrites returns ctx with an httptrace.ClientTrace that stamps
// tr.wrote when the client has written the whole request.
func traceWrites(ctx context.Context, tr *clientTrace) context.Context {
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { tr.wrote = time.Now() }})
}

// BenchmarkFidelity measures how closely a client on loopback (the real
// openai-go client, in the same process) sees the server's schedule, at 1, 100
// and 1000 concurrent streams. Each iteration runs one batch of concurrent
// streams (at 1 stream: one stream). Metrics:
//
//	gap-err-p50/p99/max-µs  |client gap - scheduled gap| between consecutive content chunks
//	ttft-err-p50/p99-µs     client TTFT - scheduled TTFT (includes building and sending the request)
//	ttft-wire-err-p50/p99-µs  the same from the moment the client had written
//	                        the request (httptrace WroteRequest): what the
//	                        simulator adds, without the client's own cost of
//	                        building the request
//	late-p50/p99/max-µs     the server's own lateness (flush time - scheduled time)
//	cores                   CPU time of the process (server + client) / wall time
//
// Run: go test ./llmsim -run '^$' -bench Fidelity -benchtime 3x
//
// client=openai uses openai-go (its JSON decoding costs about twice the
// server's CPU per event); client=raw reads the SSE lines with bufio and only
// finds the id and the content deltas, to show what the server itself does
// when the client is cheap.
func BenchmarkFidelity(b *testing.B) {
	for _, kind := range []string{"openai", "raw"} {
		for _, streams := range []int{1, 100, 1000} {
			b.Run(fmt.Sprintf("client=%s/streams=%d", kind, streams), func(b *testing.B) {
				benchFidelity(b, streams, kind == "raw")
			})
		}
	}
}

// rawStream reads one chat stream with a minimal client.
func rawStream(ctx context.Context, hc *http.Client, url string, body []byte) (clientTrace, error) {
	tr := clientTrace{sent: time.Now()}
	ctx = traceWrites(ctx, &tr)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/chat/completions", bytes.NewReader(body))
	if err != nil {
		return tr, err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := hc.Do(req)
	if err != nil {
		return tr, err
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		return tr, fmt.Errorf("status %d", res.StatusCode)
	}
	br := bufio.NewReader(res.Body)
	content := []byte(`"delta":{"content":"`)
	for {
		line, err := br.ReadSlice('\n')
		if bytes.Contains(line, content) {
			tr.arrivals = append(tr.arrivals, time.Now())
			if tr.id == "" {
				rest := line[bytes.Index(line, []byte(`"id":"`))+6:]
				tr.id = string(rest[:bytes.IndexByte(rest, '"')])
			}
		}
		if err == io.EOF {
			return tr, nil
		}
		if err != nil {
			return tr, err
		}
	}
}

func benchFidelity(b *testing.B, streams int, raw bool) {
	profile := llmsim.Profile{Name: "fidelity", TTFTMedian: 50 * time.Millisecond, TTFTSpread: 0.2,
		TokensPerSecond: 50, Jitter: 0.3, OutputTokens: llmsim.Lengths{Median: 25, Min: 25, Max: 25}}
	var mu sync.Mutex
	reps := map[string]llmsim.StreamReport{}
	srv, err := llmsim.Start(llmsim.Config{Profile: profile, OnStream: func(r llmsim.StreamReport) {
		mu.Lock()
		reps[r.ID] = r
		mu.Unlock()
	}})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	tr := &http.Transport{MaxIdleConnsPerHost: streams, MaxIdleConns: streams}
	defer tr.CloseIdleConnections()
	client := openai.NewClient(clientOpts(srv, tr)...)
	params := openai.ChatCompletionNewParams{Model: "gpt-4o-mini", Messages: userMsg("Benchmark."),
		Metadata: shared.Metadata{llmsim.ExtOutputTokens: "25"}}

	hc := &http.Client{Transport: tr}
	rawBody := []byte(`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Benchmark."}],"stream":true,"metadata":{"llmsim_output_tokens":"25"}}`)
	one := func(ctx context.Context) (clientTrace, error) {
		if raw {
			return rawStream(ctx, hc, srv.URL(), rawBody)
		}
		tr := clientTrace{sent: time.Now()}
		s := client.Chat.Completions.NewStreaming(traceWrites(ctx, &tr), params)
		for s.Next() {
			ch := s.Current()
			if len(ch.Choices) > 0 && ch.Choices[0].Delta.Content != "" {
				tr.arrivals = append(tr.arrivals, time.Now())
				tr.id = ch.ID
			}
		}
		return tr, s.Err()
	}
	// warm up the connections and the code paths
	var wg sync.WaitGroup
	for range streams {
		wg.Go(func() { _, _ = one(context.Background()) })
	}
	wg.Wait()
	srv.ResetLateness()
	mu.Lock()
	clear(reps)
	mu.Unlock()

	var traces []clientTrace
	var tmu sync.Mutex
	var failed int
	cpu0, wall0 := cpuTime(), time.Now()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		var wg sync.WaitGroup
		for range streams {
			wg.Go(func() {
				t, err := one(context.Background())
				tmu.Lock()
				defer tmu.Unlock()
				if err != nil {
					failed++
					return
				}
				traces = append(traces, t)
			})
		}
		wg.Wait()
	}
	b.StopTimer()
	cores := float64(cpuTime()-cpu0) / float64(time.Since(wall0))
	if failed > 0 {
		b.Fatalf("%d streams failed", failed)
	}
	// OnStream runs after the last byte: wait for the stragglers
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		n := len(reps)
		mu.Unlock()
		if n >= len(traces) || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	var gapErr, ttftErr, wireErr []time.Duration
	for _, t := range traces {
		mu.Lock()
		r, ok := reps[t.id]
		mu.Unlock()
		if !ok || len(r.Scheduled) != len(t.arrivals) {
			b.Fatalf("stream %s: report %v with %d steps, client saw %d chunks", t.id, ok, len(r.Scheduled), len(t.arrivals))
		}
		ttftErr = append(ttftErr, t.arrivals[0].Sub(t.sent)-r.Scheduled[0])
		if t.wrote.IsZero() {
			b.Fatalf("stream %s: the request's write was not traced", t.id)
		}
		wireErr = append(wireErr, t.arrivals[0].Sub(t.wrote)-r.Scheduled[0])
		for i := 1; i < len(t.arrivals); i++ {
			d := t.arrivals[i].Sub(t.arrivals[i-1]) - (r.Scheduled[i] - r.Scheduled[i-1])
			gapErr = append(gapErr, max(d, -d))
		}
	}
	q := func(v []time.Duration, p float64) float64 {
		s := slices.Clone(v)
		slices.Sort(s)
		return float64(s[int(p*float64(len(s)-1))]) / 1e3
	}
	b.ReportMetric(q(gapErr, 0.5), "gap-err-p50-µs")
	b.ReportMetric(q(gapErr, 0.99), "gap-err-p99-µs")
	b.ReportMetric(q(gapErr, 1), "gap-err-max-µs")
	b.ReportMetric(q(ttftErr, 0.5), "ttft-err-p50-µs")
	b.ReportMetric(q(ttftErr, 0.99), "ttft-err-p99-µs")
	b.ReportMetric(q(wireErr, 0.5), "ttft-wire-err-p50-µs")
	b.ReportMetric(q(wireErr, 0.99), "ttft-wire-err-p99-µs")
	b.ReportMetric(q(wireErr, 1), "ttft-wire-err-max-µs")
	l := srv.Lateness()
	b.ReportMetric(float64(l.P50)/1e3, "late-p50-µs")
	b.ReportMetric(float64(l.P99)/1e3, "late-p99-µs")
	b.ReportMetric(float64(l.Max)/1e3, "late-max-µs")
	b.ReportMetric(float64(len(gapErr)), "gaps")
	b.ReportMetric(cores, "cores")
}

// cpuTime is the user + system CPU time of the process.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
