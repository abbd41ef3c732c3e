package tpsmeter_test

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tpsmeter/tpsmeter"
	"github.com/tpsmeter/tpsmeter/tpsmetertest"
)

// steppingIter yields words, moving a fake clock by steps[i] before word i:
// a step may be negative (the clock goes backwards) or long (a stall).
type steppingIter struct {
	clk   *tpsmetertest.Clock
	words []string
	steps []time.Duration
	i     int
}

func (s *steppingIter) Next() bool {
	if s.i >= len(s.words) {
		return false
	}
	s.clk.Advance(s.steps[s.i])
	s.i++
	return true
}
func (s *steppingIter) Current() string { return s.words[s.i-1] }
func (s *steppingIter) Err() error      { return nil }
func (s *steppingIter) Close() error    { return nil }

// steppingText is the Extractor of steppingIter's words.
func steppingText(rec *tpsmeter.Recorder, w *string) { rec.Content(0, *w) }

// TestClockStepsBackwards drives metered streams (Wrap and Seq) whose
// fake clock jumps backwards, before and after the first token and across
// a stall, with a stall hook armed: every duration stays non-negative and
// ordered, counts stay exact, stall callbacks never follow Finish, and
// Finish runs once.
func TestClockStepsBackwards(t *testing.T) {
	ms := time.Millisecond
	words := []string{"Hello", " there", ",", " general", " Kenobi", "!"}
	tests := []struct {
		name  string
		steps []time.Duration
	}{
		{"back before the first token", []time.Duration{-time.Hour, 10 * ms, 10 * ms, 10 * ms, 10 * ms, 10 * ms}},
		{"back mid-stream", []time.Duration{100 * ms, 20 * ms, -50 * ms, 20 * ms, -time.Hour, 20 * ms}},
		{"back across a stall", []time.Duration{100 * ms, 1500 * ms, -3 * time.Second, 2 * time.Second, -ms, 5 * ms}},
		{"back by the whole stream, every step", []time.Duration{-ms, -ms, -ms, -ms, -ms, -ms}},
	}
	for _, tc := range tests {
		for _, shape := range []string{"Wrap", "Seq"} {
			t.Run(tc.name+"/"+shape, func(t *testing.T) {
				clk := tpsmetertest.NewClock(t0)
				finishes, stallsAfter := 0, 0
				m := tpsmeter.New(tpsmeter.WithClock(clk), tpsmeter.WithHooks(tpsmeter.Hooks{
					StallStart: func(tpsmeter.StallInfo) {
						if finishes > 0 {
							stallsAfter++
						}
					},
					Finish: func(tpsmeter.FinishInfo) { finishes++ },
				}))
				_, rec := m.Start(context.Background(), tpsmeter.RequestInfo{Model: "gpt-4o"})
				it := &steppingIter{clk: clk, words: words, steps: tc.steps}
				var got []string
				if shape == "Wrap" {
					s := tpsmeter.Wrap[string](rec, it, steppingText)
					for s.Next() {
						got = append(got, s.Current())
					}
				} else {
					seq := func(yield func(string, error) bool) {
						for it.Next() {
							if !yield(it.Current(), nil) {
								return
							}
						}
					}
					for w := range tpsmeter.Seq(rec, seq, steppingText) {
						got = append(got, w)
					}
				}
				clk.Advance(time.Hour)
				r, ok := rec.Result()
				if !ok || finishes != 1 || stallsAfter != 0 {
					t.Fatalf("Result %v, %d Finish calls, %d stalls after Finish", ok, finishes, stallsAfter)
				}
				if strings.Join(got, "") != strings.Join(words, "") {
					t.Errorf("the stream changed: %q", got)
				}
				if want := count(t, "o200k_base", strings.Join(words, "")); r.OutputTokens != want {
					t.Errorf("OutputTokens %d, want %d", r.OutputTokens, want)
				}
				if r.TimeToFirstChunk < 0 || r.TTFT < r.TimeToFirstChunk || r.DecodeTime < 0 || r.TTFT+r.DecodeTime > r.Duration {
					t.Errorf("durations out of order: first chunk %v, TTFT %v, decode %v, duration %v", r.TimeToFirstChunk, r.TTFT, r.DecodeTime, r.Duration)
				}
				for name, v := range map[string]float64{"chunk gap min": r.ChunkGap.Min, "token gap min": r.TokenGap.Min,
					"decode tps": r.DecodeTPS, "e2e tps": r.E2ETPS, "stalled share": r.Perceived.StalledShare, "perceived tps": r.Perceived.PerceivedTPS} {
					if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
						t.Errorf("%s = %v", name, v)
					}
				}
				if r.Perceived.LongestStall < 0 || r.Perceived.StalledShare > 1 {
					t.Errorf("perceived: %+v", r.Perceived)
				}
			})
		}
	}
}
