package tpsmeter

import (
	"time"

	"github.com/tpsmeter/tpsmeter/perceive"
	"github.com/tpsmeter/tpsmeter/stats"
)

// Basis says where a token count comes from. Every count the meter reports
// carries one, so a reader never mistakes an estimate for a measurement.
type Basis string

const (
	// BasisExact: counted with the model's own tiktoken encoding; equal to
	// tiktoken's count of the full text of each output, whatever the chunking.
	BasisExact Basis = "exact"
	// BasisEstimate: counted with an encoding that is not known to be the
	// model's (for example o200k_base for a Llama or Qwen model), or with a
	// character-based estimator. Close, not exact.
	BasisEstimate Basis = "estimate"
	// BasisCustom: counted by a tokenizer the user plugged in with WithTokenizer.
	BasisCustom Basis = "custom"
)

// Status says whether a stream ran to its natural end.
type Status string

const (
	// StatusComplete: the stream ended normally ([DONE], a finish reason or a
	// terminal Responses event) and no error was seen.
	StatusComplete Status = "complete"
	// StatusPartial: the stream ended early (error, cancellation, truncation,
	// or the caller stopped reading). Every field still describes what arrived.
	StatusPartial Status = "partial"
)

// Usage is what the server reported about token usage, when it did.
type Usage struct {
	PromptTokens       int64 `json:"prompt_tokens"`
	CompletionTokens   int64 `json:"completion_tokens"`
	ReasoningTokens    int64 `json:"reasoning_tokens,omitempty"`
	CachedPromptTokens int64 `json:"cached_prompt_tokens,omitempty"`
	TotalTokens        int64 `json:"total_tokens"`
}

// Result is the measurement of one streamed request. All durations are
// measured from Start (taken before the request was sent) on the meter's
// Clock; a zero duration whose event never happened is flagged by the
// corresponding count (for example TTFT is meaningful only when
// OutputTokens > 0 or OutputChunks > 0). docs/metrics.md defines every field.
type Result struct {
	// Identity of the request, as given in RequestInfo (Model falls back to
	// the model the server reported when the request named none).
	Model         string `json:"model"`
	ResponseModel string `json:"response_model,omitempty"`
	Provider      string `json:"provider,omitempty"`
	Operation     string `json:"operation,omitempty"`
	Class         string `json:"class,omitempty"`
	// OutputBucket is the output-length bucket of OutputTokens (see
	// WithLengthBuckets), used to group aggregates.
	OutputBucket string `json:"output_bucket"`

	Start time.Time `json:"start"`

	// Wire timings, set only when the request went through Meter.Middleware
	// or Meter.Transport: response headers of the last attempt, and its
	// first body byte. Attempts counts HTTP attempts (1 + retries).
	TimeToHeaders   time.Duration `json:"time_to_headers,omitempty"`
	TimeToFirstByte time.Duration `json:"time_to_first_byte,omitempty"`
	Attempts        int           `json:"attempts,omitempty"`

	// TimeToFirstChunk: Start to the first chunk or event of any kind
	// (role-only and empty chunks included), as OpenLLMetry and OTel's
	// time_to_first_chunk define it.
	TimeToFirstChunk time.Duration `json:"time_to_first_chunk"`
	// TTFT: Start to the first chunk that carries non-empty output (content,
	// refusal or tool-call text). Role-only, empty and reasoning-only chunks
	// do not count.
	TTFT time.Duration `json:"ttft"`
	// TimeToFirstReasoning: Start to the first non-empty reasoning delta
	// (zero when there was none).
	TimeToFirstReasoning time.Duration `json:"time_to_first_reasoning,omitempty"`
	// Duration: Start to the end of the stream (last event, error or Close).
	Duration time.Duration `json:"duration"`
	// DecodeTime: first output chunk to last output chunk.
	DecodeTime time.Duration `json:"decode_time"`

	// OutputTokens = ContentTokens + RefusalTokens + ToolTokens: the tokens of
	// what the model answered, counted by the meter (see TokenBasis).
	OutputTokens    int `json:"output_tokens"`
	ContentTokens   int `json:"content_tokens"`
	RefusalTokens   int `json:"refusal_tokens,omitempty"`
	ToolTokens      int `json:"tool_tokens,omitempty"`
	ReasoningTokens int `json:"reasoning_tokens,omitempty"`
	// SummaryTokens counts reasoning-summary text (Responses API), which
	// servers do not bill as output; it is not part of UsageDiff.
	SummaryTokens int `json:"summary_tokens,omitempty"`
	// TokenBasis and Encoding say how the tokens above were counted.
	TokenBasis Basis  `json:"token_basis"`
	Encoding   string `json:"encoding,omitempty"`

	// Usage is what the server reported (nil when it reported nothing).
	Usage *Usage `json:"usage,omitempty"`
	// UsageDiff = Usage.CompletionTokens - (OutputTokens + ReasoningTokens)
	// when Usage is set: positive when the server billed tokens the stream
	// did not show (hidden reasoning, tool-call framing, end-of-turn token).
	UsageDiff int64 `json:"usage_diff,omitempty"`

	// Chunks counts every chunk/event; OutputChunks those with output.
	Chunks       int `json:"chunks"`
	OutputChunks int `json:"output_chunks"`
	// Choices is the number of choices (n) seen in the stream.
	Choices int `json:"choices"`
	// ToolCalls is the number of distinct tool calls seen (all choices).
	ToolCalls int `json:"tool_calls,omitempty"`

	// DecodeTPS = (OutputTokens - first chunk's tokens) / DecodeTime: the
	// rate after the first output chunk. With one token per chunk it equals
	// the usual (N-1)/(t_last - t_first). Zero when DecodeTime is zero.
	DecodeTPS float64 `json:"decode_tps"`
	// E2ETPS = OutputTokens / (t_last_output - Start).
	E2ETPS float64 `json:"e2e_tps"`
	// UsageTPS = Usage.CompletionTokens / (t_last_output - Start): includes
	// tokens the server generated but did not stream (hidden reasoning).
	UsageTPS float64 `json:"usage_tps,omitempty"`

	// TokensPerChunk: distribution of token credits over output chunks.
	TokensPerChunk stats.Summary `json:"tokens_per_chunk"`
	// ChunkGap: gaps in seconds between consecutive output chunks.
	ChunkGap stats.Summary `json:"chunk_gap_seconds"`
	// TokenGap: per-token gaps in seconds: a chunk credited with k tokens
	// after a gap g contributes k samples of g/k (see docs/metrics.md).
	TokenGap stats.Summary `json:"token_gap_seconds"`

	// Perceived is the perceived-responsiveness report: stalls, smoothness,
	// rendered speed and reading pace (package perceive).
	Perceived perceive.Report `json:"perceived"`

	// FinishReason is the first non-empty finish reason seen (choice 0's
	// when several choices finished).
	FinishReason string `json:"finish_reason,omitempty"`
	Status       Status `json:"status"`
	// Err is the error that ended the stream, unchanged, or one of
	// ErrTruncated and ErrClosedEarly; nil for a complete stream.
	Err error `json:"-"`
	// ErrorType is a short, low-cardinality name for Err ("" when nil).
	ErrorType string `json:"error_type,omitempty"`
}

// Partial reports whether the stream ended before its natural end.
func (r *Result) Partial() bool { return r.Status == StatusPartial }
