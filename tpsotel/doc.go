// Package tpsotel reports a tpsmeter.Meter's measurements through
// OpenTelemetry: the GenAI client metrics of the semantic conventions, the
// project's own metrics under the "tpsmeter." prefix, and optionally span
// events and attributes on the caller's span.
//
// # Quick start
//
//	tel, err := tpsotel.New(tpsotel.WithMeterProvider(mp)) // default: otel.GetMeterProvider()
//	if err != nil {
//		log.Print(err) // the instruments that could be created still work
//	}
//	m := tpsmeter.New(tpsmeter.WithHooks(tel.Hooks()))
//
// or, in one line, tpsmeter.New(tpsotel.MeterOption()). The meter is named
// ScopeName ("github.com/tpsmeter/tpsmeter/tpsotel") at Version, in the
// otelhttp style.
//
// # Metrics
//
// GenAI client metrics (semconv v1.41.0, with the advised explicit
// buckets): gen_ai.client.operation.duration, .time_to_first_chunk,
// .time_per_output_chunk (s) and gen_ai.client.token.usage ({token}, from
// the server's usage; the meter's own count only with
// WithCountedTokenUsage). Client-side numbers are never recorded under
// gen_ai.server.* names.
//
// Own metrics (see ownmetrics.go and docs/opentelemetry.md):
// tpsmeter.time_to_first_token, tpsmeter.decode.rate, tpsmeter.token.gap,
// tpsmeter.chunk.tokens, tpsmeter.stalls, tpsmeter.stall.duration,
// tpsmeter.perceived.rate and tpsmeter.usage.difference.
//
// Attributes: gen_ai.operation.name, gen_ai.provider.name (both "_OTHER"
// when the request did not name them), gen_ai.request.model,
// gen_ai.response.model, server.address, server.port, error.type (on
// failure), gen_ai.token.type (token usage) and tpsmeter.output.bucket (the
// metrics recorded at the end of a request). Model names are capped
// (WithMaxModels, default 100 distinct names; the rest become "other").
// Per-chunk metrics carry only what is known when the chunk arrives: the
// request's attributes, not the response model, bucket or error.
//
// # Privacy
//
// No prompt or completion text ever reaches telemetry: the meter's hooks
// carry numbers and the request's description only, and error.type is a
// short class name, never an error message.
//
// # Cost
//
// Each request's attribute sets are built once and cached (a bounded,
// lock-free-to-read cache) and found once per request (the Start hook), so
// recording a chunk allocates nothing and takes no lock in this package.
// By default the three per-chunk histograms cost three or more OTel SDK
// Record calls per chunk (about 1 µs in all). The low-overhead mode
// aggregates them per request and merges them into a ChunkProducer (about
// 0.04 µs per chunk), which the application registers on its readers:
//
//	p := tpsotel.NewChunkProducer()
//	exporter, err := otelprom.New(otelprom.WithProducer(p)) // or sdkmetric.WithProducer(p) on any reader
//	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter))
//	tel, err := tpsotel.New(tpsotel.WithMeterProvider(mp), tpsotel.WithChunkProducer(p))
//
// See WithChunkProducer for what differs (cumulative only, no Views).
// docs/performance.md has the measured overhead.
//
// # Concurrency
//
// A Telemetry is safe for concurrent use by any number of meters and
// streams. Its hooks run on the goroutines the meter documents (Chunk,
// FirstToken and Finish on the goroutine consuming the stream).
package tpsotel
