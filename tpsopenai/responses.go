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
// event, copied once to the stack (see extractChatStream).
func extractResponsesStream(rec *tpsmeter.Recorder, s *ssestream.Stream[responses.ResponseStreamEventUnion]) {
	ev := s.Current()
	ExtractResponses(rec, &ev)
}

// deltaKind returns the Kind of the text that a delta event of the given
// type carries.
func deltaKind(typ string) (tpsmeter.Kind, bool) {
	switch typ {
	case "response.output_text.delta":
		return tpsmeter.KindContent, true
	case "response.refusal.delta":
		return tpsmeter.KindRefusal, true
	case "response.function_call_arguments.delta", "response.custom_tool_call_input.delta":
		return tpsmeter.KindToolArgs, true
	case "response.reasoning_text.delta":
		return tpsmeter.KindReasoning, true
	case "response.reasoning_summary_text.delta":
		return tpsmeter.KindSummary, true
	}
	return 0, false
}

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
	if kind, ok := deltaKind(ev.Type); ok {
		if kind == tpsmeter.KindSummary {
			sub = int(ev.OutputIndex)<<8 | int(ev.SummaryIndex&0xff)
		}
		rec.Text(0, sub, kind, ev.Delta)
		return
	}
	switch ev.Type {
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
