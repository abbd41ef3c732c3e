package reliability_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"go.uber.org/goleak"

	"github.com/tpsmeter/tpsmeter"
	"github.com/tpsmeter/tpsmeter/llmsim"
)

// simTruth collects the simulator's report of every stream it answered.
type simTruth struct {
	mu      sync.Mutex
	reports []llmsim.StreamReport
}

func (s *simTruth) add(r llmsim.StreamReport) {
	s.mu.Lock()
	s.reports = append(s.reports, r)
	s.mu.Unlock()
}

func (s *simTruth) all() []llmsim.StreamReport {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]llmsim.StreamReport(nil), s.reports...)
}

// simServer serves the simulator over proto: h1 with llmsim.Start (its own
// net/http server), h2 mounted in an HTTP/2 httptest server. It returns the
// API base URL and the HTTP client to use.
func simServer(t *testing.T, proto string, truth *simTruth) (base string, hc *http.Client, stop func()) {
	t.Helper()
	cfg := llmsim.Config{Seed: 7, Profile: llmsim.Profile{OutputTokens: llmsim.Lengths{Median: 40}}, OnStream: truth.add}
	if proto == "h1" {
		sim, err := llmsim.Start(cfg)
		if err != nil {
			t.Fatalf("llmsim.Start: %v", err)
		}
		tr := &http.Transport{}
		return sim.URL(), &http.Client{Transport: tr}, func() {
			tr.CloseIdleConnections()
			if err := sim.Close(); err != nil {
				t.Errorf("llmsim Close: %v", err)
			}
		}
	}
	sim := llmsim.New(cfg)
	srv := httptest.NewUnstartedServer(sim)
	srv.EnableHTTP2 = true
	srv.StartTLS()
	return srv.URL + "/v1", srv.Client(), func() {
		srv.Close()
		_ = sim.Close()
	}
}

