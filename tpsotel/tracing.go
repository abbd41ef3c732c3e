package tpsotel

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/tpsmeter/tpsmeter"
)

// FirstTokenEvent is the name of the span event added, with WithTracing, to
// the caller's span when the first output token arrives. Its attributes are
// tpsmeter.time_to_first_token (seconds) and tpsmeter.first_chunk.tokens.
const FirstTokenEvent = "tpsmeter.first_token"

// onFirstToken adds the first-token event to the caller's span.
func (t *Telemetry) onFirstToken(fi tpsmeter.FirstTokenInfo) {
	if fi.Context == nil {
		return
	}
	span := trace.SpanFromContext(fi.Context)
	if !span.IsRecording() {
		return
	}
	span.AddEvent(FirstTokenEvent, trace.WithAttributes(
		attribute.Float64(nameTTFT, fi.TTFT.Seconds()),
		attribute.Int(ownPrefix+"first_chunk.tokens", fi.Tokens),
	))
}

// decorateSpan sets the Result's main fields as attributes of the caller's
// span. Numbers only: no prompt or completion text ever reaches a span.
// Model names are not capped here (span attributes are not aggregated).
func (t *Telemetry) decorateSpan(ctx context.Context, res *tpsmeter.Result) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	kvs := make([]attribute.KeyValue, 0, 28)
	if res.Operation != "" {
		kvs = append(kvs, semconv.GenAIOperationNameKey.String(res.Operation))
	}
	if res.Provider != "" {
		kvs = append(kvs, semconv.GenAIProviderNameKey.String(res.Provider))
	}
	if res.Model != "" {
		kvs = append(kvs, semconv.GenAIRequestModelKey.String(res.Model))
	}
	if res.ResponseModel != "" {
		kvs = append(kvs, semconv.GenAIResponseModelKey.String(res.ResponseModel))
	}
	if res.FinishReason != "" {
		kvs = append(kvs, semconv.GenAIResponseFinishReasonsKey.StringSlice([]string{res.FinishReason}))
	}
	if u := res.Usage; u != nil {
		kvs = append(kvs,
			semconv.GenAIUsageInputTokensKey.Int64(u.PromptTokens),
			semconv.GenAIUsageOutputTokensKey.Int64(u.CompletionTokens),
			attribute.Int64(nameUsageDiff, res.UsageDiff))
	}
	if res.ErrorType != "" {
		kvs = append(kvs, semconv.ErrorTypeKey.String(res.ErrorType))
	}
	kvs = append(kvs,
		attribute.String(ownPrefix+"status", string(res.Status)),
		attribute.Float64(ownPrefix+"duration", res.Duration.Seconds()),
		attribute.Int(ownPrefix+"output.tokens", res.OutputTokens),
		attribute.String(string(TokenBasisKey), string(res.TokenBasis)),
		attribute.Int(ownPrefix+"output.chunks", res.OutputChunks),
		attribute.String(string(OutputBucketKey), res.OutputBucket),
	)
	if res.Chunks > 0 {
		kvs = append(kvs, attribute.Float64(ownPrefix+"time_to_first_chunk", res.TimeToFirstChunk.Seconds()))
	}
	if res.ReasoningTokens > 0 {
		kvs = append(kvs, attribute.Int(ownPrefix+"reasoning.tokens", res.ReasoningTokens))
	}
	if res.OutputChunks > 0 {
		kvs = append(kvs,
			attribute.Float64(nameTTFT, res.TTFT.Seconds()),
			attribute.Float64(nameDecodeRate, res.DecodeTPS),
			attribute.Float64(ownPrefix+"e2e.rate", res.E2ETPS),
			attribute.Float64(namePerceivedRate, res.Perceived.PerceivedTPS),
			attribute.Int(nameStalls, res.Perceived.Stalls),
			attribute.Float64(nameStallDuration, res.Perceived.StalledTime.Seconds()),
		)
	}
	span.SetAttributes(kvs...)
}
