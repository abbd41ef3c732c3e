package llmsim_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/shared"

	"github.com/tpsmeter/tpsmeter/llmsim"
)

func userMsg(s string) []openai.ChatCompletionMessageParamUnion {
	return []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("You are terse."), openai.UserMessage(s)}
}

var includeUsage = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}

// chatResult is what a client saw of one chat stream.
type chatResult struct {
	content      []strings.Builder // per choice
	reasoning    []strings.Builder
	finish       []string
	toolArgs     map[[2]int]*strings.Builder // (choice, tool index)
	toolNames    map[[2]int]string
	usage        *openai.CompletionUsage
	chunks       int
	contentChunk int
	usageLast    bool
	err          error
}

func readChat(t *testing.T, stream *ssestream.Stream[openai.ChatCompletionChunk], n int) *chatResult {
	t.Helper()
	r := &chatResult{content: make([]strings.Builder, n), reasoning: make([]strings.Builder, n), finish: make([]string, n),
		toolArgs: map[[2]int]*strings.Builder{}, toolNames: map[[2]int]string{}}
	for stream.Next() {
		ch := stream.Current()
		r.chunks++
		if r.usage != nil {
			t.Errorf("chunk after the usage chunk")
		}
		if ch.JSON.Usage.Valid() {
			u := ch.Usage
			r.usage = &u
			if len(ch.Choices) != 0 {
				t.Errorf("usage chunk has %d choices, want 0", len(ch.Choices))
			}
		}
		for _, c := range ch.Choices {
			i := int(c.Index)
			if i >= n {
				t.Fatalf("choice index %d, want < %d", i, n)
			}
			if c.Delta.Content != "" {
				r.contentChunk++
			}
			r.content[i].WriteString(c.Delta.Content)
			if f, ok := c.Delta.JSON.ExtraFields["reasoning_content"]; ok && f.Raw() != "null" {
				var s string
				if err := json.Unmarshal([]byte(f.Raw()), &s); err != nil {
					t.Fatalf("reasoning_content %s: %v", f.Raw(), err)
				}
				r.reasoning[i].WriteString(s)
			}
			for _, tc := range c.Delta.ToolCalls {
				k := [2]int{i, int(tc.Index)}
				if r.toolArgs[k] == nil {
					r.toolArgs[k] = &strings.Builder{}
				}
				if tc.Function.Name != "" {
					r.toolNames[k] = tc.Function.Name
				}
				r.toolArgs[k].WriteString(tc.Function.Arguments)
			}
			if c.FinishReason != "" {
				if r.finish[i] != "" {
					t.Errorf("choice %d finished twice", i)
				}
				r.finish[i] = c.FinishReason
			}
		}
	}
	r.err = stream.Err()
	return r
}

