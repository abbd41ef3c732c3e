package tpsmeter_test

import (
	"errors"
	"testing"
	"time"

	"github.com/tpsmeter/tpsmeter"
)

// TestTerminalNeedsEveryChoice: with several choices (n > 1), a stream has
// reached its end only if every choice seen has finished when it ends. A
// choice whose first text arrives after the others finished, and that never
// finishes, makes the stream truncated (found by FuzzChatSSE: the end used
// to be decided as soon as the choices seen so far had all finished).
func TestTerminalNeedsEveryChoice(t *testing.T) {
	tests := []struct {
		name  string
		steps []step
		want  error
	}{
		{"one choice finishes", []step{{at: ms(1), content: "Hi", reason: "stop"}}, nil},
		{"both finish, interleaved", []step{{at: ms(1), content: "Hi"}, {at: ms(2), choice: 1, content: "Yo"},
			{at: ms(3), reason: "stop"}, {at: ms(4), choice: 1, reason: "stop"}}, nil},
		{"choice 1 starts after choice 0 finished and never finishes", []step{{at: ms(1), content: "Hi", reason: "stop"},
			{at: ms(2), choice: 1, content: "Hello"}}, tpsmeter.ErrTruncated},
		{"choice 1 starts after choice 0 finished, then finishes", []step{{at: ms(1), content: "Hi", reason: "stop"},
			{at: ms(2), choice: 1, content: "Hello"}, {at: ms(3), choice: 1, reason: "stop"}}, nil},
		{"choice 0 never sends anything", []step{{at: ms(1), choice: 1, content: "Hi", reason: "stop"}}, tpsmeter.ErrTruncated},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := tpsmeter.New()
			rec := m.StartAt(tpsmeter.RequestInfo{Model: "gpt-4o"}, t0)
			rec.ExpectTerminalEvent()
			for _, s := range tc.steps {
				rec.Chunk(t0.Add(s.at))
				rec.Content(s.choice, s.content)
				rec.FinishReason(s.choice, s.reason)
				rec.EndChunk()
			}
			r := rec.End(t0.Add(10*time.Millisecond), nil)
			if !errors.Is(r.Err, tc.want) || (tc.want == nil) != (r.Status == tpsmeter.StatusComplete) {
				t.Errorf("Err %v, Status %q; want %v", r.Err, r.Status, tc.want)
			}
		})
	}
}
