package tpsmeter_test

import (
	"context"
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/tpsmeter/tpsmeter"
	"github.com/tpsmeter/tpsmeter/tpsmetertest"
)

// FuzzRecorder drives a Recorder with an arbitrary sequence of calls read
// from the input: chunks at times that may go backwards on the fake clock,
// texts of every kind with invalid UTF-8 and NUL bytes, tool calls, finish
// reasons, usage, stalls, and End (possibly twice). It never panics, the
// Recorder ends exactly once, the Result is consistent, and every kind of
// token count equals tiktoken's count of the texts the Recorder accepted
// (texts outside a chunk, or after End, are ignored by design).
func FuzzRecorder(f *testing.F) {
	for _, s := range []string{
		"\x00\x05\x01\x00\x05Hello\x01\x00\x06 world\x05\x00\x06\x09",
		"\x00\xfb\x01\x01\x03\xff\xfe\x00\x00\x02\x02\x01\x80\x04\x00\x01\x03a\x00b\x09\x09",
		"\x00\x10\x03\x00\x05think\x01\x02\x04caf\xc3\x00\x01\x01\x02\xa9!\x08\x7f\x08\x7f\x05\x01\x05\x02\x07\x09",
		"\x01\x00\x03lost\x06\x01\x00\x03off\x09\x01\x00\x04late",
		"\x00\x01\x04\x01\x02\x03fn(\x04\x01\x02\x04{\"a\":\x00\x9c\x01\x00\x02ok\x08\x7f\x08\x7f\x08\x7f",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, prog []byte) {
		clk := tpsmetertest.NewClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
		var finishes, stallsAfterFinish, stalls int
		m := tpsmeter.New(tpsmeter.WithClock(clk), tpsmeter.WithHooks(tpsmeter.Hooks{
			StallStart: func(tpsmeter.StallInfo) {
				stalls++
				if finishes > 0 {
					stallsAfterFinish++
				}
			},
			Finish: func(tpsmeter.FinishInfo) { finishes++ },
		}))
		_, rec := m.Start(context.Background(), tpsmeter.RequestInfo{Model: "gpt-4o"})

		type key struct {
			choice, sub int
			kind        tpsmeter.Kind
		}
		accepted := map[key][]byte{}
		inChunk, done := false, false
		var ends []tpsmeter.Result // every End's Result: all must be the first one
		next := func() byte {
			if len(prog) == 0 {
				return 0
			}
			b := prog[0]
			prog = prog[1:]
			return b
		}
		text := func() string {
			n := int(next() % 16)
			n = min(n, len(prog))
			s := string(prog[:n])
			prog = prog[n:]
			return s
		}
		choice := func() int { return int(next()%4) - 1 } // -1..2; a negative choice counts as choice 0
		accept := func(c, sub int, kind tpsmeter.Kind, s string) {
			if inChunk && !done && s != "" {
				accepted[key{max(c, 0), sub, kind}] = append(accepted[key{max(c, 0), sub, kind}], s...)
			}
		}
		for len(prog) > 0 {
			switch op := next() % 10; op {
			case 0:
				clk.Advance(time.Duration(int8(next())) * time.Millisecond) // -128..127 ms
				rec.Chunk(clk.Now())
				inChunk = !done
			case 1, 2, 3:
				c, s := choice(), text()
				kind := map[byte]tpsmeter.Kind{1: tpsmeter.KindContent, 2: tpsmeter.KindRefusal, 3: tpsmeter.KindReasoning}[op]
				accept(c, 0, kind, s)
				rec.Text(c, 0, kind, s)
			case 4:
				c, idx := choice(), int(next()%3)
				name, args := text(), text()
				accept(c, idx, tpsmeter.KindToolName, name)
				accept(c, idx, tpsmeter.KindToolArgs, args)
				rec.ToolCall(c, idx, name, args)
			case 5:
				rec.FinishReason(choice(), "stop")
			case 6:
				rec.EndChunk()
				inChunk = false
			case 7:
				rec.SetUsage(tpsmeter.Usage{CompletionTokens: int64(next()), TotalTokens: 300})
			case 8:
				clk.Advance(time.Duration(next()) * 20 * time.Millisecond) // up to 5 s: stalls fire
			case 9:
				ends = append(ends, rec.End(clk.Now(), nil))
				done, inChunk = true, false
			}
		}
		ends = append(ends, rec.End(clk.Now(), nil))
		clk.Advance(time.Hour) // no stall may fire after the end
		ends = append(ends, rec.End(clk.Now(), context.Canceled))
		r := ends[0]
		first, _ := json.Marshal(r)
		for _, e := range ends[1:] {
			if b, _ := json.Marshal(e); string(b) != string(first) || e.Err != r.Err {
				t.Fatalf("a later End returned another Result:\n%s\n%s", first, b)
			}
		}
		if finishes != 1 || m.InFlight() != 0 || stallsAfterFinish != 0 {
			t.Fatalf("%d Finish calls, %d in flight, %d stalls after Finish", finishes, m.InFlight(), stallsAfterFinish)
		}

		// Counts: tiktoken's count of what was accepted, per text.
		var want [tpsmeter.KindReasoning + 1]int
		for k, s := range accepted {
			want[k.kind] += count(t, "o200k_base", string(s))
		}
		if r.ContentTokens != want[tpsmeter.KindContent] || r.RefusalTokens != want[tpsmeter.KindRefusal] ||
			r.ToolTokens != want[tpsmeter.KindToolName]+want[tpsmeter.KindToolArgs] || r.ReasoningTokens != want[tpsmeter.KindReasoning] {
			t.Errorf("content/refusal/tool/reasoning %d/%d/%d/%d, tiktoken %d/%d/%d/%d", r.ContentTokens, r.RefusalTokens, r.ToolTokens, r.ReasoningTokens,
				want[tpsmeter.KindContent], want[tpsmeter.KindRefusal], want[tpsmeter.KindToolName]+want[tpsmeter.KindToolArgs], want[tpsmeter.KindReasoning])
		}
		if r.OutputTokens != r.ContentTokens+r.RefusalTokens+r.ToolTokens || r.TokenBasis != tpsmeter.BasisExact {
			t.Errorf("OutputTokens %d (%s)", r.OutputTokens, r.TokenBasis)
		}
		// Time: never negative and in order, whatever the clock did.
		if r.Duration < 0 || r.TimeToFirstChunk < 0 || r.TTFT < 0 || r.DecodeTime < 0 || r.TimeToFirstReasoning < 0 {
			t.Errorf("negative duration: %+v", r)
		}
		if r.OutputChunks > 0 && !(r.TimeToFirstChunk <= r.TTFT && r.TTFT+r.DecodeTime <= r.Duration) {
			t.Errorf("first chunk %v, TTFT %v, decode %v, duration %v", r.TimeToFirstChunk, r.TTFT, r.DecodeTime, r.Duration)
		}
		for name, s := range map[string]float64{"chunk gap": r.ChunkGap.Min, "token gap": r.TokenGap.Min, "decode tps": r.DecodeTPS, "e2e tps": r.E2ETPS} {
			if s < 0 || math.IsNaN(s) || math.IsInf(s, 0) {
				t.Errorf("%s = %v", name, s)
			}
		}
		// Per-chunk credits add up to the total.
		if int(r.TokensPerChunk.Count) != r.OutputChunks {
			t.Errorf("TokensPerChunk has %d samples for %d output chunks", r.TokensPerChunk.Count, r.OutputChunks)
		}
		if sum := r.TokensPerChunk.Mean * float64(r.TokensPerChunk.Count); math.Abs(sum-float64(r.OutputTokens)) > 1e-6*math.Max(1, sum) {
			t.Errorf("per-chunk tokens sum to %v, OutputTokens %d", sum, r.OutputTokens)
		}
		if r.Perceived.Stalls < 0 || r.Perceived.StalledShare < 0 || r.Perceived.StalledShare > 1 {
			t.Errorf("perceived: %+v", r.Perceived)
		}
		// The aggregates hold exactly this request.
		s := m.Snapshot()
		if len(s) != 1 || s[0].Requests != 1 || s[0].OutputTokens != int64(r.OutputTokens) {
			t.Errorf("aggregates: %+v", s)
		}
	})
}
