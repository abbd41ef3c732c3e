package tpsotel

import (
	"errors"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
)

// The project's own metrics: everything the GenAI conventions do not name,
// all under the one prefix "tpsmeter." (Prometheus shows them as
// tpsmeter_*). docs/opentelemetry.md lists them with their buckets; the
// definitions of the numbers are those of docs/metrics.md.
//
//	name                         unit         recorded                                   value
//	tpsmeter.time_to_first_token s            at the end of a request with output        Result.TTFT (first visible output)
//	tpsmeter.decode.rate         {token}/s    at the end, when DecodeTPS > 0             Result.DecodeTPS
//	tpsmeter.perceived.rate      {token}/s    at the end, when PerceivedTPS > 0          Result.Perceived.PerceivedTPS
//	tpsmeter.stalls              {stall}      at the end of a request with output        Result.Perceived.Stalls
//	tpsmeter.stall.duration      s            at the end of a request with output        Result.Perceived.StalledTime
//	tpsmeter.usage.difference    {token}      at the end, when the server sent usage     Result.UsageDiff
//	tpsmeter.token.gap           s            per output chunk with k>0 tokens, k times  chunk gap / k
//	tpsmeter.chunk.tokens        {token}      per output chunk                           tokens credited to the chunk
const ownPrefix = "tpsmeter."

// Own metric names.
const (
	nameTTFT          = ownPrefix + "time_to_first_token"
	nameDecodeRate    = ownPrefix + "decode.rate"
	namePerceivedRate = ownPrefix + "perceived.rate"
	nameStalls        = ownPrefix + "stalls"
	nameStallDuration = ownPrefix + "stall.duration"
	nameUsageDiff     = ownPrefix + "usage.difference"
	nameTokenGap      = ownPrefix + "token.gap"
	nameChunkTokens   = ownPrefix + "chunk.tokens"
)

// Units and descriptions of the two per-chunk own metrics, shared by the
// SDK instruments and ChunkProducer so that both export the same metadata.
const (
	unitTokenGap    = "s"
	descTokenGap    = "Per-token gap: each output chunk's gap divided by its tokens, recorded once per token."
	unitChunkTokens = "{token}"
	descChunkTokens = "Tokens credited to one output chunk."
)

// ttftBuckets are finer than the GenAI duration buckets where people feel
// the difference (0.1 s feels instant, 1 s keeps the flow of thought, 10 s
// loses attention), so that a P95 read from them is close to the truth.
var ttftBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6, 0.75, 1, 1.25, 1.5, 2, 2.5, 3, 4, 5, 7.5, 10, 15, 20, 30, 60}

// rateBuckets cover 1 to 1,000 tokens per second, roughly log-spaced
// (reading pace is about 5 tokens/s; fast servers stream several hundred).
var rateBuckets = []float64{1, 2, 3, 5, 7.5, 10, 15, 20, 25, 30, 40, 50, 60, 75, 100, 125, 150, 200, 250, 300, 400, 500, 750, 1000}

// tokenGapBuckets cover per-token gaps from 0.5 ms (2,000 tokens/s) to 5 s.
var tokenGapBuckets = []float64{0.0005, 0.001, 0.002, 0.003, 0.005, 0.0075, 0.01, 0.015, 0.02, 0.025, 0.03, 0.04, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5, 1, 2, 5}

// chunkTokenBuckets: 0 (a credit lagging by a chunk), one token per chunk,
// and the packed chunks of some providers.
var chunkTokenBuckets = []float64{0, 1, 2, 3, 4, 5, 6, 8, 10, 16, 32, 64, 128, 256, 1024}

// stallBuckets: the number of stalls in one request; 0 is its own bucket.
var stallBuckets = []float64{0, 1, 2, 3, 5, 10, 20}

// stallDurationBuckets: stalled time of one request; 0 is its own bucket
// and every stall lasts at least the stall threshold (default 1 s).
var stallDurationBuckets = []float64{0, 1, 1.5, 2, 3, 5, 7.5, 10, 15, 20, 30, 60, 120, 300}

// usageDiffBuckets: server-billed minus counted output tokens, symmetric
// around 0 (1 for an end-of-turn token; thousands for hidden reasoning).
var usageDiffBuckets = []float64{-1000, -100, -10, -5, -2, -1, 0, 1, 2, 5, 10, 100, 1000, 10000, 100000}

// ownInstruments are the project's own instruments.
type ownInstruments struct {
	ttft          metric.Float64Histogram
	decodeRate    metric.Float64Histogram
	perceivedRate metric.Float64Histogram
	stalls        metric.Int64Histogram
	stallDuration metric.Float64Histogram
	usageDiff     metric.Int64Histogram
	tokenGap      metric.Float64Histogram
	chunkTokens   metric.Int64Histogram
}

// newOwnInstruments creates the project's own instruments with meter. An
// instrument that the provider refused without returning one is a no-op;
// every error is returned. With perChunk false the two per-chunk
// instruments are not created (a ChunkProducer aggregates them) and stay
// nil.
func newOwnInstruments(meter metric.Meter, perChunk bool) (ownInstruments, error) {
	var o ownInstruments
	var errs []error
	f := func(name, unit, desc string, b []float64) metric.Float64Histogram {
		h, err := meter.Float64Histogram(name, metric.WithUnit(unit), metric.WithDescription(desc), metric.WithExplicitBucketBoundaries(b...))
		if err != nil {
			errs = append(errs, err)
		}
		if h == nil {
			return noop.Float64Histogram{}
		}
		return h
	}
	i := func(name, unit, desc string, b []float64) metric.Int64Histogram {
		h, err := meter.Int64Histogram(name, metric.WithUnit(unit), metric.WithDescription(desc), metric.WithExplicitBucketBoundaries(b...))
		if err != nil {
			errs = append(errs, err)
		}
		if h == nil {
			return noop.Int64Histogram{}
		}
		return h
	}
	o.ttft = f(nameTTFT, "s", "Time from the start of the request to the first chunk with visible output (TTFT).", ttftBuckets)
	o.decodeRate = f(nameDecodeRate, "{token}/s", "Output tokens per second after the first output chunk (decode TPS).", rateBuckets)
	o.perceivedRate = f(namePerceivedRate, "{token}/s", "Pace at which the answer visibly unfolds for a reader (perceived TPS).", rateBuckets)
	o.stalls = i(nameStalls, "{stall}", "Number of stalls (gaps longer than the stall threshold) in one request.", stallBuckets)
	o.stallDuration = f(nameStallDuration, "s", "Total stalled time of one request.", stallDurationBuckets)
	o.usageDiff = i(nameUsageDiff, "{token}", "Server-reported completion tokens minus the tokens counted in the stream.", usageDiffBuckets)
	if perChunk {
		o.tokenGap = f(nameTokenGap, unitTokenGap, descTokenGap, tokenGapBuckets)
		o.chunkTokens = i(nameChunkTokens, unitChunkTokens, descChunkTokens, chunkTokenBuckets)
	}
	return o, errors.Join(errs...)
}
