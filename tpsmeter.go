package tpsmeter

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tpsmeter/tpsmeter/perceive"
	"github.com/tpsmeter/tpsmeter/stats"
	"github.com/tpsmeter/tpsmeter/tokenize"
)

// Meter measures streamed LLM requests. It holds the configuration, the
// callbacks and the aggregate statistics of every request it measured.
// Create one per application with New and share it: a Meter is safe for
// concurrent use by any number of goroutines.
type Meter struct {
	cfg        config
	err        error
	groups     *stats.Groups[*groupAgg]
	panics     atomic.Int64
	started    atomic.Int64
	finished   atomic.Int64
	stallLimit time.Duration
	prepared   sync.Map // encodings already loaded
}

// New returns a Meter configured by opts. A configuration error (for
// example an unknown encoding name) does not stop New: the option is
// ignored and the error is reported by Meter.Err.
func New(opts ...Option) *Meter {
	cfg := defaultConfig()
	for _, o := range opts {
		if o != nil {
			o.apply(&cfg)
		}
	}
	m := &Meter{cfg: cfg}
	if cfg.encoding != "" {
		if _, err := tokenize.NewCounter(cfg.encoding); err != nil {
			m.err = fmt.Errorf("tpsmeter: WithEncoding: %w", err)
			m.cfg.encoding = ""
		}
	}
	if !cfg.noAggregates {
		m.groups = stats.NewGroups(cfg.maxGroups, func(stats.Key) *groupAgg { return newGroupAgg() })
	}
	var t perceive.Tracker
	t.Reset(m.cfg.perceive)
	m.stallLimit = t.StallThreshold()
	return m
}

// Err reports a configuration error found by New, or nil.
func (m *Meter) Err() error { return m.err }

// HookPanics returns how many panics were recovered from Hooks callbacks
// and error classifiers.
func (m *Meter) HookPanics() int64 { return m.panics.Load() }

// InFlight returns the number of requests started and not yet finished.
func (m *Meter) InFlight() int64 { return m.started.Load() - m.finished.Load() }

func (m *Meter) hookPanic(p any) {
	m.panics.Add(1)
	if h := m.cfg.panicHandler; h != nil {
		func() {
			defer func() { _ = recover() }()
			h(p)
		}()
	}
}

// RequestInfo describes a request for grouping and telemetry. All fields are
// optional; keep their values to a small set (they become metric attributes).
type RequestInfo struct {
	// Model is the requested model name (gen_ai.request.model). It also
	// selects the tokenizer (tokenize.EncodingForModel).
	Model string
	// Provider names the service, e.g. "openai", "azure.ai.openai", "vllm"
	// (gen_ai.provider.name).
	Provider string
	// Operation is "chat", "text_completion" or "generate_content"
	// (gen_ai.operation.name); adapters fill it in.
	Operation string
	// ServerAddress and ServerPort name the endpoint (server.address, server.port).
	ServerAddress string
	ServerPort    int
	// Class is a free label for the prompt, e.g. "easy" or "hard".
	Class string
}

type ctxKey struct{}

// Start begins measuring one request: its start time is taken now, so call
// Start BEFORE sending the request, then send it with the returned context
// (which lets Meter.Middleware find the Recorder and add wire timings).
// Finish the Recorder by wrapping the stream (Wrap, Seq, or package
// tpsopenai) or by calling its End.
func (m *Meter) Start(ctx context.Context, info RequestInfo) (context.Context, *Recorder) {
	if ctx == nil {
		ctx = context.Background()
	}
	if o, ok := ctx.Value(infoKey{}).(RequestInfo); ok {
		info = info.merge(o)
	}
	m.prepare(info.Model)
	rec := m.newRecorder(ctx, info)
	rec.start = m.cfg.clock.Now() // after the Start hooks, so that their work is not measured
	ctx = context.WithValue(ctx, ctxKey{}, rec)
	rec.ctx = ctx
	return ctx, rec
}

// StartAt begins measuring a request that started at the given time, for
// tools that keep their own clock (the low-level recorder API).
func (m *Meter) StartAt(info RequestInfo, start time.Time) *Recorder {
	r := m.newRecorder(context.Background(), info)
	r.start = start
	return r
}

// newRecorder returns the Recorder of a request, its start time not yet
// set, after running the Start hooks.
func (m *Meter) newRecorder(ctx context.Context, info RequestInfo) *Recorder {
	m.started.Add(1)
	r := &Recorder{m: m, ctx: ctx, info: info, classifier: m.cfg.classifier}
	r.perc.Reset(m.cfg.perceive)
	r.states = m.startStates(ctx, info, r.stateBuf[:])
	return r
}

// FromContext returns the Recorder that Meter.Start put in ctx, or nil.
func FromContext(ctx context.Context) *Recorder {
	if ctx == nil {
		return nil
	}
	r, _ := ctx.Value(ctxKey{}).(*Recorder)
	return r
}

type infoKey struct{}

// WithRequestInfo returns a context whose non-empty RequestInfo fields
// override what a stream adapter would fill in, e.g. to label a request's
// Class or Provider:
//
//	ctx = tpsmeter.WithRequestInfo(ctx, tpsmeter.RequestInfo{Class: "easy"})
func WithRequestInfo(ctx context.Context, info RequestInfo) context.Context {
	if o, ok := ctx.Value(infoKey{}).(RequestInfo); ok {
		info = o.merge(info)
	}
	return context.WithValue(ctx, infoKey{}, info)
}

// merge returns i with the non-empty fields of o laid over it.
func (i RequestInfo) merge(o RequestInfo) RequestInfo {
	if o.Model != "" {
		i.Model = o.Model
	}
	if o.Provider != "" {
		i.Provider = o.Provider
	}
	if o.Operation != "" {
		i.Operation = o.Operation
	}
	if o.ServerAddress != "" {
		i.ServerAddress = o.ServerAddress
	}
	if o.ServerPort != 0 {
		i.ServerPort = o.ServerPort
	}
	if o.Class != "" {
		i.Class = o.Class
	}
	return i
}

// prepare loads the encoding a request to model will use, before its start
// time is taken, so that the one-time load (tens of milliseconds, once per
// process) never shows up inside a measured stream.
func (m *Meter) prepare(model string) {
	if m.cfg.tokenizer != nil {
		return
	}
	enc := m.cfg.encoding
	if enc == "" {
		enc, _ = tokenize.EncodingForModel(model)
	}
	if _, loaded := m.prepared.Load(enc); loaded {
		return
	}
	_, _ = tokenize.NewCounter(enc)
	m.prepared.Store(enc, true)
}
