package tpsmeter_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tpsmeter/tpsmeter"
	"github.com/tpsmeter/tpsmeter/tpsmetertest"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// step is one event of a hand-built timeline.
type step struct {
	at      time.Duration // from the request start
	content string
	choice  int
	reason  string // finish reason
	reason2 string // reasoning text
	tool    [2]string
}

// run feeds a timeline through the low-level recorder API.
func run(t *testing.T, m *tpsmeter.Meter, model string, steps []step, end time.Duration, err error) tpsmeter.Result {
	t.Helper()
	rec := m.StartAt(tpsmeter.RequestInfo{Model: model}, t0)
	for _, s := range steps {
		rec.Chunk(t0.Add(s.at))
		rec.Content(s.choice, s.content)
		if s.reason2 != "" {
			rec.Reasoning(s.choice, s.reason2)
		}
		if s.tool[0] != "" || s.tool[1] != "" {
			rec.ToolCall(s.choice, 0, s.tool[0], s.tool[1])
		}
		rec.FinishReason(s.choice, s.reason)
		rec.EndChunk()
	}
	return rec.End(t0.Add(end), err)
}

func ms(n float64) time.Duration { return time.Duration(n * float64(time.Millisecond)) }

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// Each word below is one token in o200k_base (gpt-4o) and cl100k_base.
func TestDefinitionsSteadyStream(t *testing.T) {
	m := tpsmeter.New()
	steps := []step{
		{at: ms(100)}, // role-only chunk: counts for TimeToFirstChunk, not TTFT
		{at: ms(300), content: "Hello"},
		{at: ms(350), content: " world"},
		{at: ms(400), content: " and"},
		{at: ms(450), content: " more", reason: "stop"},
	}
	r := run(t, m, "gpt-4o", steps, ms(500), nil)
	if r.TimeToFirstChunk != ms(100) {
		t.Errorf("TimeToFirstChunk = %v, want 100ms", r.TimeToFirstChunk)
	}
	if r.TTFT != ms(300) {
		t.Errorf("TTFT = %v, want 300ms (first non-empty content, not the role chunk)", r.TTFT)
	}
	if r.OutputTokens != 4 || r.ContentTokens != 4 {
		t.Errorf("OutputTokens = %d, ContentTokens = %d, want 4, 4", r.OutputTokens, r.ContentTokens)
	}
	if r.TokenBasis != tpsmeter.BasisExact || r.Encoding != "o200k_base" {
		t.Errorf("basis = %q %q, want exact o200k_base", r.TokenBasis, r.Encoding)
	}
	if r.Duration != ms(500) || r.DecodeTime != ms(150) {
		t.Errorf("Duration = %v, DecodeTime = %v, want 500ms, 150ms", r.Duration, r.DecodeTime)
	}
	// DecodeTPS = (N - k1) / (t_last - t_first) = 3 / 0.150
	if !near(r.DecodeTPS, 3/0.150) {
		t.Errorf("DecodeTPS = %v, want %v", r.DecodeTPS, 3/0.150)
	}
	// E2ETPS = N / (t_last - start) = 4 / 0.450
	if !near(r.E2ETPS, 4/0.450) {
		t.Errorf("E2ETPS = %v, want %v", r.E2ETPS, 4/0.450)
	}
	if r.Chunks != 5 || r.OutputChunks != 4 {
		t.Errorf("Chunks = %d, OutputChunks = %d, want 5, 4", r.Chunks, r.OutputChunks)
	}
	if r.ChunkGap.Count != 3 || math.Abs(r.ChunkGap.P50-0.050) > 0.050*0.02 || math.Abs(r.ChunkGap.Max-0.050) > 1e-12 {
		t.Errorf("ChunkGap = %+v, want 3 gaps of 50ms", r.ChunkGap)
	}
	if r.TokenGap.Count != 3 || math.Abs(r.TokenGap.P99-0.050) > 0.050*0.02 {
		t.Errorf("TokenGap = %+v, want 3 gaps of 50ms", r.TokenGap)
	}
	if r.TokensPerChunk.Count != 4 || r.TokensPerChunk.Max != 1 || r.TokensPerChunk.Min != 1 {
		t.Errorf("TokensPerChunk = %+v, want 4 chunks of 1", r.TokensPerChunk)
	}
	if r.Status != tpsmeter.StatusComplete || r.Err != nil || r.FinishReason != "stop" {
		t.Errorf("Status = %q, Err = %v, FinishReason = %q", r.Status, r.Err, r.FinishReason)
	}
	if r.OutputBucket != "short" {
		t.Errorf("OutputBucket = %q, want short", r.OutputBucket)
	}
}

