package tpsmeter_test

import (
	"context"
	"errors"
	"iter"
	"runtime"
	"testing"
	"time"

	"github.com/tpsmeter/tpsmeter"
	"github.com/tpsmeter/tpsmeter/tpsmetertest"
)

// sliceIter is an Iterator over fixed chunks that ends with err.
type sliceIter struct {
	chunks []string
	i      int
	err    error
	closed int
	clk    *tpsmetertest.Clock
}

func (s *sliceIter) Next() bool {
	if s.i >= len(s.chunks) {
		return false
	}
	s.clk.Advance(10 * time.Millisecond)
	s.i++
	return true
}
func (s *sliceIter) Current() string { return s.chunks[s.i-1] }
func (s *sliceIter) Err() error {
	if s.i >= len(s.chunks) {
		return s.err
	}
	return nil
}
func (s *sliceIter) Close() error { s.closed++; return nil }

func extractText(rec *tpsmeter.Recorder, p *string) {
	c := *p
	rec.Content(0, c)
	if c == "" {
		rec.FinishReason(0, "stop")
	}
}

func TestWrapKeepsShapeAndFinishesOnce(t *testing.T) {
	boom := errors.New("boom")
	clk := tpsmetertest.NewClock(t0)
	var finishes int
	m := tpsmeter.New(tpsmeter.WithClock(clk), tpsmeter.WithHooks(tpsmeter.Hooks{Finish: func(tpsmeter.FinishInfo) { finishes++ }}))
	_, rec := m.Start(context.Background(), tpsmeter.RequestInfo{Model: "gpt-4o"})
	in := &sliceIter{chunks: []string{"Hello", " world"}, err: boom, clk: clk}
	s := tpsmeter.Wrap[string](rec, in, extractText)
	var got []string
	for s.Next() {
		got = append(got, s.Current())
	}
	if len(got) != 2 || got[0] != "Hello" || got[1] != " world" {
		t.Errorf("chunks altered: %q", got)
	}
	if s.Err() != boom {
		t.Errorf("Err = %v, want the wrapped error unchanged", s.Err())
	}
	if s.Next() {
		t.Error("Next after the end = true")
	}
	_ = s.Close()
	_ = s.Close()
	r, ok := s.Result()
	if !ok || r.Err != boom || r.OutputTokens != 2 || r.TTFT != 10*time.Millisecond || r.Duration != 20*time.Millisecond {
		t.Errorf("Result: ok %v err %v tokens %d ttft %v dur %v", ok, r.Err, r.OutputTokens, r.TTFT, r.Duration)
	}
	if finishes != 1 || in.closed != 2 {
		t.Errorf("finishes %d, inner closed %d times", finishes, in.closed)
	}
}

func TestSeqEarlyBreakAndErrors(t *testing.T) {
	clk := tpsmetertest.NewClock(t0)
	m := tpsmeter.New(tpsmeter.WithClock(clk))
	seq := func(items ...string) iter.Seq2[string, error] {
		return func(yield func(string, error) bool) {
			for _, it := range items {
				clk.Advance(5 * time.Millisecond)
				var err error
				if it == "ERR" {
					err = errors.New("mid-stream")
				}
				if !yield(it, err) {
					return
				}
			}
		}
	}
	_, rec := m.Start(context.Background(), tpsmeter.RequestInfo{Model: "gpt-4o"})
	for c := range tpsmeter.Seq(rec, seq("Hello", " world", " and"), extractText) {
		if c == " world" {
			break
		}
	}
	r, ok := rec.Result()
	if !ok || !errors.Is(r.Err, tpsmeter.ErrClosedEarly) || r.OutputTokens != 2 {
		t.Errorf("early break: ok %v err %v tokens %d", ok, r.Err, r.OutputTokens)
	}

	_, rec = m.Start(context.Background(), tpsmeter.RequestInfo{Model: "gpt-4o"})
	var errs int
	for _, err := range tpsmeter.Seq(rec, seq("Hello", "ERR", " world"), extractText) {
		if err != nil {
			errs++
		}
	}
	r, _ = rec.Result()
	if errs != 1 || r.Err == nil || r.Err.Error() != "mid-stream" || r.OutputTokens != 2 {
		t.Errorf("errors passed %d; Result err %v tokens %d", errs, r.Err, r.OutputTokens)
	}

	_, rec = m.Start(context.Background(), tpsmeter.RequestInfo{Model: "gpt-4o"})
	for range tpsmeter.Seq(rec, seq("Hello", ""), extractText) {
	}
	if r, _ := rec.Result(); r.Err != nil || r.Status != tpsmeter.StatusComplete {
		t.Errorf("complete seq: %v %q", r.Err, r.Status)
	}
}

// TestAbandonedStreamIsFinished: a Stream dropped without Close or the end
// of its loop still produces its (partial) Result once it is collected.
func TestAbandonedStreamIsFinished(t *testing.T) {
	clk := tpsmetertest.NewClock(t0)
	done := make(chan tpsmeter.Result, 1)
	m := tpsmeter.New(tpsmeter.WithClock(clk), tpsmeter.WithHooks(tpsmeter.Hooks{Finish: func(f tpsmeter.FinishInfo) { done <- f.Result }}))
	func() {
		_, rec := m.Start(context.Background(), tpsmeter.RequestInfo{Model: "gpt-4o"})
		s := tpsmeter.Wrap[string](rec, &sliceIter{chunks: []string{"Hello", " world"}, clk: clk}, extractText)
		s.Next()
	}()
	deadline := time.After(10 * time.Second)
	for {
		runtime.GC()
		select {
		case r := <-done:
			if !errors.Is(r.Err, tpsmeter.ErrClosedEarly) || r.OutputTokens != 1 || r.Duration != 10*time.Millisecond {
				t.Errorf("abandoned: err %v tokens %d duration %v", r.Err, r.OutputTokens, r.Duration)
			}
			return
		case <-deadline:
			t.Fatal("abandoned stream never finished")
		case <-time.After(10 * time.Millisecond):
		}
	}
}
