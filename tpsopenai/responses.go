package tpsopenai

import (
	"context"
	"fmt"

	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/responses"

	"github.com/tpsmeter/tpsmeter"
)

// ResponsesNewStreaming is the signature of client.Responses.NewStreaming.
type ResponsesNewStreaming = func(context.Context, responses.ResponseNewParams, ...option.RequestOption) *ssestream.Stream[responses.ResponseStreamEventUnion]

// NewResponseStream starts measuring, calls newStreaming and wraps its
// stream, like NewChatStream. RequestInfo defaults: Model from params,
// Provider "openai", Operation "chat" (the OTel GenAI operation name for the
// Responses API).
func NewResponseStream(ctx context.Context, m *tpsmeter.Meter, newStreaming ResponsesNewStreaming, params responses.ResponseNewParams, opts ...option.RequestOption) *ResponseStream {
	ctx, rec := m.Start(ctx, tpsmeter.RequestInfo{Model: string(params.Model), Provider: "openai", Operation: "chat"})
	return WrapResponses(rec, newStreaming(ctx, params, opts...))
}

// WrapResponses meters a Responses API stream created with the context
// returned by Meter.Start.
func WrapResponses(rec *tpsmeter.Recorder, s *ssestream.Stream[responses.ResponseStreamEventUnion]) *ResponseStream {
	r := &ResponseStream{}
	r.s.init(rec, s, extractResponsesStream)
	abandonWith(r, rec)
	return r
}

// extractResponsesStream is ExtractResponses on the stream's current
// event, read in place or else copied to the stack (see extractChatStream).
func extractResponsesStream(rec *tpsmeter.Recorder, s *ssestream.Stream[responses.ResponseStreamEventUnion]) {
	if ev := current(s, responsesCurrent); ev != nil {
		ExtractResponses(rec, ev)
		return
	}
	ev := s.Current()
	ExtractResponses(rec, &ev)
}

var responsesCurrent = findCurrentField[responses.ResponseStreamEventUnion]()

// EventError is an in-band "error" event of the Responses API, recorded as
// the Result's error (the stream's own Err stays as the client reports it).
type EventError struct {
	Code, Message string
}

func (e *EventError) Error() string {
	return fmt.Sprintf("responses stream error event: %s: %s", e.Code, e.Message)
}

// ExtractResponses is the Extractor for Responses API events. Texts are
// counted per output item and content part (output_index, content_index).
func ExtractResponses(rec *tpsmeter.Recorder, ev *responses.ResponseStreamEventUnion) {
	sub := int(ev.OutputIndex)<<8 | int(ev.ContentIndex&0xff)
	switch ev.Type {
	case "response.output_text.delta":
		rec.Text(0, sub, tpsmeter.KindContent, ev.Delta)
	case "response.refusal.delta":
		rec.Text(0, sub, tpsmeter.KindRefusal, ev.Delta)
	case "response.function_call_arguments.delta", "response.custom_tool_call_input.delta":
		rec.Text(0, sub, tpsmeter.KindToolArgs, ev.Delta)
	case "response.reasoning_text.delta":
		rec.Text(0, sub, tpsmeter.KindReasoning, ev.Delta)
	case "response.reasoning_summary_text.delta":
		rec.Text(0, int(ev.OutputIndex)<<8|int(ev.SummaryIndex&0xff), tpsmeter.KindSummary, ev.Delta)
	case "response.output_item.added":
		if ev.Item.Type == "function_call" {
			rec.Text(0, sub, tpsmeter.KindToolName, ev.Item.Name)
		}
	case "response.created", "response.in_progress":
		rec.SetResponseModel(string(ev.Response.Model))
	case "response.completed", "response.incomplete", "response.failed":
		rec.SetResponseModel(string(ev.Response.Model))
		if ev.Response.JSON.Usage.Valid() {
			u := ev.Response.Usage
			rec.SetUsage(tpsmeter.Usage{
				PromptTokens:       u.InputTokens,
				CompletionTokens:   u.OutputTokens,
				ReasoningTokens:    u.OutputTokensDetails.ReasoningTokens,
				CachedPromptTokens: u.InputTokensDetails.CachedTokens,
				TotalTokens:        u.TotalTokens,
			})
		}
		reason := ev.Type[len("response."):]
		if ev.Type == "response.incomplete" && ev.Response.IncompleteDetails.Reason != "" {
			reason = string(ev.Response.IncompleteDetails.Reason)
		}
		rec.FinishReason(0, reason)
		rec.Terminal()
		if ev.Type == "response.failed" {
			rec.StreamError(&EventError{Code: string(ev.Response.Error.Code), Message: ev.Response.Error.Message})
		}
	case "error":
		rec.StreamError(&EventError{Code: ev.Code, Message: ev.Message})
		rec.Terminal()
	}
}