func TestDefinitionsMultiTokenChunks(t *testing.T) {
	m := tpsmeter.New()
	// "Hello world" = 2 tokens arriving at once, then " and more things" = 3.
	steps := []step{
		{at: ms(200), content: "Hello world"},
		{at: ms(260), content: ""}, // empty chunk: no gap, no output
		{at: ms(500), content: " and more things", reason: "stop"},
	}
	r := run(t, m, "gpt-4o", steps, ms(500), nil)
	if r.OutputTokens != 5 {
		t.Fatalf("OutputTokens = %d, want 5", r.OutputTokens)
	}
	if r.OutputChunks != 2 || r.Chunks != 3 {
		t.Errorf("OutputChunks = %d, Chunks = %d, want 2, 3", r.OutputChunks, r.Chunks)
	}
	// (N - k1) / decode = (5-2)/0.3 = 10 tok/s: the first chunk's extra
	// token arrived with TTFT, not during decoding.
	if !near(r.DecodeTPS, 10) {
		t.Errorf("DecodeTPS = %v, want 10", r.DecodeTPS)
	}
	// One chunk gap of 300ms; per-token gaps: 3 tokens share it: 100ms each.
	if r.ChunkGap.Count != 1 || math.Abs(r.ChunkGap.Max-0.3) > 1e-12 {
		t.Errorf("ChunkGap = %+v", r.ChunkGap)
	}
	if r.TokenGap.Count != 3 || math.Abs(r.TokenGap.Max-0.1) > 1e-12 || math.Abs(r.TokenGap.P50-0.1) > 0.1*0.02 {
		t.Errorf("TokenGap = %+v, want 3 samples of 0.1", r.TokenGap)
	}
	if r.TokensPerChunk.Max != 3 || r.TokensPerChunk.Min != 2 || r.TokensPerChunk.Count != 2 {
		t.Errorf("TokensPerChunk = %+v, want {2,3}", r.TokensPerChunk)
	}
}

func TestDefinitionsZeroAndOneToken(t *testing.T) {
	m := tpsmeter.New()
	r := run(t, m, "gpt-4o", []step{{at: ms(10)}, {at: ms(20), reason: "stop"}}, ms(30), nil)
	if r.OutputTokens != 0 || r.TTFT != 0 || r.DecodeTPS != 0 || r.E2ETPS != 0 || r.OutputChunks != 0 {
		t.Errorf("zero-token stream: %+v", r)
	}
	if r.TimeToFirstChunk != ms(10) || r.Status != tpsmeter.StatusComplete {
		t.Errorf("zero-token stream: ttfc %v status %q", r.TimeToFirstChunk, r.Status)
	}
	r = run(t, m, "gpt-4o", []step{{at: ms(40), content: "Hi", reason: "stop"}}, ms(50), nil)
	if r.OutputTokens != 1 || r.TTFT != ms(40) || r.DecodeTPS != 0 || r.DecodeTime != 0 {
		t.Errorf("one-token stream: tokens %d ttft %v decodeTPS %v", r.OutputTokens, r.TTFT, r.DecodeTPS)
	}
	if !near(r.E2ETPS, 1/0.040) {
		t.Errorf("one-token E2ETPS = %v, want 25", r.E2ETPS)
	}
}

