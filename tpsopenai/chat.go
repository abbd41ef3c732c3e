package tpsopenai

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/tpsmeter/tpsmeter"
)

// ChatNewStreaming is the signature of client.Chat.Completions.NewStreaming.
type ChatNewStreaming = func(context.Context, openai.ChatCompletionNewParams, ...option.RequestOption) *ssestream.Stream[openai.ChatCompletionChunk]

// NewChatStream starts measuring (before the request is sent), calls
// newStreaming with a context that carries the measurement, and wraps the
// stream it returns. RequestInfo defaults: Model from params, Provider
// "openai", Operation "chat"; override any of them with
// tpsmeter.WithRequestInfo on ctx.
func NewChatStream(ctx context.Context, m *tpsmeter.Meter, newStreaming ChatNewStreaming, params openai.ChatCompletionNewParams, opts ...option.RequestOption) *ChatStream {
	ctx, rec := m.Start(ctx, tpsmeter.RequestInfo{Model: string(params.Model), Provider: "openai", Operation: "chat"})
	return WrapChat(rec, newStreaming(ctx, params, opts...))
}

// WrapChat meters a Chat Completions stream that was created with the
// context returned by Meter.Start (for callers that create streams in their
// own way). The Recorder must have been started before the request was sent.
func WrapChat(rec *tpsmeter.Recorder, s *ssestream.Stream[openai.ChatCompletionChunk]) *ChatStream {
	c := &ChatStream{}
	c.s.init(rec, s, extractChatStream)
	abandonWith(c, rec)
	return c
}

// ExtractChat is the Extractor for Chat Completions chunks. ChatStream
// calls it on a stack copy of openai-go's current chunk; it is exported
// for tpsmeter.Wrap and tpsmeter.Seq over iterators of other shapes.
func ExtractChat(rec *tpsmeter.Recorder, c *openai.ChatCompletionChunk) {
	rec.SetResponseModel(c.Model)
	for i := range c.Choices {
		ch := &c.Choices[i]
		idx := int(ch.Index)
		d := &ch.Delta
		rec.Content(idx, d.Content)
		rec.Refusal(idx, d.Refusal)
		for j := range d.ToolCalls {
			tc := &d.ToolCalls[j]
			rec.ToolCall(idx, int(tc.Index), tc.Function.Name, tc.Function.Arguments)
		}
		if d.FunctionCall.Name != "" || d.FunctionCall.Arguments != "" {
			rec.ToolCall(idx, -1, d.FunctionCall.Name, d.FunctionCall.Arguments)
		}
		if len(d.JSON.ExtraFields) > 0 {
			for _, key := range reasoningKeys {
				if f, ok := d.JSON.ExtraFields[key]; ok {
					rec.Reasoning(idx, jsonString(f.Raw()))
				}
			}
		}
		rec.FinishReason(idx, ch.FinishReason)
	}
	if c.JSON.Usage.Valid() {
		rec.SetUsage(chatUsage(c.Usage))
	} else if len(c.JSON.ExtraFields) > 0 {
		if f, ok := c.JSON.ExtraFields["x_groq"]; ok {
			var x struct {
				Usage *openai.CompletionUsage `json:"usage"`
			}
			if json.Unmarshal([]byte(f.Raw()), &x) == nil && x.Usage != nil {
				rec.SetUsage(chatUsage(*x.Usage))
			}
		}
	}
}

// extractChatStream is ExtractChat on the stream's current chunk, read in
// place (see currentField), or else on a copy on the stack: Current
// returns the chunk by value, and the compiler copies the whole struct for
// every s.Current().Field, so reading fields one by one would copy it per
// field.
func extractChatStream(rec *tpsmeter.Recorder, s *ssestream.Stream[openai.ChatCompletionChunk]) {
	if c := current(s, chatCurrent); c != nil {
		ExtractChat(rec, c)
		return
	}
	c := s.Current()
	ExtractChat(rec, &c)
}

var chatCurrent = findCurrentField[openai.ChatCompletionChunk]()

// reasoningKeys are the delta fields third-party servers use for reasoning
// text: DeepSeek and vLLM send reasoning_content, Ollama and OpenRouter reasoning.
var reasoningKeys = [...]string{"reasoning_content", "reasoning"}

func chatUsage(u openai.CompletionUsage) tpsmeter.Usage {
	return tpsmeter.Usage{
		PromptTokens:       u.PromptTokens,
		CompletionTokens:   u.CompletionTokens,
		ReasoningTokens:    u.CompletionTokensDetails.ReasoningTokens,
		CachedPromptTokens: u.PromptTokensDetails.CachedTokens,
		TotalTokens:        u.TotalTokens,
	}
}

// jsonString decodes a raw JSON string value; anything else (null, numbers,
// objects) gives "". Plain strings without escapes are sliced, not copied.
func jsonString(raw string) string {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return ""
	}
	if !strings.ContainsRune(raw, '\\') {
		return raw[1 : len(raw)-1]
	}
	var s string
	if json.Unmarshal([]byte(raw), &s) != nil {
		return ""
	}
	return s
}
