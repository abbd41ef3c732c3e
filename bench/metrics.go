package bench

import "time"

// Direction says which way a metric is better; the zero value is Neutral.
type Direction int

const (
	// Neutral metrics (lengths, chunk sizes) are descriptive.
	Neutral Direction = 0
	// LowerIsBetter metrics: latencies, stalls.
	LowerIsBetter Direction = -1
	// HigherIsBetter metrics: token rates.
	HigherIsBetter Direction = 1
)

// Metric describes one distribution kept per cell. Metrics whose PerChunk
// is true have one value per output chunk, the others one per completed
// request. Metric values are plain and read-only.
type Metric struct {
	Name     string    `json:"name"`
	Label    string    `json:"label"`
	Unit     string    `json:"unit"`
	Better   Direction `json:"better"`
	PerChunk bool      `json:"per_chunk,omitempty"`
	Doc      string    `json:"doc"`
}

// Metric names, the keys of Cell.Metrics. Durations are in seconds, rates
// in tokens per second. docs/metrics.md defines the underlying Result
// fields.
const (
	MetricTTFT           = "ttft_s"
	MetricTTFC           = "ttfc_s"
	MetricDuration       = "duration_s"
	MetricDecodeTPS      = "decode_tps"
	MetricE2ETPS         = "e2e_tps"
	MetricPerceivedTPS   = "perceived_tps"
	MetricStalls         = "stalls"
	MetricStalledTime    = "stalled_s"
	MetricLongestGap     = "longest_gap_s"
	MetricOutputTokens   = "output_tokens"
	MetricTokensPerChunk = "tokens_per_chunk"
	MetricChunkGap       = "chunk_gap_s"
)

// Metrics lists every metric a cell keeps, in report order.
var Metrics = []Metric{
	{MetricTTFT, "TTFT", "s", LowerIsBetter, false, "time to first token: request start to the first chunk with visible output (Result.TTFT)"},
	{MetricTTFC, "time to first chunk", "s", LowerIsBetter, false, "request start to the first chunk of any kind, role-only included (Result.TimeToFirstChunk)"},
	{MetricDuration, "duration", "s", LowerIsBetter, false, "request start to the end of the stream (Result.Duration)"},
	{MetricDecodeTPS, "decode TPS", "tok/s", HigherIsBetter, false, "tokens after the first chunk per second of decode time (Result.DecodeTPS)"},
	{MetricE2ETPS, "end-to-end TPS", "tok/s", HigherIsBetter, false, "output tokens per second from the request's start (Result.E2ETPS)"},
	{MetricPerceivedTPS, "perceived TPS", "tok/s", HigherIsBetter, false, "pace at which the answer visibly unfolds after smoothing (Result.Perceived.PerceivedTPS)"},
	{MetricStalls, "stalls", "", LowerIsBetter, false, "gaps longer than the stall threshold (1 s) per request (Result.Perceived.Stalls)"},
	{MetricStalledTime, "stalled time", "s", LowerIsBetter, false, "total length of the stalls per request (Result.Perceived.StalledTime)"},
	{MetricLongestGap, "longest gap", "s", LowerIsBetter, false, "longest gap between two output chunks per request (Result.Perceived.LongestGap)"},
	{MetricOutputTokens, "output tokens", "tok", Neutral, false, "output tokens per request, counted by the meter (Result.OutputTokens)"},
	{MetricTokensPerChunk, "tokens per chunk", "tok", Neutral, true, "tokens credited to each output chunk (tpsmeter.ChunkInfo.Tokens); above 1 means batching or speculative decoding"},
	{MetricChunkGap, "chunk gap", "s", LowerIsBetter, true, "time between consecutive output chunks (tpsmeter.ChunkInfo.Gap)"},
}

// MetricByName returns the metric called name and true, or false.
func MetricByName(name string) (Metric, bool) {
	for _, m := range Metrics {
		if m.Name == name {
			return m, true
		}
	}
	return Metric{}, false
}

// recordValues calls add for every per-request metric value of a
// completed record, and for every per-chunk value.
func recordValues(r *Record, add func(name string, v float64)) {
	res := &r.Result
	if res.Chunks > 0 {
		add(MetricTTFC, res.TimeToFirstChunk.Seconds())
	}
	add(MetricDuration, res.Duration.Seconds())
	add(MetricOutputTokens, float64(res.OutputTokens))
	if res.OutputChunks == 0 {
		return
	}
	add(MetricTTFT, res.TTFT.Seconds())
	if res.DecodeTPS > 0 {
		add(MetricDecodeTPS, res.DecodeTPS)
	}
	if res.E2ETPS > 0 {
		add(MetricE2ETPS, res.E2ETPS)
	}
	if res.Perceived.PerceivedTPS > 0 {
		add(MetricPerceivedTPS, res.Perceived.PerceivedTPS)
	}
	add(MetricStalls, float64(res.Perceived.Stalls))
	add(MetricStalledTime, res.Perceived.StalledTime.Seconds())
	add(MetricLongestGap, res.Perceived.LongestGap.Seconds())
	var prevAt time.Duration
	credited := 0
	for i, c := range r.Chunks {
		tokens := c.Tokens
		credited += tokens
		if i == len(r.Chunks)-1 && len(r.Chunks) < MaxChunkPoints && res.OutputTokens > credited {
			// Tokens the counter held back until the end (the last word)
			// belong to the last chunk, as in Result.TokensPerChunk.
			tokens += res.OutputTokens - credited
		}
		add(MetricTokensPerChunk, float64(tokens))
		if i > 0 {
			add(MetricChunkGap, (c.At - prevAt).Seconds())
		}
		prevAt = c.At
	}
}