func TestDefinitionsChoicesToolsReasoning(t *testing.T) {
	m := tpsmeter.New()
	rec := m.StartAt(tpsmeter.RequestInfo{Model: "gpt-4o"}, t0)
	rec.Chunk(t0.Add(ms(50)))
	rec.Reasoning(0, "Let me think")
	rec.Text(0, 0, tpsmeter.KindSummary, "Thinking about weather")
	rec.EndChunk()
	// n=2: the two choices' texts are tokenized apart: "Hello" + "Hello"
	// glued would be one piece; apart they are two single-token texts.
	rec.Chunk(t0.Add(ms(100)))
	rec.Content(0, "Hello")
	rec.Content(1, "Hello")
	rec.EndChunk()
	rec.Chunk(t0.Add(ms(150)))
	rec.ToolCall(0, 0, "get_weather", `{"city":`)
	rec.ToolCall(0, 1, "get_time", ``)
	rec.EndChunk()
	rec.Chunk(t0.Add(ms(200)))
	rec.ToolCall(0, 0, "", `"Paris"}`)
	rec.FinishReason(0, "tool_calls")
	rec.FinishReason(1, "stop")
	rec.SetUsage(tpsmeter.Usage{PromptTokens: 10, CompletionTokens: 40, TotalTokens: 50})
	rec.EndChunk()
	r := rec.End(t0.Add(ms(210)), nil)
	if r.Choices != 2 {
		t.Errorf("Choices = %d, want 2", r.Choices)
	}
	if r.ContentTokens != 2 {
		t.Errorf("ContentTokens = %d, want 2 (one per choice)", r.ContentTokens)
	}
	want := count(t, "o200k_base", "get_weather") + count(t, "o200k_base", `{"city":"Paris"}`) + count(t, "o200k_base", "get_time")
	if r.ToolTokens != want {
		t.Errorf("ToolTokens = %d, want %d", r.ToolTokens, want)
	}
	if r.ReasoningTokens != count(t, "o200k_base", "Let me think") {
		t.Errorf("ReasoningTokens = %d", r.ReasoningTokens)
	}
	if r.SummaryTokens != count(t, "o200k_base", "Thinking about weather") {
		t.Errorf("SummaryTokens = %d", r.SummaryTokens)
	}
	if r.ToolCalls != 2 {
		t.Errorf("ToolCalls = %d, want 2 (get_weather and get_time)", r.ToolCalls)
	}
	if r.OutputTokens != r.ContentTokens+r.ToolTokens {
		t.Errorf("OutputTokens = %d, want content+tool", r.OutputTokens)
	}
	if r.TimeToFirstReasoning != ms(50) || r.TTFT != ms(100) || r.TimeToFirstChunk != ms(50) {
		t.Errorf("reasoning %v ttft %v ttfc %v: reasoning must not count as first token", r.TimeToFirstReasoning, r.TTFT, r.TimeToFirstChunk)
	}
	if r.Usage == nil || r.UsageDiff != 40-int64(r.OutputTokens+r.ReasoningTokens) {
		t.Errorf("Usage %+v diff %d", r.Usage, r.UsageDiff)
	}
	if !near(r.UsageTPS, 40/0.2) {
		t.Errorf("UsageTPS = %v, want 200", r.UsageTPS)
	}
	if r.FinishReason != "tool_calls" || r.Status != tpsmeter.StatusComplete {
		t.Errorf("FinishReason %q Status %q", r.FinishReason, r.Status)
	}
}

