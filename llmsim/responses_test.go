package llmsim_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/tpsmeter/tpsmeter/llmsim"
)

type respResult struct {
	types     []string
	text      strings.Builder
	reasoning strings.Builder
	args      strings.Builder
	final     *responses.Response
	seqOK     bool
	errEvent  *responses.ResponseStreamEventUnion
	err       error
}

func readResponses(t *testing.T, client openai.Client, p responses.ResponseNewParams) *respResult {
	t.Helper()
	stream := client.Responses.NewStreaming(ctxT(t), p)
	r := &respResult{seqOK: true}
	for stream.Next() {
		ev := stream.Current()
		if int(ev.SequenceNumber) != len(r.types) {
			r.seqOK = false
		}
		r.types = append(r.types, ev.Type)
		switch ev.Type {
		case "response.output_text.delta":
			r.text.WriteString(ev.Delta)
		case "response.reasoning_summary_text.delta":
			r.reasoning.WriteString(ev.Delta)
		case "response.function_call_arguments.delta":
			r.args.WriteString(ev.Delta)
		case "response.completed", "response.incomplete":
			resp := ev.Response
			r.final = &resp
		case "error":
			e := ev
			r.errEvent = &e
		}
	}
	r.err = stream.Err()
	return r
}

// compact collapses runs of the same event type: a, b, b, b, c -> a, b+, c.
func compact(types []string) string {
	var out []string
	for i, ty := range types {
		if i > 0 && types[i-1] == ty {
			if !strings.HasSuffix(out[len(out)-1], "+") {
				out[len(out)-1] += "+"
			}
			continue
		}
		out = append(out, ty)
	}
	return strings.Join(out, " ")
}

func TestResponsesStreaming(t *testing.T) {
	input := responses.ResponseNewParamsInputUnion{OfString: openai.String("Write a poem.")}
	tools := []responses.ToolUnionParam{responses.ToolParamOfFunction("get_capital",
		map[string]any{"type": "object", "properties": map[string]any{"query": map[string]any{"type": "string"}}}, false)}
	for _, tc := range []struct {
		name      string
		profile   llmsim.Profile
		params    responses.ResponseNewParams
		sequence  string
		output    int64 // usage.output_tokens
		reasoning int64
		status    string
	}{
		{name: "text", params: responses.ResponseNewParams{Metadata: shared.Metadata{llmsim.ExtOutputTokens: "120"}},
			sequence: "response.created response.in_progress response.output_item.added response.content_part.added response.output_text.delta+ response.output_text.done response.content_part.done response.output_item.done response.completed",
			output:   120, status: "completed"},
		{name: "max_output_tokens", params: responses.ResponseNewParams{MaxOutputTokens: openai.Int(16), Metadata: shared.Metadata{llmsim.ExtOutputTokens: "120"}},
			sequence: "response.created response.in_progress response.output_item.added response.content_part.added response.output_text.delta+ response.output_text.done response.content_part.done response.output_item.done response.incomplete",
			output:   16, status: "incomplete"},
		{name: "function_call", params: responses.ResponseNewParams{Tools: tools, Metadata: shared.Metadata{llmsim.ExtOutputTokens: "12"}},
			sequence: "response.created response.in_progress response.output_item.added response.function_call_arguments.delta+ response.function_call_arguments.done response.output_item.done response.completed",
			output:   12, status: "completed"},
		{name: "visible_reasoning", profile: llmsim.Profile{ReasoningTokens: 40, ReasoningVisible: true},
			params:   responses.ResponseNewParams{Metadata: shared.Metadata{llmsim.ExtOutputTokens: "10"}},
			sequence: "response.created response.in_progress response.output_item.added response.reasoning_summary_part.added response.reasoning_summary_text.delta+ response.reasoning_summary_text.done response.reasoning_summary_part.done response.output_item.done response.output_item.added response.content_part.added response.output_text.delta+ response.output_text.done response.content_part.done response.output_item.done response.completed",
			output:   50, reasoning: 40, status: "completed"},
		{name: "hidden_reasoning", profile: llmsim.Profile{ReasoningTokens: 40},
			params:   responses.ResponseNewParams{Metadata: shared.Metadata{llmsim.ExtOutputTokens: "10"}},
			sequence: "response.created response.in_progress response.output_item.added response.output_item.done response.output_item.added response.content_part.added response.output_text.delta+ response.output_text.done response.content_part.done response.output_item.done response.completed",
			output:   50, reasoning: 40, status: "completed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := start(t, llmsim.Config{Profile: tc.profile})
			client := newClient(t, srv)
			tc.params.Model, tc.params.Input = "gpt-4.1-nano", input
			r := readResponses(t, client, tc.params)
			if r.err != nil {
				t.Fatal(r.err)
			}
			if got := compact(r.types); got != tc.sequence {
				t.Errorf("events:\n got %s\nwant %s", got, tc.sequence)
			}
			if !r.seqOK {
				t.Errorf("sequence_number does not count events from 0")
			}
			if r.final == nil {
				t.Fatal("no final response event")
			}
			u := r.final.Usage
			if u.OutputTokens != tc.output || u.OutputTokensDetails.ReasoningTokens != tc.reasoning || u.TotalTokens != u.InputTokens+u.OutputTokens {
				t.Errorf("usage %+v, want output %d reasoning %d", u, tc.output, tc.reasoning)
			}
			if string(r.final.Status) != tc.status {
				t.Errorf("status %q, want %q", r.final.Status, tc.status)
			}
			visible := countTokens(t, "gpt-4.1-nano", r.text.String()) + countTokens(t, "gpt-4.1-nano", r.reasoning.String()) + countTokens(t, "gpt-4.1-nano", r.args.String())
			hidden := int64(0)
			if !tc.profile.ReasoningVisible {
				hidden = tc.reasoning
			}
			if int64(visible)+hidden != u.OutputTokens {
				t.Errorf("tiktoken of the streamed deltas %d + hidden %d != output_tokens %d", visible, hidden, u.OutputTokens)
			}
			if tc.name == "function_call" {
				var v map[string]string
				if err := json.Unmarshal([]byte(r.args.String()), &v); err != nil {
					t.Errorf("arguments %q: %v", r.args.String(), err)
				}
				if len(r.final.Output) != 1 || r.final.Output[0].Name != "get_capital" || r.final.Output[0].Arguments.OfString != r.args.String() {
					t.Errorf("final output %+v", r.final.Output)
				}
			}
			if tc.name == "text" && (len(r.final.Output) != 1 || r.final.Output[0].Content[0].Text != r.text.String()) {
				t.Errorf("final output does not hold the streamed text")
			}
		})
	}
}