// TestSimulatorFaults injects the simulator's own faults (request extension
// X-Llmsim-Fault) into chat streams read by the real openai-go client over
// HTTP/1.1 and HTTP/2, unmetered and metered, and compares both with the
// simulator's report of what it sent.
func TestSimulatorFaults(t *testing.T) {
	tests := []struct {
		fault string
		// firstOnly injects the fault into the first attempt only, and
		// lets openai-go retry once.
		firstOnly bool
		wantType  func(proto string) string
		attempts  int
	}{
		{fault: "none", wantType: func(string) string { return "" }, attempts: 1},
		{fault: "midstream_error", wantType: func(string) string { return "stream_error" }, attempts: 1},
		{fault: "drop", wantType: func(proto string) string {
			if proto == "h2" {
				return tpsmeter.ErrorTypeOther // RST_STREAM
			}
			return tpsmeter.ErrorTypeTruncated
		}, attempts: 1},
		{fault: "error_500", wantType: func(string) string { return "500" }, attempts: 1},
		{fault: "rate_limit", wantType: func(string) string { return "429" }, attempts: 1},
		{fault: "error_500", firstOnly: true, wantType: func(string) string { return "" }, attempts: 2},
	}
	for _, proto := range []string{"h1", "h2"} {
		for _, tc := range tests {
			name := proto + "/" + tc.fault
			if tc.firstOnly {
				name += "-then-ok"
			}
			t.Run(name, func(t *testing.T) {
				ign := goleak.IgnoreCurrent()
				// faultOpts sets the fault (on every attempt, or on the
				// first one only) and the answer's length.
				faultOpts := func() []option.RequestOption {
					var n atomic.Int32
					opts := []option.RequestOption{option.WithHeader("X-Llmsim-Output-Tokens", "40")}
					if tc.firstOnly {
						return append(opts, option.WithMaxRetries(1), option.WithMiddleware(func(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
							if n.Add(1) == 1 {
								r.Header.Set("X-Llmsim-Fault", tc.fault)
								res, err := next(r)
								if res != nil {
									res.Header.Set("Retry-After-Ms", "1") // retry at once
								}
								return res, err
							}
							return next(r)
						}))
					}
					return append(opts, option.WithHeader("X-Llmsim-Fault", tc.fault))
				}
				// Unmetered.
				var plainTruth simTruth
				base, hc, stop := simServer(t, proto, &plainTruth)
				client := openai.NewClient(append([]option.RequestOption{option.WithBaseURL(base), option.WithAPIKey("k"),
					option.WithMaxRetries(0), option.WithHTTPClient(hc)}, faultOpts()...)...)
				ps := client.Chat.Completions.NewStreaming(context.Background(), chatParams("hi"))
				plainTexts := readStream[openai.ChatCompletionChunk](ps, chatText, readAll, func() {})
				plainErr := ps.Err()
				stop()

				// Metered.
				var truth simTruth
				base, hc, stop = simServer(t, proto, &truth)
				log := newFinishLog()
				m := tpsmeter.New(tpsmeter.WithHooks(tpsmeter.Hooks{Finish: log.hook}))
				client = openai.NewClient(append([]option.RequestOption{option.WithBaseURL(base), option.WithAPIKey("k"),
					option.WithMaxRetries(0), option.WithHTTPClient(hc), option.WithMiddleware(m.Middleware)}, faultOpts()...)...)
				var inner *ssestream.Stream[openai.ChatCompletionChunk]
				s := chatAPI.metered(context.Background(), m, client, &inner)
				texts := readStream[openai.ChatCompletionChunk](s, chatText, readAll, func() {})
				err := s.Err()
				res, ok := s.Result()
				stop()

				if err != inner.Err() {
					t.Errorf("metered Err() = %v, want the inner stream's own %v", err, inner.Err())
				}
				if errShape(err) != errShape(plainErr) {
					t.Errorf("stream error differs from the unmetered run:\n metered:   %s\n unmetered: %s", errShape(err), errShape(plainErr))
				}
				if strings.Join(texts, "|") != strings.Join(plainTexts, "|") {
					t.Errorf("texts differ from the unmetered run: %d vs %d chunks", len(texts), len(plainTexts))
				}
				if !ok {
					t.Fatal("no Result")
				}
				want := tc.wantType(proto)
				if res.ErrorType != want || res.Partial() != (want != "") {
					t.Errorf("Result: status %q, ErrorType %q (err %v), want %q", res.Status, res.ErrorType, res.Err, want)
				}
				if want != "" && want != tpsmeter.ErrorTypeTruncated && res.Err != err {
					t.Errorf("Result.Err = %v, want the stream's own error %v", res.Err, err)
				}
				if want == tpsmeter.ErrorTypeTruncated && !errors.Is(res.Err, err) {
					t.Errorf("Result.Err = %v, want %v", res.Err, err)
				}
				if res.Attempts != tc.attempts {
					t.Errorf("Attempts = %d, want %d", res.Attempts, tc.attempts)
				}
				// The truth: what the simulator sent is what was counted.
				sent := 0
				reports := truth.all()
				for _, r := range reports {
					for _, k := range r.Tokens {
						sent += k
					}
				}
				if res.OutputTokens != sent || res.OutputTokens != count(t, strings.Join(texts, "")) {
					t.Errorf("OutputTokens = %d; the simulator sent %d (reports %d), tiktoken counts %d",
						res.OutputTokens, sent, len(reports), count(t, strings.Join(texts, "")))
				}
				if want == "" && (len(reports) != 1 || res.OutputTokens != reports[0].CompletionTokens || res.UsageDiff != 0) {
					t.Errorf("complete stream: %d tokens, usage diff %d, reports %+v", res.OutputTokens, res.UsageDiff, reports)
				}
				if n := len(log.all()); n != 1 {
					t.Errorf("Finish called %d times, want 1", n)
				}
				stillServes(t, m)
				goleak.VerifyNone(t, ign)
			})
		}
	}
}