func TestTruncatedAndErrors(t *testing.T) {
	m := tpsmeter.New()
	rec := m.StartAt(tpsmeter.RequestInfo{Model: "gpt-4o"}, t0)
	rec.ExpectTerminalEvent()
	rec.Chunk(t0.Add(ms(10)))
	rec.Content(0, "Hello")
	r := rec.End(t0.Add(ms(20)), nil)
	if !errors.Is(r.Err, tpsmeter.ErrTruncated) || r.Status != tpsmeter.StatusPartial || r.ErrorType != tpsmeter.ErrorTypeTruncated {
		t.Errorf("no finish reason: Err %v Status %q ErrorType %q", r.Err, r.Status, r.ErrorType)
	}
	if r.OutputTokens != 1 {
		t.Errorf("partial stream lost its tokens: %d", r.OutputTokens)
	}
	// End is once: a second End returns the first Result.
	if r2 := rec.End(t0.Add(time.Hour), errors.New("late")); r2.Duration != r.Duration || r2.Err != r.Err {
		t.Errorf("second End changed the result")
	}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{context.Canceled, tpsmeter.ErrorTypeCanceled},
		{context.DeadlineExceeded, tpsmeter.ErrorTypeDeadline},
		{errors.New("boom"), tpsmeter.ErrorTypeOther},
	} {
		r := run(t, m, "gpt-4o", []step{{at: ms(5), content: "Hi"}}, ms(6), tc.err)
		if r.Err != tc.err || r.ErrorType != tc.want || !r.Partial() {
			t.Errorf("err %v: Err %v ErrorType %q Partial %v", tc.err, r.Err, r.ErrorType, r.Partial())
		}
	}
}

func TestBasisForUnknownModel(t *testing.T) {
	m := tpsmeter.New()
	r := run(t, m, "llama-3.3-70b", []step{{at: ms(5), content: "Hello", reason: "stop"}}, ms(6), nil)
	if r.TokenBasis != tpsmeter.BasisEstimate || r.OutputTokens != 1 {
		t.Errorf("unknown model: basis %q tokens %d, want estimate 1", r.TokenBasis, r.OutputTokens)
	}
	m = tpsmeter.New(tpsmeter.WithEncoding("cl100k_base"))
	r = run(t, m, "llama-3.3-70b", []step{{at: ms(5), content: "Hello", reason: "stop"}}, ms(6), nil)
	if r.TokenBasis != tpsmeter.BasisExact || r.Encoding != "cl100k_base" {
		t.Errorf("WithEncoding: basis %q enc %q", r.TokenBasis, r.Encoding)
	}
	if m := tpsmeter.New(tpsmeter.WithEncoding("nope")); m.Err() == nil {
		t.Errorf("unknown encoding: Meter.Err() = nil")
	}
}

func TestHooksOrderAndStall(t *testing.T) {
	clk := tpsmetertest.NewClock(t0)
	var events []string
	var stall tpsmeter.StallInfo
	m := tpsmeter.New(tpsmeter.WithClock(clk), tpsmeter.WithHooks(tpsmeter.Hooks{
		FirstToken: func(i tpsmeter.FirstTokenInfo) { events = append(events, "first") },
		Chunk:      func(i tpsmeter.ChunkInfo) { events = append(events, "chunk") },
		StallStart: func(i tpsmeter.StallInfo) { events = append(events, "stall"); stall = i },
		Finish:     func(tpsmeter.FinishInfo) { events = append(events, "finish") },
	}), tpsmeter.WithHooks(tpsmeter.Hooks{
		Finish: func(tpsmeter.FinishInfo) { events = append(events, "finish2") },
	}))
	_, rec := m.Start(context.Background(), tpsmeter.RequestInfo{Model: "gpt-4o"})
	clk.Advance(ms(100))
	rec.Chunk(clk.Now())
	rec.Content(0, "Hello")
	rec.EndChunk()
	clk.Advance(ms(999)) // just under the 1s threshold: no stall
	if len(events) != 2 {
		t.Fatalf("events before threshold = %v", events)
	}
	clk.Advance(ms(1)) // reaches 1s after the last token: the stall begins
	if len(events) != 3 || events[2] != "stall" || stall.LastOutputAt != ms(100) || stall.TokensSoFar != 1 {
		t.Fatalf("events = %v stall = %+v", events, stall)
	}
	clk.Advance(ms(500))
	rec.Chunk(clk.Now())
	rec.Content(0, " world")
	rec.EndChunk()
	r := rec.End(clk.Now(), nil)
	clk.Advance(time.Hour) // no stall after Finish
	want := []string{"first", "chunk", "stall", "chunk", "finish", "finish2"}
	if len(events) != len(want) {
		t.Fatalf("events = %v, want %v", events, want)
	}
	for i := range want {
		if events[i] != want[i] {
			t.Fatalf("events = %v, want %v", events, want)
		}
	}
	if r.Perceived.Stalls != 1 || r.Perceived.LongestStall != ms(1500) {
		t.Errorf("Perceived stalls = %d longest %v, want 1, 1.5s", r.Perceived.Stalls, r.Perceived.LongestStall)
	}
}

