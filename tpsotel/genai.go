package tpsotel

import (
	"errors"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/semconv/v1.41.0/genaiconv"
)

// The OpenTelemetry GenAI client metrics (semantic conventions v1.41.0,
// status Development), with the bucket boundaries the conventions advise.
// Client-side numbers are never recorded under gen_ai.server.* names.
//
//	gen_ai.client.operation.duration             s        whole request, Start to end of stream
//	gen_ai.client.operation.time_to_first_chunk  s        Start to the first chunk of any kind
//	gen_ai.client.operation.time_per_output_chunk s       each output chunk after the first: gap since the previous output chunk
//	gen_ai.client.token.usage                    {token}  server usage, input and output (counted output only when opted in)

// durationBuckets are the advised boundaries of the three GenAI client
// duration histograms.
var durationBuckets = []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}

// tokenUsageBuckets are the advised boundaries of gen_ai.client.token.usage.
var tokenUsageBuckets = []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864}

// genAIInstruments are the GenAI client instruments.
type genAIInstruments struct {
	duration   metric.Float64Histogram
	firstChunk metric.Float64Histogram
	perChunk   metric.Float64Histogram
	tokenUsage metric.Int64Histogram
}

// newGenAIInstruments creates the GenAI client instruments with meter. An
// instrument that cannot be created is a no-op one; its error is returned.
// With perChunk false time_per_output_chunk is not created (a ChunkProducer
// aggregates it) and stays nil.
func newGenAIInstruments(meter metric.Meter, perChunk bool) (genAIInstruments, error) {
	var g genAIInstruments
	var errs []error
	d, err := genaiconv.NewClientOperationDuration(meter, metric.WithExplicitBucketBoundaries(durationBuckets...))
	g.duration, errs = d.Inst(), append(errs, err)
	f, err := genaiconv.NewClientOperationTimeToFirstChunk(meter, metric.WithExplicitBucketBoundaries(durationBuckets...))
	g.firstChunk, errs = f.Inst(), append(errs, err)
	if perChunk {
		p, err := genaiconv.NewClientOperationTimePerOutputChunk(meter, metric.WithExplicitBucketBoundaries(durationBuckets...))
		g.perChunk, errs = p.Inst(), append(errs, err)
	}
	u, err := genaiconv.NewClientTokenUsage(meter, metric.WithExplicitBucketBoundaries(tokenUsageBuckets...))
	g.tokenUsage, errs = u.Inst(), append(errs, err)
	return g, errors.Join(errs...)
}
