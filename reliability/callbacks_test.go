package reliability_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/tpsmeter/tpsmeter"
	"github.com/tpsmeter/tpsmeter/internal/shareddata"
	"github.com/tpsmeter/tpsmeter/llmsim"
	"github.com/tpsmeter/tpsmeter/tpsmetertest"
	"github.com/tpsmeter/tpsmeter/tpsopenai"
)

// clockedStream advances a fake clock before each chunk of an openai-go
// stream (by gaps[i], cycling), so that a recorded body replays with a
// deterministic timeline.
type clockedStream struct {
	*ssestream.Stream[openai.ChatCompletionChunk]
	clk  *tpsmetertest.Clock
	gaps []time.Duration
	i    int
}

func (s *clockedStream) Next() bool {
	s.clk.Advance(s.gaps[s.i%len(s.gaps)])
	s.i++
	return s.Stream.Next()
}

// decodeBody is openai-go's own decoder over a recorded body.
func decodeBody(body []byte) *ssestream.Stream[openai.ChatCompletionChunk] {
	res := &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": []string{"text/event-stream"}}, Body: io.NopCloser(bytes.NewReader(body))}
	return ssestream.NewStream[openai.ChatCompletionChunk](ssestream.NewDecoder(res), nil)
}

// hookCalls counts the calls of every hook, by name.
type hookCalls struct {
	mu sync.Mutex
	n  map[string]int
}

func (h *hookCalls) add(name string) {
	h.mu.Lock()
	if h.n == nil {
		h.n = map[string]int{}
	}
	h.n[name]++
	h.mu.Unlock()
}

func (h *hookCalls) total() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := 0
	for _, v := range h.n {
		s += v
	}
	return s
}

// replayMetered replays the recorded body on a fake clock through a meter
// whose hooks record their calls and, if panicky, then panic, each kind in
// its own way.
func replayMetered(t *testing.T, body []byte, panicky bool) (texts []string, err error, res tpsmeter.Result, snap []byte, calls, after *hookCalls, m *tpsmeter.Meter, handled []any) {
	clk := tpsmetertest.NewClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	calls, after = &hookCalls{}, &hookCalls{}
	var mu sync.Mutex
	boom := func(name string, v any) {
		calls.add(name)
		if panicky {
			panic(v)
		}
	}
	var nilMap map[string]int
	m = tpsmeter.New(tpsmeter.WithClock(clk),
		tpsmeter.WithHooks(tpsmeter.Hooks{
			Start: func(tpsmeter.StartInfo) any {
				boom("start", errors.New("user bug in Start"))
				return "state"
			},
			FirstToken: func(tpsmeter.FirstTokenInfo) { boom("first", "user bug in FirstToken") },
			Chunk: func(i tpsmeter.ChunkInfo) {
				calls.add("chunk")
				if panicky {
					switch i.Index % 3 {
					case 0:
						panic(errors.New("user error in Chunk"))
					case 1:
						nilMap["x"]++ // a runtime error
					default:
						panic(nil) // a *runtime.PanicNilError since Go 1.21
					}
				}
			},
			StallStart: func(tpsmeter.StallInfo) { boom("stall", fmt.Errorf("user bug in StallStart")) },
			Finish:     func(tpsmeter.FinishInfo) { boom("finish", 42) },
		}),
		// A second set of hooks: still called after the first set panicked.
		tpsmeter.WithHooks(tpsmeter.Hooks{Finish: func(tpsmeter.FinishInfo) { after.add("finish") }}),
		tpsmeter.WithPanicHandler(func(p any) {
			mu.Lock()
			handled = append(handled, p)
			n := len(handled)
			mu.Unlock()
			if n == 1 {
				panic("the panic handler itself panics")
			}
		}))
	_, rec := m.Start(context.Background(), tpsmeter.RequestInfo{Model: model, Provider: "openai"})
	gaps := []time.Duration{30 * time.Millisecond, 12 * time.Millisecond, 2 * time.Millisecond, 1500 * time.Millisecond, 25 * time.Millisecond}
	rec.ExpectTerminalEvent()
	rec.SetErrorClassifier(tpsopenai.ClassifyError)
	s := tpsmeter.Wrap[openai.ChatCompletionChunk](rec, &clockedStream{Stream: decodeBody(body), clk: clk, gaps: gaps}, tpsopenai.ExtractChat)
	for s.Next() {
		texts = append(texts, chatText(s.Current()))
	}
	err = s.Err()
	res, ok := s.Result()
	if !ok {
		t.Fatal("no Result")
	}
	snap, jerr := json.Marshal(m.Snapshot())
	if jerr != nil {
		t.Fatal(jerr)
	}
	return texts, err, res, snap, calls, after, m, handled
}