func TestPanickingHookIsContained(t *testing.T) {
	var got any
	m := tpsmeter.New(tpsmeter.WithHooks(tpsmeter.Hooks{
		Chunk:  func(tpsmeter.ChunkInfo) { panic("user bug") },
		Finish: func(tpsmeter.FinishInfo) { panic("user bug 2") },
	}), tpsmeter.WithPanicHandler(func(p any) { got = p }))
	r := run(t, m, "gpt-4o", []step{{at: ms(5), content: "Hello"}, {at: ms(6), content: " world", reason: "stop"}}, ms(7), nil)
	if r.OutputTokens != 2 || r.Status != tpsmeter.StatusComplete {
		t.Errorf("result damaged by a panicking hook: %+v", r)
	}
	if m.HookPanics() != 3 || got != "user bug 2" {
		t.Errorf("HookPanics = %d, last = %v", m.HookPanics(), got)
	}
	if s := m.Snapshot(); len(s) != 1 || s[0].Requests != 1 {
		t.Errorf("aggregates damaged: %+v", s)
	}
}

func TestClockGoingBackwards(t *testing.T) {
	m := tpsmeter.New()
	r := run(t, m, "gpt-4o", []step{
		{at: ms(100), content: "Hello"},
		{at: ms(50), content: " world"}, // clock stepped back
		{at: ms(150), content: " and", reason: "stop"},
	}, ms(10), nil)
	if r.TTFT != ms(100) || r.DecodeTime != ms(50) || r.Duration != ms(150) || r.ChunkGap.Min < 0 {
		t.Errorf("backwards clock: ttft %v decode %v duration %v gaps %+v", r.TTFT, r.DecodeTime, r.Duration, r.ChunkGap)
	}
}

func TestAggregatesByGroup(t *testing.T) {
	m := tpsmeter.New(tpsmeter.WithMaxGroups(2))
	for i := 0; i < 3; i++ {
		run(t, m, "gpt-4o", []step{{at: ms(100 + float64(i)*100), content: "Hi", reason: "stop"}}, ms(400), nil)
	}
	run(t, m, "gpt-4o-mini", []step{{at: ms(50), content: "Hi"}}, ms(60), context.Canceled)
	run(t, m, "o3", []step{{at: ms(50), content: "Hi", reason: "stop"}}, ms(60), nil) // over the cap
	s := m.Snapshot()
	if len(s) != 3 {
		t.Fatalf("groups = %d, want 2 + other: %+v", len(s), s)
	}
	byModel := map[string]tpsmeter.GroupSnapshot{}
	for _, g := range s {
		byModel[g.Key.Model] = g
	}
	g := byModel["gpt-4o"]
	if g.Requests != 3 || g.TTFT.Count != 3 || math.Abs(g.TTFT.Min-0.1) > 1e-12 || math.Abs(g.TTFT.Max-0.3) > 1e-12 {
		t.Errorf("gpt-4o group: %+v", g)
	}
	if g := byModel["gpt-4o-mini"]; g.Partial != 1 || g.Errors[tpsmeter.ErrorTypeCanceled] != 1 {
		t.Errorf("gpt-4o-mini group: %+v", g)
	}
	if g := byModel["other"]; g.Requests != 1 {
		t.Errorf("overflow group: %+v", byModel)
	}
}

