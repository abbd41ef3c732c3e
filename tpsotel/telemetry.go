package tpsotel

import (
	"context"
	"errors"
	"fmt"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/tpsmeter/tpsmeter"
)

// Telemetry records a tpsmeter.Meter's measurements as OpenTelemetry
// metrics (and, with WithTracing, on the caller's spans). Create it once
// with New, then give its Hooks to the meter:
//
//	tel, err := tpsotel.New()
//	m := tpsmeter.New(tpsmeter.WithHooks(tel.Hooks()))
//
// The zero Telemetry is not usable; use New. A Telemetry is safe for
// concurrent use: one may serve any number of meters and streams.
type Telemetry struct {
	cfg    config
	genai  genAIInstruments
	own    ownInstruments
	models *modelCap

	chunkSets  setCache[chunkKey, *chunkAttrs]
	finishSets setCache[finishKey, *finishAttrs]
}

// New creates the instruments once, with the meter named ScopeName at
// Version from the configured MeterProvider (default: the global one).
//
// New always returns a usable Telemetry. An instrument the provider
// refuses is replaced by a no-op one; the error, wrapping ErrSetup, is
// returned and also passed to otel.Handle. New never panics.
func New(opts ...Option) (*Telemetry, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		if o != nil {
			o.apply(&cfg)
		}
	}
	t := &Telemetry{cfg: cfg, models: newModelCap(cfg.maxModels)}
	t.chunkSets.max = maxCachedSets
	t.finishSets.max = maxCachedSets
	if cfg.producer != nil {
		cfg.producer.init() // the metrics' boundaries, which recording reads
	}
	meter := cfg.meterProvider().Meter(ScopeName,
		metric.WithInstrumentationVersion(Version),
		metric.WithSchemaURL(semconv.SchemaURL))
	var err1, err2 error
	sdkPerChunk := cfg.producer == nil
	t.genai, err1 = newGenAIInstruments(meter, sdkPerChunk)
	t.own, err2 = newOwnInstruments(meter, sdkPerChunk)
	if err := errors.Join(err1, err2); err != nil {
		err = fmt.Errorf("%w: %w", ErrSetup, err)
		otel.Handle(err)
		return t, err
	}
	return t, nil
}

// MeterOption is the one-line form of New plus tpsmeter.WithHooks:
//
//	m := tpsmeter.New(tpsotel.MeterOption(tpsotel.WithMeterProvider(mp)))
//
// A setup error goes to otel.Handle (see New) and the option still installs
// the instruments that could be created.
func MeterOption(opts ...Option) tpsmeter.Option {
	t, _ := New(opts...)
	return tpsmeter.WithHooks(t.Hooks())
}

// Hooks returns the callbacks that record the metrics: Start (per request:
// resolves the request's attribute set once, so that Chunk does not look
// it up), Chunk (per output chunk:
// gen_ai.client.operation.time_per_output_chunk, tpsmeter.token.gap,
// tpsmeter.chunk.tokens; into the ChunkProducer with WithChunkProducer),
// Finish (per request: everything else) and, with WithTracing, FirstToken
// (the span event). The callbacks also work one by one (a Chunk given
// without Start finds the attribute set in a cache). Give them to tpsmeter.New with tpsmeter.WithHooks; they
// may be given to several meters.
func (t *Telemetry) Hooks() tpsmeter.Hooks {
	h := tpsmeter.Hooks{Start: t.onStart, Chunk: t.onChunk, Finish: t.onFinish}
	if t.cfg.producer != nil {
		h.Chunk = t.onChunkProducer
	}
	if t.cfg.tracing {
		h.FirstToken = t.onFirstToken
	}
	return h
}

// onStart resolves the request's per-chunk attribute set: the state that
// onChunk gets back in ChunkInfo.State (a *chunkAttrs), or in the
// ChunkProducer mode a *producerState, which also holds the request's
// values until they are flushed.
func (t *Telemetry) onStart(si tpsmeter.StartInfo) any {
	a := t.chunkAttrs(si.Request)
	if t.cfg.producer != nil {
		return newProducerState(a)
	}
	return a
}