// TestPanickingHooks: every hook panics (a string, an error, a runtime
// error, panic(nil)), and so does the panic handler once. The caller's
// stream, the Result and the aggregates are exactly those of a meter whose
// hooks do not panic; every panic is counted and handed to the handler.
func TestPanickingHooks(t *testing.T) {
	body, err := os.ReadFile(filepath.Join(shareddata.RealStreams(t), "006-openai-gpt-4o-mini-long.sse"))
	if err != nil {
		t.Fatalf("shared test data missing: %v", err)
	}
	qTexts, qErr, qRes, qSnap, qCalls, _, qm, _ := replayMetered(t, body, false)
	pTexts, pErr, pRes, pSnap, pCalls, pAfter, pm, handled := replayMetered(t, body, true)

	if strings.Join(qTexts, "|") != strings.Join(pTexts, "|") || qErr != pErr {
		t.Errorf("the stream changed: %d chunks (err %v) vs %d (err %v)", len(pTexts), pErr, len(qTexts), qErr)
	}
	qj, _ := json.Marshal(qRes)
	pj, _ := json.Marshal(pRes)
	if !bytes.Equal(qj, pj) || qRes.Err != pRes.Err {
		t.Errorf("the Result changed:\n quiet:   %s\n panicky: %s", qj, pj)
	}
	if !bytes.Equal(qSnap, pSnap) {
		t.Errorf("the aggregates changed:\n quiet:   %s\n panicky: %s", qSnap, pSnap)
	}
	if qRes.Perceived.Stalls == 0 || qCalls.n["stall"] == 0 {
		t.Fatalf("the replay has no stall (%d), so StallStart was not exercised", qRes.Perceived.Stalls)
	}
	if fmt.Sprint(qCalls.n) != fmt.Sprint(pCalls.n) {
		t.Errorf("hook calls differ: quiet %v, panicky %v", qCalls.n, pCalls.n)
	}
	if got, want := pm.HookPanics(), int64(pCalls.total()); got != want || qm.HookPanics() != 0 {
		t.Errorf("HookPanics = %d, want %d (one per call); quiet meter %d", got, want, qm.HookPanics())
	}
	if len(handled) != pCalls.total() {
		t.Errorf("the panic handler saw %d panics, want %d", len(handled), pCalls.total())
	}
	var kinds = map[string]bool{}
	for _, p := range handled {
		switch p.(type) {
		case string:
			kinds["string"] = true
		case *runtime.PanicNilError:
			kinds["nil"] = true
		case runtime.Error:
			kinds["runtime"] = true
		case error:
			kinds["error"] = true
		case int:
			kinds["int"] = true
		}
	}
	if len(kinds) != 5 {
		t.Errorf("panic values seen by the handler: %v, want string, error, runtime error, nil and int", kinds)
	}
	if pAfter.n["finish"] != 1 {
		t.Errorf("the Finish hook after a panicking one ran %d times, want 1", pAfter.n["finish"])
	}
	if pm.InFlight() != 0 {
		t.Errorf("InFlight = %d", pm.InFlight())
	}
	stillServes(t, pm)
}