// TestHeldBackTokensBelongToTheLastChunk: a word split over chunks is
// credited when it is complete; tokens still held back when the stream ends
// go to the last output chunk, so the per-chunk distributions add up to the
// exact total.
func TestHeldBackTokensBelongToTheLastChunk(t *testing.T) {
	m := tpsmeter.New()
	text := []string{"Hello", " intern", "ational", "ization", " of", " antidisestablishment", "arianism"}
	var steps []step
	for i, c := range text {
		steps = append(steps, step{at: ms(100 + 10*float64(i)), content: c})
	}
	steps[len(steps)-1].reason = "stop"
	r := run(t, m, "gpt-4o", steps, ms(200), nil)
	want := count(t, "o200k_base", strings.Join(text, ""))
	if r.OutputTokens != want {
		t.Fatalf("OutputTokens = %d, want %d", r.OutputTokens, want)
	}
	sum := r.TokensPerChunk.Mean * float64(r.TokensPerChunk.Count)
	if r.TokensPerChunk.Count != int64(len(text)) || math.Abs(sum-float64(want)) > 1e-9 {
		t.Errorf("TokensPerChunk = %+v: %d chunks summing to %v, want %d chunks summing to %d", r.TokensPerChunk, r.TokensPerChunk.Count, sum, len(text), want)
	}
	// Every token after the first chunk's has one per-token gap sample.
	if int(r.TokenGap.Count) != want-1 {
		t.Errorf("TokenGap.Count = %d, want %d", r.TokenGap.Count, want-1)
	}
	// The per-token gaps add up to the decode time (first to last chunk).
	if got := r.TokenGap.Mean * float64(r.TokenGap.Count); math.Abs(got-r.DecodeTime.Seconds()) > 1e-9 {
		t.Errorf("sum of per-token gaps = %v, want DecodeTime %v", got, r.DecodeTime)
	}
}

type ctxKeyT struct{}

// TestHooksCarryTheRequestContext: every hook gets the context the request
// was started with and its RequestInfo, so one hook can serve many requests.
func TestHooksCarryTheRequestContext(t *testing.T) {
	var seen []any
	m := tpsmeter.New(tpsmeter.WithHooks(tpsmeter.Hooks{
		FirstToken: func(i tpsmeter.FirstTokenInfo) { seen = append(seen, i.Context.Value(ctxKeyT{}), i.Request.Class) },
		Chunk:      func(i tpsmeter.ChunkInfo) { seen = append(seen, i.Context.Value(ctxKeyT{}), i.Request.Class) },
		Finish:     func(i tpsmeter.FinishInfo) { seen = append(seen, i.Context.Value(ctxKeyT{}), i.Request.Class) },
	}))
	ctx := tpsmeter.WithRequestInfo(context.WithValue(context.Background(), ctxKeyT{}, "req-7"), tpsmeter.RequestInfo{Class: "easy"})
	_, rec := m.Start(ctx, tpsmeter.RequestInfo{Model: "gpt-4o"})
	rec.Chunk(rec.Now())
	rec.Content(0, "Hi")
	rec.EndChunk()
	r := rec.End(rec.Now(), nil)
	if len(seen) != 6 {
		t.Fatalf("hooks saw %v", seen)
	}
	for i := 0; i < len(seen); i += 2 {
		if seen[i] != "req-7" || seen[i+1] != "easy" {
			t.Errorf("hook %d saw context value %v and class %v", i/2, seen[i], seen[i+1])
		}
	}
	if r.Class != "easy" || r.Model != "gpt-4o" {
		t.Errorf("Result class %q model %q", r.Class, r.Model)
	}
}