func TestChatStreamUsageIsTheExactTokenCount(t *testing.T) {
	srv := start(t, llmsim.Config{Seed: 7})
	client := newClient(t, srv)
	for _, tc := range []struct {
		model  string
		tokens string
	}{
		{"gpt-3.5-turbo", "300"}, // cl100k_base
		{"gpt-4", "17"},          // cl100k_base
		{"gpt-4o-mini", "1000"},  // o200k_base
		{"gpt-5", "1"},           // o200k_base
	} {
		t.Run(tc.model, func(t *testing.T) {
			stream := client.Chat.Completions.NewStreaming(ctxT(t), openai.ChatCompletionNewParams{
				Model: tc.model, Messages: userMsg("Tell me a story."), StreamOptions: includeUsage,
				Metadata: shared.Metadata{llmsim.ExtOutputTokens: tc.tokens},
			})
			r := readChat(t, stream, 1)
			if r.err != nil {
				t.Fatal(r.err)
			}
			if r.usage == nil {
				t.Fatal("no usage chunk")
			}
			text := r.content[0].String()
			want := countTokens(t, tc.model, text)
			if int(r.usage.CompletionTokens) != want || tc.tokens != itoa(want) {
				t.Errorf("usage %d, tiktoken(%s) %d, asked %s", r.usage.CompletionTokens, llmsim.EncodingForModel(tc.model), want, tc.tokens)
			}
			if r.usage.TotalTokens != r.usage.PromptTokens+r.usage.CompletionTokens || r.usage.PromptTokens <= 0 {
				t.Errorf("usage totals inconsistent: %+v", r.usage)
			}
			if r.finish[0] != "stop" {
				t.Errorf("finish_reason %q, want stop", r.finish[0])
			}
			if r.contentChunk != want {
				t.Errorf("%d content chunks for %d tokens with 1 token per chunk", r.contentChunk, want)
			}
		})
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestChatStreamNChoicesInterleaveAndSumUsage(t *testing.T) {
	srv := start(t, llmsim.Config{Profile: llmsim.Profile{TokensPerChunk: 2}})
	client := newClient(t, srv)
	stream := client.Chat.Completions.NewStreaming(ctxT(t), openai.ChatCompletionNewParams{
		Model: "gpt-4o-mini", Messages: userMsg("Two answers please."), N: openai.Int(2), StreamOptions: includeUsage,
		Metadata: shared.Metadata{llmsim.ExtOutputTokens: "40"},
	})
	r := readChat(t, stream, 2)
	if r.err != nil || r.usage == nil {
		t.Fatalf("err %v, usage %v", r.err, r.usage)
	}
	sum := 0
	for i := range 2 {
		n := countTokens(t, "gpt-4o-mini", r.content[i].String())
		if n != 40 {
			t.Errorf("choice %d has %d tokens, want 40", i, n)
		}
		if r.finish[i] != "stop" {
			t.Errorf("choice %d finish %q", i, r.finish[i])
		}
		sum += n
	}
	if int(r.usage.CompletionTokens) != sum {
		t.Errorf("usage %d, want the sum over choices %d", r.usage.CompletionTokens, sum)
	}
	if r.content[0].String() == r.content[1].String() {
		t.Errorf("both choices have the same text")
	}
}

func TestChatStreamToolCalls(t *testing.T) {
	srv := start(t, llmsim.Config{Profile: llmsim.Profile{TokensPerChunk: 3}})
	client := newClient(t, srv)
	tools := []openai.ChatCompletionToolUnionParam{
		openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: "get_weather",
			Parameters: shared.FunctionParameters{"type": "object", "properties": map[string]any{"query": map[string]any{"type": "string"}}}}),
		openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: "get_time"}),
	}
	for _, calls := range []int{1, 2} {
		t.Run(itoa(calls), func(t *testing.T) {
			stream := client.Chat.Completions.NewStreaming(ctxT(t), openai.ChatCompletionNewParams{
				Model: "gpt-4o", Messages: userMsg("Weather in Paris?"), Tools: tools, StreamOptions: includeUsage,
				Metadata: shared.Metadata{llmsim.ExtOutputTokens: "30", llmsim.ExtToolCalls: itoa(calls)},
			})
			r := readChat(t, stream, 1)
			if r.err != nil || r.usage == nil {
				t.Fatalf("err %v, usage %v", r.err, r.usage)
			}
			if r.finish[0] != "tool_calls" {
				t.Errorf("finish %q, want tool_calls", r.finish[0])
			}
			if r.content[0].Len() != 0 {
				t.Errorf("content %q with tool calls", r.content[0].String())
			}
			if len(r.toolArgs) != calls {
				t.Fatalf("%d tool calls, want %d", len(r.toolArgs), calls)
			}
			total := 0
			for k, args := range r.toolArgs {
				var v map[string]string
				if err := json.Unmarshal([]byte(args.String()), &v); err != nil || v["query"] == "" {
					t.Errorf("call %v arguments %q are not {\"query\": ...}: %v", k, args.String(), err)
				}
				want := []string{"get_weather", "get_time"}[k[1]]
				if r.toolNames[k] != want {
					t.Errorf("call %v name %q, want %q", k, r.toolNames[k], want)
				}
				total += countTokens(t, "gpt-4o", args.String())
			}
			if int(r.usage.CompletionTokens) != total {
				t.Errorf("usage %d, tiktoken of the arguments %d", r.usage.CompletionTokens, total)
			}
		})
	}
}

