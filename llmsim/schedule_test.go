package llmsim_test

import (
	"context"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/tpsmeter/tpsmeter/llmsim"
)

// chatOnce streams one chat answer to the end and returns its text.
func chatOnce(t *testing.T, client openai.Client, prompt string, meta shared.Metadata) string {
	t.Helper()
	r := readChat(t, client.Chat.Completions.NewStreaming(ctxT(t), openai.ChatCompletionNewParams{
		Model: "gpt-4o-mini", Messages: userMsg(prompt), StreamOptions: includeUsage, Metadata: meta}), 1)
	if r.err != nil {
		t.Fatalf("stream: %v", r.err)
	}
	return r.content[0].String()
}

// waitIdle waits until no generation is in flight: a client can read the
// end of a stream just before the handler returns.
func waitIdle(t *testing.T, srv *llmsim.Server) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for srv.Stats().InFlight != 0 {
		if time.Now().After(deadline) {
			t.Fatal("server never went idle")
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// byIndex sorts reports by request index.
func byIndex(r []llmsim.StreamReport) []llmsim.StreamReport {
	sort.Slice(r, func(i, j int) bool { return r[i].Index < r[j].Index })
	return r
}

func ms(v ...float64) []time.Duration {
	out := make([]time.Duration, len(v))
	for i, x := range v {
		out[i] = time.Duration(x * float64(time.Millisecond))
	}
	return out
}

func TestScheduleFollowsTheProfile(t *testing.T) {
	for _, tc := range []struct {
		name    string
		profile llmsim.Profile
		tokens  string
		ttft    time.Duration
		sched   []time.Duration
		chunks  []int
	}{
		{"steady", llmsim.Profile{TTFTMedian: 100 * time.Millisecond, TokensPerSecond: 50}, "5",
			100 * time.Millisecond, ms(100, 120, 140, 160, 180), []int{1, 1, 1, 1, 1}},
		{"batched", llmsim.Profile{TTFTMedian: 10 * time.Millisecond, TokensPerSecond: 100, TokensPerChunk: 4}, "10",
			10 * time.Millisecond, ms(10, 50, 90), []int{4, 4, 2}},
		{"stalls", llmsim.Profile{TokensPerSecond: 1000, StallProbability: 1, StallDuration: time.Second}, "3",
			0, ms(0, 1001, 2002), []int{1, 1, 1}},
		{"early role chunk", llmsim.Profile{TTFTMedian: 30 * time.Millisecond, EarlyRoleChunk: true}, "2",
			30 * time.Millisecond, ms(0, 30, 30), []int{0, 1, 1}},
		{"hidden reasoning", llmsim.Profile{TTFTMedian: 50 * time.Millisecond, TokensPerSecond: 100, ReasoningTokens: 10}, "2",
			50 * time.Millisecond, ms(150, 160), []int{1, 1}},
		{"visible reasoning", llmsim.Profile{TTFTMedian: 50 * time.Millisecond, TokensPerSecond: 100, ReasoningTokens: 2, ReasoningVisible: true}, "2",
			50 * time.Millisecond, ms(50, 60, 70, 80), []int{1, 1, 1, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got reports
			srv := start(t, llmsim.Config{Profile: tc.profile, Clock: newFakeClock(), OnStream: got.add})
			chatOnce(t, newClient(t, srv), "x", shared.Metadata{llmsim.ExtOutputTokens: tc.tokens})
			reps := got.wait(t, 1)
			if len(reps) != 1 {
				t.Fatalf("%d reports", len(reps))
			}
			r := reps[0]
			if r.TTFT != tc.ttft || !slices.Equal(r.Scheduled, tc.sched) || !slices.Equal(r.Tokens, tc.chunks) {
				t.Errorf("TTFT %v scheduled %v tokens %v\nwant TTFT %v scheduled %v tokens %v", r.TTFT, r.Scheduled, r.Tokens, tc.ttft, tc.sched, tc.chunks)
			}
			if !slices.Equal(r.Emitted, r.Scheduled) || srv.Lateness().Max != 0 {
				t.Errorf("on a virtual clock events must go out exactly on time: emitted %v, lateness %+v", r.Emitted, srv.Lateness())
			}
			if r.Outcome != llmsim.OutcomeCompleted || r.FinishReason != "stop" {
				t.Errorf("outcome %q finish %q", r.Outcome, r.FinishReason)
			}
		})
	}
}

func TestTTFTIsLognormalAroundTheMedian(t *testing.T) {
	var got reports
	srv := start(t, llmsim.Config{Profile: llmsim.Profile{TTFTMedian: 200 * time.Millisecond, TTFTSpread: 0.5}, Clock: newFakeClock(), OnStream: got.add})
	client := newClient(t, srv)
	for range 201 {
		chatOnce(t, client, "x", shared.Metadata{llmsim.ExtOutputTokens: "1"})
	}
	var ttfts []time.Duration
	for _, r := range got.wait(t, 201) {
		ttfts = append(ttfts, r.TTFT)
	}
	slices.Sort(ttfts)
	median := ttfts[len(ttfts)/2]
	// the sample median of 201 lognormal draws is within ~10% of 200ms with
	// overwhelming probability (and the draws are seeded: this is fixed)
	if median < 170*time.Millisecond || median > 230*time.Millisecond || ttfts[0] == ttfts[len(ttfts)-1] {
		t.Errorf("median TTFT %v, min %v, max %v", median, ttfts[0], ttfts[len(ttfts)-1])
	}
}

func TestColdStart(t *testing.T) {
	clock := newFakeClock()
	var got reports
	srv := start(t, llmsim.Config{Profile: llmsim.Profile{TTFTMedian: 10 * time.Millisecond, ColdStartPenalty: 5 * time.Second, ColdStartAfter: time.Minute},
		Clock: clock, OnStream: got.add})
	client := newClient(t, srv)
	meta := shared.Metadata{llmsim.ExtOutputTokens: "3"}
	chatOnce(t, client, "first", meta) // the model loads
	waitIdle(t, srv)
	clock.Advance(30 * time.Second)
	chatOnce(t, client, "warm", meta) // idle 30 s < 1 min: warm
	waitIdle(t, srv)
	clock.Advance(2 * time.Minute)
	chatOnce(t, client, "cold again", meta) // idle 2 min: unloaded
	var cold []time.Duration
	var ttft []time.Duration
	for _, r := range byIndex(got.wait(t, 3)) {
		cold = append(cold, r.ColdStart)
		ttft = append(ttft, r.TTFT)
	}
	if !slices.Equal(cold, []time.Duration{5 * time.Second, 0, 5 * time.Second}) {
		t.Errorf("cold-start delays %v", cold)
	}
	if !slices.Equal(ttft, []time.Duration{5010 * time.Millisecond, 10 * time.Millisecond, 5010 * time.Millisecond}) {
		t.Errorf("TTFTs %v", ttft)
	}
	if srv.Stats().ColdStarts != 2 {
		t.Errorf("Stats.ColdStarts = %d", srv.Stats().ColdStarts)
	}
}

func TestSlotsQueueRequestsAndTTFTGrowsWithLoad(t *testing.T) {
	var got reports
	srv := start(t, llmsim.Config{Profile: llmsim.Profile{TTFTMedian: 2 * time.Millisecond, TokensPerSecond: 2000, Slots: 1}, OnStream: got.add})
	client := newClient(t, srv)
	var wg sync.WaitGroup
	// 200 tokens at 2000 tok/s keep each request in its slot for 100 ms, so
	// the four requests overlap even when a slow (-race) client staggers them.
	for range 4 {
		wg.Go(func() { chatOnce(t, client, "q", shared.Metadata{llmsim.ExtOutputTokens: "200"}) })
	}
	wg.Wait()
	reps := got.wait(t, 4)
	if len(reps) != 4 {
		t.Fatalf("%d reports", len(reps))
	}
	sort.Slice(reps, func(i, j int) bool { return reps[i].QueueWait < reps[j].QueueWait })
	if reps[0].QueueWait > reps[1].QueueWait || reps[1].QueueWait == 0 {
		t.Errorf("with one slot, 3 of 4 concurrent requests must wait: %v %v %v %v", reps[0].QueueWait, reps[1].QueueWait, reps[2].QueueWait, reps[3].QueueWait)
	}
	for i := 1; i < 4; i++ {
		if reps[i].TTFT <= reps[i-1].TTFT || reps[i].TTFT != reps[i].QueueWait+2*time.Millisecond {
			t.Errorf("TTFT must be queue wait + 2ms and grow with the queue: %d: wait %v ttft %v", i, reps[i].QueueWait, reps[i].TTFT)
		}
	}
}

func TestLoadSlowdownStretchesGaps(t *testing.T) {
	var got reports
	srv := start(t, llmsim.Config{Profile: llmsim.Profile{TokensPerSecond: 100, LoadSlowdown: 0.5}, OnStream: got.add})
	client := newClient(t, srv)
	ctx, cancel := context.WithCancel(ctxT(t))
	defer cancel()
	long := client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{Model: "gpt-4o-mini", Messages: userMsg("long"),
		Metadata: shared.Metadata{llmsim.ExtOutputTokens: "500"}})
	if !long.Next() {
		t.Fatal(long.Err())
	}
	chatOnce(t, client, "short", shared.Metadata{llmsim.ExtOutputTokens: "3"})
	reps := got.wait(t, 1) // the short one (the long one is still running)
	if len(reps) != 1 || reps[0].Slowdown != 1.5 || !slices.Equal(reps[0].Scheduled, ms(0, 15, 30)) {
		t.Errorf("reports %+v; want slowdown 1.5 and gaps of 15ms", reps)
	}
	cancel()
	long.Close()
}

func TestDeterminism(t *testing.T) {
	run := func(seed int64) ([]string, [][]time.Duration) {
		var got reports
		srv := start(t, llmsim.Config{Seed: seed, Clock: newFakeClock(), OnStream: got.add,
			Profile: llmsim.Profile{TTFTMedian: 100 * time.Millisecond, TTFTSpread: 0.5, TokensPerSecond: 40, Jitter: 0.5, TokensPerChunk: 2, SpeculativeMaxBurst: 6, StallProbability: 0.1, StallDuration: time.Second}})
		client := newClient(t, srv)
		var texts []string
		for _, p := range []string{"a", "b", "a"} {
			texts = append(texts, chatOnce(t, client, p, shared.Metadata{}))
			waitIdle(t, srv)
		}
		var scheds [][]time.Duration
		for _, r := range byIndex(got.wait(t, 3)) {
			scheds = append(scheds, r.Scheduled)
		}
		return texts, scheds
	}
	t1, s1 := run(1)
	t2, s2 := run(1)
	t3, s3 := run(2)
	if !slices.Equal(t1, t2) || !slices.EqualFunc(s1, s2, slices.Equal) {
		t.Errorf("same seed, same requests: different answers or schedules")
	}
	if t1[0] != t1[2] {
		t.Errorf("the same request body must get the same text")
	}
	if slices.EqualFunc(s1[:1], s1[2:], slices.Equal) {
		t.Errorf("the timing of a repeated request should differ (it depends on the request index)")
	}
	if t1[0] == t3[0] || slices.EqualFunc(s1, s3, slices.Equal) {
		t.Errorf("another seed gave the same answers or schedules")
	}
}
