package tpsopenai_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/openai/openai-go/v3/responses"

	"github.com/tpsmeter/tpsmeter"
	"github.com/tpsmeter/tpsmeter/tpsopenai"
)

// FuzzResponsesSSE feeds arbitrary bytes, as an SSE body, through
// openai-go's decoder and the metered Responses API adapter. It never
// panics; the caller sees exactly what openai-go shows without the meter;
// there is exactly one consistent Result; its status follows from the
// events that arrived (an error or response.failed event, a terminal event,
// or none); and its content, refusal and tool-input token counts equal
// tiktoken's counts of the texts the caller received.
func FuzzResponsesSSE(f *testing.F) {
	fzSeeds(f, "responses")
	ev := func(typ, fields string) string {
		return "event: " + typ + "\ndata: {\"type\":\"" + typ + "\"," + fields + "}\n\n"
	}
	for _, s := range []string{
		ev("response.output_text.delta", `"output_index":0,"content_index":0,"delta":"Hello"`) + ev("response.completed", `"response":{"usage":{"output_tokens":2}}`),
		ev("response.output_text.delta", `"output_index":0,"content_index":0,"delta":"a\u0000\ud800b"`) + ev("error", `"code":"x","message":"boom"`),
		ev("response.refusal.delta", "\"output_index\":1,\"content_index\":0,\"delta\":\"no \xff\"") + ev("response.failed", `"response":{"error":{"code":"c","message":"m"}}`),
		ev("response.output_item.added", `"output_index":2,"item":{"type":"function_call","name":"lookup"}`) +
			ev("response.function_call_arguments.delta", `"output_index":2,"delta":"{\"q\":1}"`) + ev("response.incomplete", `"response":{"incomplete_details":{"reason":"max_output_tokens"}}`),
		ev("response.reasoning_summary_text.delta", `"output_index":0,"summary_index":0,"delta":"think"`) + ev("response.audio.delta", `"delta":"AAAA"`),
		ev("response.output_text.delta", `"output_index":-1,"content_index":300,"delta":"odd"`),
		ev("response.output_text.delta", `"output_index":0,"content_index":0,"delta":"cut`)[:80],
		"data: {\"error\":{\"message\":\"top-level\"}}\n\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		plain := fzStream[responses.ResponseStreamEventUnion](body)
		var plainTypes []string
		for plain.Next() {
			e := plain.Current()
			plainTypes = append(plainTypes, e.Type+"\x1e"+e.Delta)
		}
		plainErr := plain.Err()

		var finishes atomic.Int32
		m := tpsmeter.New(tpsmeter.WithHooks(tpsmeter.Hooks{Finish: func(tpsmeter.FinishInfo) { finishes.Add(1) }}))
		_, rec := m.Start(context.Background(), tpsmeter.RequestInfo{Model: "gpt-4o-mini"})
		inner := fzStream[responses.ResponseStreamEventUnion](body)
		s := tpsopenai.WrapResponses(rec, inner)
		var types []string
		texts := map[[3]int64]*strings.Builder{} // kind (0 content, 1 refusal, 2 tool name, 3 tool input), output index, content index
		var firstErr *tpsopenai.EventError
		terminal, inRange := false, true
		add := func(kind int64, e *responses.ResponseStreamEventUnion, text string) {
			if e.OutputIndex < 0 || e.OutputIndex >= 1<<20 || e.ContentIndex < 0 || e.ContentIndex >= 256 {
				inRange = false
			}
			k := [3]int64{kind, e.OutputIndex, e.ContentIndex}
			if texts[k] == nil {
				texts[k] = &strings.Builder{}
			}
			texts[k].WriteString(text)
		}
		for s.Next() {
			e := s.Current()
			types = append(types, e.Type+"\x1e"+e.Delta)
			switch e.Type {
			case "response.output_text.delta":
				add(0, &e, e.Delta)
			case "response.refusal.delta":
				add(1, &e, e.Delta)
			case "response.output_item.added":
				if e.Item.Type == "function_call" {
					add(2, &e, e.Item.Name)
				}
			case "response.function_call_arguments.delta", "response.custom_tool_call_input.delta":
				add(3, &e, e.Delta)
			case "response.completed", "response.incomplete":
				terminal = true
			case "response.failed":
				terminal = true
				if firstErr == nil {
					firstErr = &tpsopenai.EventError{Code: string(e.Response.Error.Code), Message: e.Response.Error.Message}
				}
			case "error":
				terminal = true
				if firstErr == nil {
					firstErr = &tpsopenai.EventError{Code: e.Code, Message: e.Message}
				}
			}
		}
		err := s.Err()

		if strings.Join(types, "\x1f") != strings.Join(plainTypes, "\x1f") {
			t.Errorf("the caller saw %d events, %d without the meter", len(types), len(plainTypes))
		}
		if err != inner.Err() || errString(err) != errString(plainErr) {
			t.Errorf("Err %v (inner %v), without the meter %v", err, inner.Err(), plainErr)
		}
		r, ok := s.Result()
		if !ok || finishes.Load() != 1 || m.InFlight() != 0 {
			t.Fatalf("Result %v, %d Finish calls, %d in flight", ok, finishes.Load(), m.InFlight())
		}
		fzCheckResult(t, r, len(types))
		var ee *tpsopenai.EventError
		switch {
		case err != nil:
			if r.Err != err {
				t.Errorf("Result.Err %v, want the stream's %v", r.Err, err)
			}
		case firstErr != nil:
			if !errors.As(r.Err, &ee) || *ee != *firstErr || r.ErrorType != "stream_error" {
				t.Errorf("Result.Err %v (%q), want the first error event %v", r.Err, r.ErrorType, firstErr)
			}
		case terminal:
			if r.Err != nil {
				t.Errorf("terminal event seen, Result.Err %v", r.Err)
			}
		default:
			if !errors.Is(r.Err, tpsmeter.ErrTruncated) {
				t.Errorf("no terminal event, Result.Err %v, want ErrTruncated", r.Err)
			}
		}
		if !inRange || r.TokenBasis != tpsmeter.BasisExact {
			return
		}
		want := [4]int{}
		for k, b := range texts {
			if fzSlow(b.String()) {
				return
			}
			want[k[0]] += fzCount(t, b.String())
		}
		if r.ContentTokens != want[0] || r.RefusalTokens != want[1] || r.ToolTokens != want[2]+want[3] {
			t.Errorf("content/refusal/tool tokens %d/%d/%d, tiktoken %d/%d/%d", r.ContentTokens, r.RefusalTokens, r.ToolTokens,
				want[0], want[1], want[2]+want[3])
		}
	})
}