func TestChatMaxTokensCutsWithLength(t *testing.T) {
	srv := start(t, llmsim.Config{})
	client := newClient(t, srv)
	for _, p := range []openai.ChatCompletionNewParams{
		{MaxTokens: openai.Int(10)},
		{MaxCompletionTokens: openai.Int(10)},
	} {
		p.Model, p.Messages, p.StreamOptions = "gpt-4o-mini", userMsg("Go on."), includeUsage
		p.Metadata = shared.Metadata{llmsim.ExtOutputTokens: "50"}
		r := readChat(t, client.Chat.Completions.NewStreaming(ctxT(t), p), 1)
		if r.err != nil || r.usage == nil {
			t.Fatalf("err %v usage %v", r.err, r.usage)
		}
		if r.finish[0] != "length" || r.usage.CompletionTokens != 10 || countTokens(t, "gpt-4o-mini", r.content[0].String()) != 10 {
			t.Errorf("finish %q, usage %d, text %q; want length, 10 tokens", r.finish[0], r.usage.CompletionTokens, r.content[0].String())
		}
	}
	// a cap above the natural length changes nothing
	r := readChat(t, client.Chat.Completions.NewStreaming(ctxT(t), openai.ChatCompletionNewParams{
		Model: "gpt-4o-mini", Messages: userMsg("Go on."), StreamOptions: includeUsage, MaxTokens: openai.Int(500),
		Metadata: shared.Metadata{llmsim.ExtOutputTokens: "50"},
	}), 1)
	if r.err != nil || r.finish[0] != "stop" || r.usage.CompletionTokens != 50 {
		t.Errorf("err %v finish %q usage %v, want stop with 50", r.err, r.finish[0], r.usage)
	}
}