func TestResponsesMidStreamErrorEvent(t *testing.T) {
	srv := start(t, llmsim.Config{})
	client := newClient(t, srv)
	r := readResponses(t, client, responses.ResponseNewParams{Model: "gpt-4o", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("x")},
		Metadata: shared.Metadata{llmsim.ExtOutputTokens: "30", llmsim.ExtFault: "midstream_error"}})
	if r.errEvent == nil || r.errEvent.Code != "server_error" || r.errEvent.Message == "" {
		t.Fatalf("no error event with code server_error: %v", r.types)
	}
	if r.final != nil || r.types[len(r.types)-1] != "error" {
		t.Errorf("stream went on after the error event: %v", r.types)
	}
}

func TestResponsesNonStreaming(t *testing.T) {
	srv := start(t, llmsim.Config{})
	client := newClient(t, srv)
	res, err := client.Responses.New(ctxT(t), responses.ResponseNewParams{Model: "gpt-4o",
		Input:    responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{responses.ResponseInputItemParamOfMessage("Hi", responses.EasyInputMessageRoleUser)}},
		Metadata: shared.Metadata{llmsim.ExtOutputTokens: "33"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != "completed" || res.Usage.OutputTokens != 33 || countTokens(t, "gpt-4o", res.OutputText()) != 33 {
		t.Errorf("status %q usage %d text %q", res.Status, res.Usage.OutputTokens, res.OutputText())
	}
}

func TestResponsesDropAndWholeAnswerFaults(t *testing.T) {
	var got reports
	srv := start(t, llmsim.Config{OnStream: got.add})
	client := newClient(t, srv)
	r := readResponses(t, client, responses.ResponseNewParams{Model: "gpt-4o", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("x")},
		Metadata: shared.Metadata{llmsim.ExtOutputTokens: "30", llmsim.ExtFault: "drop"}})
	if r.err == nil || r.final != nil {
		t.Errorf("dropped responses stream: err %v, final %v", r.err, r.final)
	}
	// a mid-stream failure of a non-streaming request is a 500
	_, err := client.Responses.New(ctxT(t), responses.ResponseNewParams{Model: "gpt-4o", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("x")},
		Metadata: shared.Metadata{llmsim.ExtFault: "midstream_error"}})
	var ae *openai.Error
	if !errors.As(err, &ae) || ae.StatusCode != 500 || ae.Type != "server_error" {
		t.Errorf("whole answer with a mid-stream fault: %v", err)
	}
	outcomes := map[string]bool{}
	for _, rep := range got.wait(t, 2) {
		outcomes[rep.Outcome] = true
	}
	if !outcomes[llmsim.OutcomeDropped] || !outcomes[llmsim.OutcomeMidStreamError] {
		t.Errorf("outcomes %v", outcomes)
	}
}
