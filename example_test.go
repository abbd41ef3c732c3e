package tpsmeter_test

import (
	"context"
	"fmt"
	"time"

	"github.com/tpsmeter/tpsmeter"
	"github.com/tpsmeter/tpsmeter/tpsmetertest"
)

// The low-level Recorder API, for tools that parse streams and keep time
// themselves: a role-only chunk, then three chunks of text. TTFT is stamped
// at the first chunk with text, not at the role chunk.
func ExampleRecorder() {
	m := tpsmeter.New()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rec := m.StartAt(tpsmeter.RequestInfo{Model: "gpt-4o-mini"}, start)
	for _, c := range []struct {
		ms   int
		text string
	}{{80, ""}, {200, "Hello"}, {250, " there"}, {300, " friend"}} {
		rec.Chunk(start.Add(time.Duration(c.ms) * time.Millisecond))
		rec.Content(0, c.text)
		rec.EndChunk()
	}
	rec.FinishReason(0, "stop")
	r := rec.End(start.Add(310*time.Millisecond), nil)
	fmt.Println("first chunk:", r.TimeToFirstChunk, "TTFT:", r.TTFT)
	fmt.Printf("tokens: %d (%s, %s)\n", r.OutputTokens, r.TokenBasis, r.Encoding)
	fmt.Printf("decode: %.0f tok/s, end-to-end: %.0f tok/s\n", r.DecodeTPS, r.E2ETPS)
	fmt.Println("status:", r.Status)
	// Output:
	// first chunk: 80ms TTFT: 200ms
	// tokens: 3 (exact, o200k_base)
	// decode: 20 tok/s, end-to-end: 10 tok/s
	// status: complete
}

// Hooks see each request as it happens; StallStart fires while a stall is
// happening (here on a fake clock, 1 s after the last token).
func ExampleHooks() {
	clk := tpsmetertest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	m := tpsmeter.New(tpsmeter.WithClock(clk), tpsmeter.WithHooks(tpsmeter.Hooks{
		FirstToken: func(i tpsmeter.FirstTokenInfo) { fmt.Println("first token after", i.TTFT) },
		StallStart: func(i tpsmeter.StallInfo) { fmt.Println("stalled: nothing since", i.LastOutputAt) },
		Finish: func(f tpsmeter.FinishInfo) {
			fmt.Println("finished:", f.Result.OutputTokens, "tokens,", f.Result.Perceived.Stalls, "stall")
		},
	}))
	_, rec := m.Start(context.Background(), tpsmeter.RequestInfo{Model: "gpt-4o"})
	clk.Advance(300 * time.Millisecond)
	rec.Chunk(clk.Now())
	rec.Content(0, "Hello")
	rec.EndChunk()
	clk.Advance(1500 * time.Millisecond)
	rec.Chunk(clk.Now())
	rec.Content(0, " world")
	rec.FinishReason(0, "stop")
	rec.EndChunk()
	rec.End(clk.Now(), nil)
	// Output:
	// first token after 300ms
	// stalled: nothing since 300ms
	// finished: 2 tokens, 1 stall
}

// A Start hook resolves what the other callbacks need per request once;
// its value comes back in their State field. Here each request counts its
// output chunks in its own counter, with no lookup and no lock per chunk.
func ExampleHooks_start() {
	type perRequest struct {
		label  string
		chunks int
	}
	m := tpsmeter.New(tpsmeter.WithHooks(tpsmeter.Hooks{
		Start: func(s tpsmeter.StartInfo) any { return &perRequest{label: s.Request.Model + "/" + s.Request.Class} },
		Chunk: func(c tpsmeter.ChunkInfo) { c.State.(*perRequest).chunks++ },
		Finish: func(f tpsmeter.FinishInfo) {
			st := f.State.(*perRequest)
			fmt.Printf("%s: %d output chunks\n", st.label, st.chunks)
		},
	}))
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a := m.StartAt(tpsmeter.RequestInfo{Model: "gpt-4o", Class: "easy"}, start)
	b := m.StartAt(tpsmeter.RequestInfo{Model: "gpt-4o", Class: "hard"}, start)
	for i, text := range []string{"Hi", " there", "!"} {
		at := start.Add(time.Duration(100*(i+1)) * time.Millisecond)
		a.Chunk(at)
		a.Content(0, text)
		if i < 2 {
			b.Chunk(at)
			b.Content(0, text)
		}
	}
	a.End(start.Add(time.Second), nil)
	b.End(start.Add(time.Second), nil)
	// Output:
	// gpt-4o/easy: 3 output chunks
	// gpt-4o/hard: 2 output chunks
}