func TestChatNonStreaming(t *testing.T) {
	srv := start(t, llmsim.Config{Profile: llmsim.Profile{ReasoningTokens: 12, ReasoningVisible: true}})
	client := newClient(t, srv)
	res, err := client.Chat.Completions.New(ctxT(t), openai.ChatCompletionNewParams{
		Model: "gpt-4o-mini", Messages: userMsg("Hello"), N: openai.Int(2), Metadata: shared.Metadata{llmsim.ExtOutputTokens: "25"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Object != "chat.completion" || len(res.Choices) != 2 {
		t.Fatalf("object %q with %d choices", res.Object, len(res.Choices))
	}
	total := 0
	for _, c := range res.Choices {
		n := countTokens(t, "gpt-4o-mini", c.Message.Content)
		var rsn string
		if f, ok := c.Message.JSON.ExtraFields["reasoning_content"]; ok {
			_ = json.Unmarshal([]byte(f.Raw()), &rsn)
		}
		if n != 25 || countTokens(t, "gpt-4o-mini", rsn) != 12 || c.FinishReason != "stop" {
			t.Errorf("choice %d: %d content tokens, reasoning %q, finish %q", c.Index, n, rsn, c.FinishReason)
		}
		total += n + 12
	}
	if int(res.Usage.CompletionTokens) != total || res.Usage.CompletionTokensDetails.ReasoningTokens != 24 {
		t.Errorf("usage %+v, want %d completion incl. 24 reasoning", res.Usage, total)
	}
}

func TestChatReasoning(t *testing.T) {
	for _, visible := range []bool{true, false} {
		t.Run(map[bool]string{true: "visible", false: "hidden"}[visible], func(t *testing.T) {
			srv := start(t, llmsim.Config{Profile: llmsim.Profile{ReasoningTokens: 30, ReasoningVisible: visible}})
			client := newClient(t, srv)
			r := readChat(t, client.Chat.Completions.NewStreaming(ctxT(t), openai.ChatCompletionNewParams{
				Model: "deepseek-reasoner", Messages: userMsg("Think."), StreamOptions: includeUsage,
				Metadata: shared.Metadata{llmsim.ExtOutputTokens: "20"},
			}), 1)
			if r.err != nil || r.usage == nil {
				t.Fatalf("err %v usage %v", r.err, r.usage)
			}
			gotR := countTokens(t, "deepseek-reasoner", r.reasoning[0].String())
			if visible && gotR != 30 || !visible && gotR != 0 {
				t.Errorf("streamed %d reasoning tokens", gotR)
			}
			if r.usage.CompletionTokens != 50 || r.usage.CompletionTokensDetails.ReasoningTokens != 30 {
				t.Errorf("usage %d (reasoning %d), want 50 (30)", r.usage.CompletionTokens, r.usage.CompletionTokensDetails.ReasoningTokens)
			}
			if countTokens(t, "deepseek-reasoner", r.content[0].String()) != 20 {
				t.Errorf("content %q", r.content[0].String())
			}
		})
	}
}

func TestMidStreamErrorSurfacesAsStreamError(t *testing.T) {
	srv := start(t, llmsim.Config{})
	client := newClient(t, srv)
	r := readChat(t, client.Chat.Completions.NewStreaming(ctxT(t), openai.ChatCompletionNewParams{
		Model: "gpt-4o-mini", Messages: userMsg("x"), StreamOptions: includeUsage,
		Metadata: shared.Metadata{llmsim.ExtOutputTokens: "20", llmsim.ExtFault: "midstream_error"},
	}), 1)
	var se *ssestream.StreamError
	if !errors.As(r.err, &se) {
		t.Fatalf("err = %v (%T), want *ssestream.StreamError", r.err, r.err)
	}
	if !strings.Contains(se.Message, "server_error") {
		t.Errorf("message %q does not carry the server_error object", se.Message)
	}
	if n := countTokens(t, "gpt-4o-mini", r.content[0].String()); n == 0 || n >= 20 || r.usage != nil || r.finish[0] != "" {
		t.Errorf("before the error: %d tokens, usage %v, finish %q; want a partial answer without usage or finish", n, r.usage, r.finish[0])
	}
	waitIdle(t, srv) // the counters move when the handler returns
	if st := srv.Stats(); st.MidStreamErrors != 1 {
		t.Errorf("Stats.MidStreamErrors = %d", st.MidStreamErrors)
	}
}

func TestDroppedConnectionSurfacesAsError(t *testing.T) {
	srv := start(t, llmsim.Config{})
	client := newClient(t, srv)
	for _, stream := range []bool{true, false} {
		t.Run(map[bool]string{true: "stream", false: "whole"}[stream], func(t *testing.T) {
			p := openai.ChatCompletionNewParams{Model: "gpt-4o-mini", Messages: userMsg("x"),
				Metadata: shared.Metadata{llmsim.ExtOutputTokens: "20", llmsim.ExtFault: "drop"}}
			var err error
			if stream {
				p.StreamOptions = includeUsage
				r := readChat(t, client.Chat.Completions.NewStreaming(ctxT(t), p), 1)
				err = r.err
				if r.usage != nil || r.finish[0] != "" {
					t.Errorf("a dropped stream finished: usage %v finish %q", r.usage, r.finish[0])
				}
			} else {
				_, err = client.Chat.Completions.New(ctxT(t), p)
			}
			if err == nil {
				t.Fatal("no error from a dropped connection")
			}
		})
	}
	waitIdle(t, srv)
	if st := srv.Stats(); st.Drops != 2 {
		t.Errorf("Stats.Drops = %d, want 2", st.Drops)
	}
}

func TestSpeculativeBurstsAreLargerForPredictablePrompts(t *testing.T) {
	srv := start(t, llmsim.Config{Profile: llmsim.Profile{TokensPerChunk: 1, SpeculativeMaxBurst: 8}})
	client := newClient(t, srv)
	perChunk := func(prompt string, meta shared.Metadata) float64 {
		meta[llmsim.ExtOutputTokens] = "400"
		r := readChat(t, client.Chat.Completions.NewStreaming(ctxT(t), openai.ChatCompletionNewParams{
			Model: "gpt-4o-mini", Messages: userMsg(prompt), StreamOptions: includeUsage, Metadata: meta}), 1)
		if r.err != nil || r.usage == nil {
			t.Fatalf("err %v", r.err)
		}
		return float64(r.usage.CompletionTokens) / float64(r.contentChunk)
	}
	easy := perChunk("[easy] Count to 100.", shared.Metadata{})
	hard := perChunk("[hard] Prove it.", shared.Metadata{})
	mid := perChunk("Something.", shared.Metadata{})
	p0 := perChunk("Anything.", shared.Metadata{llmsim.ExtPredictability: "0"})
	p1 := perChunk("Anything.", shared.Metadata{llmsim.ExtPredictability: "1"})
	t.Logf("tokens per chunk: p=0 %.2f, hard %.2f, default %.2f, easy %.2f, p=1 %.2f", p0, hard, mid, easy, p1)
	if !(p0 == 1 && p0 < hard && hard < mid && mid < easy && easy < p1 && p1 == 8) {
		t.Errorf("tokens per chunk do not grow with predictability")
	}
}