// onChunk records the per-chunk metrics. It runs on the goroutine that
// consumes the stream, once per output chunk: no allocation and no lock
// in this package once the request's attribute set is cached. An
// instrument the application dropped with a View (Enabled false) costs
// one call.
func (t *Telemetry) onChunk(ci tpsmeter.ChunkInfo) {
	ctx := context.Background()
	perChunk := ci.Index > 0 && t.genai.perChunk.Enabled(ctx)
	tokenGap := ci.Index > 0 && ci.Tokens > 0 && t.own.tokenGap.Enabled(ctx)
	chunkTokens := t.own.chunkTokens.Enabled(ctx)
	if !perChunk && !tokenGap && !chunkTokens {
		return
	}
	a, _ := ci.State.(*chunkAttrs)
	if a == nil {
		a = t.chunkAttrs(ci.Request)
	}
	gap := ci.Gap.Seconds()
	if perChunk {
		t.genai.perChunk.Record(ctx, gap, a.opts...)
	}
	if tokenGap {
		g := gap / float64(ci.Tokens)
		for range ci.Tokens {
			t.own.tokenGap.Record(ctx, g, a.opts...)
		}
	}
	if chunkTokens {
		t.own.chunkTokens.Record(ctx, int64(ci.Tokens), a.opts...)
	}
}

// onChunkProducer is onChunk for WithChunkProducer: the same values into
// the request's producerState, flushed into the producer at least every
// flushEvery of the request's time and when it ends. A chunk without that
// state (a Chunk hook called without its Start) goes through a state of
// its own, flushed at once. No allocation and no lock once the attribute
// set has its points.
func (t *Telemetry) onChunkProducer(ci tpsmeter.ChunkInfo) {
	p := t.cfg.producer
	if st, _ := ci.State.(*producerState); st != nil {
		st.record(p, &ci)
		if ci.At-st.flushedAt >= flushEvery {
			st.flushedAt = ci.At
			st.flush(p)
		}
		return
	}
	st := producerState{attrs: t.chunkAttrs(ci.Request)}
	st.reset()
	st.record(p, &ci)
	st.flush(p)
}

// onFinish records the per-request metrics and decorates the caller's span.
func (t *Telemetry) onFinish(fi tpsmeter.FinishInfo) {
	if st, _ := fi.State.(*producerState); st != nil {
		st.flush(t.cfg.producer)
	}
	ctx := fi.Context
	if ctx == nil {
		ctx = context.Background()
	}
	res := &fi.Result
	info := fi.Request
	if info.Model == "" {
		info.Model = res.Model // the server's model when the request named none
	}
	a := t.finishAttrs(info, res)

	t.genai.duration.Record(ctx, res.Duration.Seconds(), a.all...)
	if res.Chunks > 0 {
		t.genai.firstChunk.Record(ctx, res.TimeToFirstChunk.Seconds(), a.all...)
	}
	if u := res.Usage; u != nil {
		t.genai.tokenUsage.Record(ctx, u.PromptTokens, a.input...)
		t.genai.tokenUsage.Record(ctx, u.CompletionTokens, a.output...)
		t.own.usageDiff.Record(ctx, res.UsageDiff, a.all...)
	} else if t.cfg.countedUsage && a.counted != nil {
		if n := res.OutputTokens + res.ReasoningTokens; n > 0 {
			t.genai.tokenUsage.Record(ctx, int64(n), a.counted...)
		}
	}
	if res.OutputChunks > 0 {
		t.own.ttft.Record(ctx, res.TTFT.Seconds(), a.all...)
		if res.DecodeTPS > 0 {
			t.own.decodeRate.Record(ctx, res.DecodeTPS, a.all...)
		}
		if p := res.Perceived.PerceivedTPS; p > 0 {
			t.own.perceivedRate.Record(ctx, p, a.all...)
		}
		t.own.stalls.Record(ctx, int64(res.Perceived.Stalls), a.all...)
		t.own.stallDuration.Record(ctx, res.Perceived.StalledTime.Seconds(), a.all...)
	}
	if t.cfg.tracing {
		t.decorateSpan(ctx, res)
	}
}