// TestPanickingHooksConcurrent: 40 concurrent streams through openai-go
// against the simulator, with hooks that panic on every call: every panic
// is counted, every request recorded once (run it with -race).
func TestPanickingHooksConcurrent(t *testing.T) {
	sim, err := llmsim.Start(llmsim.Config{Seed: 3, Profile: llmsim.Profile{OutputTokens: llmsim.Lengths{Median: 30}}})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	var calls, finishes atomic.Int64
	m := tpsmeter.New(tpsmeter.WithHooks(tpsmeter.Hooks{
		FirstToken: func(tpsmeter.FirstTokenInfo) { calls.Add(1); panic("first") },
		Chunk:      func(tpsmeter.ChunkInfo) { calls.Add(1); panic("chunk") },
		Finish:     func(tpsmeter.FinishInfo) { calls.Add(1); finishes.Add(1); panic("finish") },
	}))
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	defer tr.CloseIdleConnections()
	client := openai.NewClient(option.WithBaseURL(sim.URL()), option.WithAPIKey("k"), option.WithHTTPClient(&http.Client{Transport: tr}), option.WithMaxRetries(0))
	const streams = 40
	var tokens atomic.Int64
	var wg sync.WaitGroup
	for range streams {
		wg.Go(func() {
			s := tpsopenai.NewChatStream(context.Background(), m, client.Chat.Completions.NewStreaming, chatParams("hi"))
			for s.Next() {
			}
			r, _ := s.Result()
			if s.Err() != nil || r.Status != tpsmeter.StatusComplete || r.OutputTokens != 30 {
				t.Errorf("stream: err %v, status %q, %d tokens", s.Err(), r.Status, r.OutputTokens)
			}
			tokens.Add(int64(r.OutputTokens))
		})
	}
	wg.Wait()
	if m.HookPanics() != calls.Load() || finishes.Load() != streams {
		t.Errorf("HookPanics %d, hook calls %d, finishes %d (want %d)", m.HookPanics(), calls.Load(), finishes.Load(), streams)
	}
	var reqs, out int64
	for _, g := range m.Snapshot() {
		reqs += g.Requests
		out += g.OutputTokens
	}
	if reqs != streams || out != tokens.Load() || m.InFlight() != 0 {
		t.Errorf("aggregates: %d requests, %d tokens, in flight %d; want %d, %d, 0", reqs, out, m.InFlight(), streams, tokens.Load())
	}
}

// TestPanickingErrorClassifier: an ErrorClassifier (a user callback too)
// that panics is contained like a hook: the stream still gets its Result,
// named by the built-in rules, and the meter its aggregates.
func TestPanickingErrorClassifier(t *testing.T) {
	var finishes atomic.Int32
	m := tpsmeter.New(
		tpsmeter.WithErrorClassifier(func(error) string { panic("classifier bug") }),
		tpsmeter.WithHooks(tpsmeter.Hooks{Finish: func(tpsmeter.FinishInfo) { finishes.Add(1) }}))
	var r tpsmeter.Result
	func() {
		defer func() {
			if p := recover(); p != nil {
				t.Errorf("End panicked: %v", p)
			}
		}()
		_, rec := m.Start(context.Background(), tpsmeter.RequestInfo{Model: model})
		rec.Chunk(rec.Now())
		rec.Content(0, "Hello")
		rec.EndChunk()
		r = rec.End(rec.Now(), context.Canceled)
	}()
	if r.ErrorType != tpsmeter.ErrorTypeCanceled || !r.Partial() || r.OutputTokens != 1 {
		t.Errorf("Result: type %q, status %q, %d tokens", r.ErrorType, r.Status, r.OutputTokens)
	}
	if finishes.Load() != 1 || m.InFlight() != 0 || m.HookPanics() != 1 {
		t.Errorf("finishes %d, in flight %d, hook panics %d; want 1, 0, 1", finishes.Load(), m.InFlight(), m.HookPanics())
	}
	stillServes(t, m)
}

