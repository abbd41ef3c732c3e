package bench

import (
	"encoding/csv"
	"io"
	"strconv"
)

// CSVHeader is the first line of the per-request CSV. Durations are in
// seconds from the request's start (start_s from the run's start), rates
// in tokens per second.
var CSVHeader = []string{
	"run", "target", "phase", "idle_s", "seq", "prompt_id", "class", "bucket", "expected_bucket", "measured_bucket",
	"intended_tokens", "start_s", "lag_s", "status", "error_type", "error", "attempts",
	"ttfc_s", "ttft_s", "duration_s", "decode_time_s", "output_tokens", "reasoning_tokens", "usage_completion_tokens", "token_basis",
	"chunks", "output_chunks", "tokens_per_chunk_mean", "tokens_per_chunk_max",
	"decode_tps", "e2e_tps", "perceived_tps", "stalls", "stalled_s", "longest_gap_s", "finish_reason",
}

// CSVWriter writes Records as the per-request CSV (see CSVHeader). Use it
// as Config.OnRecord to stream the file while the run goes on. It is not
// safe for concurrent use (the runner serializes OnRecord calls).
type CSVWriter struct {
	w       *csv.Writer
	started bool
}

// NewCSVWriter returns a CSVWriter writing to w; the header is written
// with the first record (or by Flush when there was none).
func NewCSVWriter(w io.Writer) *CSVWriter { return &CSVWriter{w: csv.NewWriter(w)} }

// Write writes one record.
func (c *CSVWriter) Write(r Record) error {
	if !c.started {
		c.started = true
		if err := c.w.Write(CSVHeader); err != nil {
			return err
		}
	}
	res := &r.Result
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	status := "ok"
	if !r.OK() {
		status = "error"
	}
	measured := ""
	if res.OutputTokens > 0 {
		measured = res.OutputBucket
	}
	usage := ""
	if res.Usage != nil {
		usage = strconv.FormatInt(res.Usage.CompletionTokens, 10)
	}
	idle := ""
	if r.Phase == PhaseProbe {
		idle = f(r.Idle.Seconds())
	}
	return c.w.Write([]string{
		r.Run, r.Target, r.Phase, idle, strconv.Itoa(r.Seq), r.PromptID, r.Class, r.Bucket, r.ExpectedBucket, measured,
		strconv.Itoa(r.IntendedTokens), f(r.Start.Seconds()), f(r.Lag.Seconds()), status, r.ErrorType(), errorText(res.Err), strconv.Itoa(res.Attempts),
		f(res.TimeToFirstChunk.Seconds()), f(res.TTFT.Seconds()), f(res.Duration.Seconds()), f(res.DecodeTime.Seconds()),
		strconv.Itoa(res.OutputTokens), strconv.Itoa(res.ReasoningTokens), usage, string(res.TokenBasis),
		strconv.Itoa(res.Chunks), strconv.Itoa(res.OutputChunks), f(res.TokensPerChunk.Mean), f(res.TokensPerChunk.Max),
		f(res.DecodeTPS), f(res.E2ETPS), f(res.Perceived.PerceivedTPS), strconv.Itoa(res.Perceived.Stalls),
		f(res.Perceived.StalledTime.Seconds()), f(res.Perceived.LongestGap.Seconds()), res.FinishReason,
	})
}

// Flush writes any buffered data (and the header if no record was
// written) and returns the first write error.
func (c *CSVWriter) Flush() error {
	if !c.started {
		c.started = true
		if err := c.w.Write(CSVHeader); err != nil {
			return err
		}
	}
	c.w.Flush()
	return c.w.Error()
}
