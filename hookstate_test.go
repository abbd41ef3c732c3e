package tpsmeter_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/tpsmeter/tpsmeter"
	"github.com/tpsmeter/tpsmeter/tpsmetertest"
)

// TestHookStatePerRequest: the value a Hooks' Start returns comes back in
// every callback of the same Hooks for the same request, two Hooks keep
// their own states, a Hooks without Start sees nil, and concurrent
// requests do not see each other's states.
func TestHookStatePerRequest(t *testing.T) {
	clk := tpsmetertest.NewClock(t0)
	type seen struct{ hooks, cb string }
	got := map[seen][]any{}
	mk := func(name string, withStart bool) tpsmeter.Hooks {
		h := tpsmeter.Hooks{
			FirstToken: func(i tpsmeter.FirstTokenInfo) { got[seen{name, "first"}] = append(got[seen{name, "first"}], i.State) },
			Chunk:      func(i tpsmeter.ChunkInfo) { got[seen{name, "chunk"}] = append(got[seen{name, "chunk"}], i.State) },
			StallStart: func(i tpsmeter.StallInfo) { got[seen{name, "stall"}] = append(got[seen{name, "stall"}], i.State) },
			Finish:     func(i tpsmeter.FinishInfo) { got[seen{name, "finish"}] = append(got[seen{name, "finish"}], i.State) },
		}
		if withStart {
			h.Start = func(s tpsmeter.StartInfo) any { return name + "/" + s.Request.Class }
		}
		return h
	}
	m := tpsmeter.New(tpsmeter.WithClock(clk),
		tpsmeter.WithHooks(mk("a", true)), tpsmeter.WithHooks(mk("b", false)), tpsmeter.WithHooks(mk("c", true)))

	_, r1 := m.Start(context.Background(), tpsmeter.RequestInfo{Model: "gpt-4o", Class: "one"})
	r2 := m.StartAt(tpsmeter.RequestInfo{Model: "gpt-4o", Class: "two"}, clk.Now())
	for i, r := range []*tpsmeter.Recorder{r1, r2, r1, r2} {
		clk.Advance(ms(10))
		r.Chunk(clk.Now())
		r.Content(0, fmt.Sprintf(" word%d", i))
		r.EndChunk()
	}
	clk.Advance(ms(1500)) // both stall
	r1.End(clk.Now(), nil)
	r2.End(clk.Now(), nil)

	want := map[seen][]any{}
	for _, cb := range []string{"first", "chunk", "stall", "finish"} {
		per := map[string][]string{"first": {"one", "two"}, "chunk": {"one", "two", "one", "two"}, "stall": {"one", "two"}, "finish": {"one", "two"}}[cb]
		for _, name := range []string{"a", "b", "c"} {
			for _, class := range per {
				var v any
				if name != "b" {
					v = name + "/" + class
				}
				want[seen{name, cb}] = append(want[seen{name, cb}], v)
			}
		}
	}
	for k, w := range want {
		if fmt.Sprint(got[k]) != fmt.Sprint(w) {
			t.Errorf("hooks %s, %s: states %v, want %v", k.hooks, k.cb, got[k], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("callbacks seen: %v", got)
	}
}

// TestHookStartIsNotMeasured: Start runs before the start time is taken,
// so a slow Start does not add to the request's timings; it sees the
// caller's context and the merged RequestInfo.
func TestHookStartIsNotMeasured(t *testing.T) {
	clk := tpsmetertest.NewClock(t0)
	var si tpsmeter.StartInfo
	m := tpsmeter.New(tpsmeter.WithClock(clk), tpsmeter.WithHooks(tpsmeter.Hooks{
		Start: func(s tpsmeter.StartInfo) any { si = s; clk.Advance(ms(50)); return nil },
	}))
	ctx := tpsmeter.WithRequestInfo(context.WithValue(context.Background(), ctxKeyT{}, "req-9"), tpsmeter.RequestInfo{Class: "easy"})
	_, rec := m.Start(ctx, tpsmeter.RequestInfo{Model: "gpt-4o"})
	if !rec.StartTime().Equal(t0.Add(ms(50))) {
		t.Errorf("start time %v, want the clock after Start ran (%v)", rec.StartTime(), t0.Add(ms(50)))
	}
	clk.Advance(ms(100))
	rec.Chunk(clk.Now())
	rec.Content(0, "Hi")
	r := rec.End(clk.Now(), nil)
	if r.TTFT != ms(100) {
		t.Errorf("TTFT %v, want 100ms (Start's 50ms not included)", r.TTFT)
	}
	if si.Context.Value(ctxKeyT{}) != "req-9" || si.Request.Class != "easy" || si.Request.Model != "gpt-4o" {
		t.Errorf("Start saw %+v", si)
	}
}

// TestPanickingStartIsContained: a Start that panics is counted, its
// state is nil, and the request is measured as usual.
func TestPanickingStartIsContained(t *testing.T) {
	var states []any
	m := tpsmeter.New(tpsmeter.WithHooks(tpsmeter.Hooks{
		Start:  func(tpsmeter.StartInfo) any { panic("user bug") },
		Finish: func(i tpsmeter.FinishInfo) { states = append(states, i.State) },
	}))
	r := run(t, m, "gpt-4o", []step{{at: ms(5), content: "Hello", reason: "stop"}}, ms(7), nil)
	if r.Status != tpsmeter.StatusComplete || r.OutputTokens != 1 {
		t.Errorf("result damaged by a panicking Start: %+v", r)
	}
	if m.HookPanics() != 1 || len(states) != 1 || states[0] != nil {
		t.Errorf("HookPanics = %d, Finish states %v", m.HookPanics(), states)
	}
}

// TestHookStateAllocations: up to two Hooks with Start keep their states in
// the Recorder (no allocation beyond what Start itself does).
func TestHookStateAllocations(t *testing.T) {
	state := new(int)
	start := func(tpsmeter.StartInfo) any { return state }
	plain := tpsmeter.New()
	withState := tpsmeter.New(tpsmeter.WithHooks(tpsmeter.Hooks{Start: start}), tpsmeter.WithHooks(tpsmeter.Hooks{Start: start}))
	startEnd := func(m *tpsmeter.Meter) func() {
		return func() {
			rec := m.StartAt(tpsmeter.RequestInfo{Model: "gpt-4o"}, t0)
			rec.End(t0, nil)
		}
	}
	a0 := testing.AllocsPerRun(50, startEnd(plain))
	a1 := testing.AllocsPerRun(50, startEnd(withState))
	if a1 != a0 {
		t.Errorf("allocations per request: %v without hook state, %v with two states", a0, a1)
	}
}