// TestHookReentrance: a Finish hook that calls back into the meter and
// the request (Snapshot, InFlight, a nested request, Result, even End and
// Close again) neither deadlocks nor changes the Result.
func TestHookReentrance(t *testing.T) {
	var m *tpsmeter.Meter
	var nested atomic.Bool
	var inside tpsmeter.Result
	m = tpsmeter.New(tpsmeter.WithHooks(tpsmeter.Hooks{Finish: func(f tpsmeter.FinishInfo) {
		if nested.Swap(true) {
			return // the nested request's own Finish
		}
		_ = m.Snapshot()
		_ = m.InFlight()
		_, rec := m.Start(context.Background(), tpsmeter.RequestInfo{Model: model})
		rec.End(rec.Now(), nil)
		own := tpsmeter.FromContext(f.Context)
		if r, ok := own.Result(); !ok || r.OutputTokens != f.Result.OutputTokens {
			t.Errorf("Result inside Finish: ok %v, %d tokens", ok, r.OutputTokens)
		}
		inside = own.End(own.Now(), errors.New("a second End"))
	}}))
	srv := newServer(t, "h1", newFaultServer("chat", faultNone))
	client := newClient(srv)
	within(t, 20*time.Second, "a stream whose Finish hook re-enters the meter", func() {
		s := tpsopenai.NewChatStream(context.Background(), m, client.Chat.Completions.NewStreaming, chatParams("hi"))
		for s.Next() {
		}
		_ = s.Close()
		r, _ := s.Result()
		if r.Status != tpsmeter.StatusComplete || r.OutputTokens != 2 || inside.OutputTokens != 2 || inside.Err != nil {
			t.Errorf("Result %q %d tokens; End inside Finish returned %d tokens, err %v", r.Status, r.OutputTokens, inside.OutputTokens, inside.Err)
		}
	})
	var reqs int64
	for _, g := range m.Snapshot() {
		reqs += g.Requests
	}
	if reqs != 2 || m.InFlight() != 0 {
		t.Errorf("%d requests recorded, %d in flight; want 2 and 0", reqs, m.InFlight())
	}
}

// TestPanickingExtractor: an Extractor (the user's code for their chunk
// type) that panics is not recovered by the meter: the panic reaches the
// caller of Next, like a panic in the caller's own loop. The meter stays
// consistent: after the caller recovers and closes the stream, there is one
// partial Result and nothing in flight.
func TestPanickingExtractor(t *testing.T) {
	body := []byte(chatRole + chatEvent("Hello", "") + chatEvent(" world", "stop") + chatDone)
	var finishes atomic.Int32
	m := tpsmeter.New(tpsmeter.WithHooks(tpsmeter.Hooks{Finish: func(tpsmeter.FinishInfo) { finishes.Add(1) }}))
	_, rec := m.Start(context.Background(), tpsmeter.RequestInfo{Model: model})
	s := tpsmeter.Wrap[openai.ChatCompletionChunk](rec, decodeBody(body), func(r *tpsmeter.Recorder, c *openai.ChatCompletionChunk) {
		if chatText(*c) == " world" {
			panic("extractor bug")
		}
		tpsopenai.ExtractChat(r, c)
	})
	var got any
	func() {
		defer func() { got = recover() }()
		for s.Next() {
		}
	}()
	if got != "extractor bug" {
		t.Fatalf("recovered %v, want the extractor's panic", got)
	}
	_ = s.Close()
	r, ok := s.Result()
	if !ok || !errors.Is(r.Err, tpsmeter.ErrClosedEarly) || r.OutputTokens != 1 || finishes.Load() != 1 || m.InFlight() != 0 {
		t.Errorf("after the panic: ok %v, err %v, %d tokens, %d finishes, %d in flight", ok, r.Err, r.OutputTokens, finishes.Load(), m.InFlight())
	}
	stillServes(t, m)
}
