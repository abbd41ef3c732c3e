package tpsotel

import (
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
)

// Option configures New. Options are applied in order; a nil argument to an
// option is ignored and leaves the default in place.
type Option interface {
	apply(*config)
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// DefaultMaxModels is the default cap on distinct model names (see
// WithMaxModels).
const DefaultMaxModels = 100

// OverflowModel is the value that gen_ai.request.model and
// gen_ai.response.model take for every model name beyond the cap set by
// WithMaxModels.
const OverflowModel = "other"

type config struct {
	provider     metric.MeterProvider
	tracing      bool
	countedUsage bool
	maxModels    int
	producer     *ChunkProducer
}

func defaultConfig() config {
	return config{maxModels: DefaultMaxModels}
}

func (c *config) meterProvider() metric.MeterProvider {
	if c.provider != nil {
		return c.provider
	}
	return otel.GetMeterProvider()
}

// WithMeterProvider sets the MeterProvider that creates the instruments.
// The default (nil, or no option) is the global provider,
// otel.GetMeterProvider(), read once by New.
func WithMeterProvider(p metric.MeterProvider) Option {
	return optionFunc(func(c *config) {
		if p != nil {
			c.provider = p
		}
	})
}

// WithTracing turns span decoration on or off (default off). When on, the
// first output token of a request adds the span event "tpsmeter.first_token"
// to the span found in the request's context (the one given to
// tpsmeter.Meter.Start), and the end of the request sets the Result's main
// fields as attributes on that span. Only a recording span is touched; this
// package never starts spans of its own, so it needs no TracerProvider: the
// caller's span comes from whatever provider the caller uses.
func WithTracing(on bool) Option {
	return optionFunc(func(c *config) { c.tracing = on })
}

// WithCountedTokenUsage(true) opts in to recording the meter's own count of
// output tokens under gen_ai.client.token.usage (gen_ai.token.type=output)
// for requests whose server reported no usage, with the attribute
// tpsmeter.token.basis saying how they were counted (exact, estimate or
// custom). The default, false, follows the GenAI semantic conventions: only
// server-reported usage is recorded as token usage.
func WithCountedTokenUsage(on bool) Option {
	return optionFunc(func(c *config) { c.countedUsage = on })
}

// WithMaxModels caps the number of distinct model names recorded as
// gen_ai.request.model and gen_ai.response.model (one shared set of names
// for both). The first n distinct names seen are kept; later new names are
// recorded as OverflowModel. Default DefaultMaxModels; n <= 0 keeps the
// default.
func WithMaxModels(n int) Option {
	return optionFunc(func(c *config) {
		if n > 0 {
			c.maxModels = n
		}
	})
}

// WithChunkProducer records the three per-chunk histograms
// (gen_ai.client.operation.time_per_output_chunk, tpsmeter.token.gap,
// tpsmeter.chunk.tokens) into p instead of the MeterProvider: the
// low-overhead mode, about ten times cheaper per chunk than the SDK's
// Record calls (docs/performance.md). Those three instruments are then not
// created on the SDK meter; every other metric still goes through the
// MeterProvider. Default nil: everything through the MeterProvider, no
// extra wiring.
//
// p must be registered with the MeterProvider's readers
// (sdkmetric.WithProducer(p) on a ManualReader or PeriodicReader,
// otelprom.WithProducer(p) on the Prometheus exporter); with a reader that
// does not have it, the three metrics are not exported (recording still
// works and nothing fails). Their temporality is cumulative whatever the
// reader's temporality selector says, the MeterProvider's Views and
// cardinality limit do not apply to them, and they carry no exemplars; see
// ChunkProducer.
func WithChunkProducer(p *ChunkProducer) Option {
	return optionFunc(func(c *config) {
		if p != nil {
			c.producer = p
		}
	})
}
