package tpsmeter

import (
	"context"
	"time"
)

// Hooks are optional callbacks, in the style of net/http/httptrace's
// ClientTrace: set the fields you care about; a nil field costs nothing.
// Several Hooks given to New (WithHooks more than once) are all called, in
// the order given. Each callback receives a small struct by value, so fields
// can be added later without breaking callers.
//
// Per-request state: a Hooks with a Start callback gets, in the State field
// of every info struct it receives, the value its Start returned for that
// request, so that what a callback needs per request (say, the request's
// telemetry attributes, resolved once) is at hand without a lookup at every
// chunk.
//
// Goroutines and ordering: Start runs on the goroutine that calls
// Meter.Start or Meter.StartAt, before any other callback of the request.
// FirstToken, Chunk and Finish run synchronously on
// the goroutine that consumes the stream (inside Next, or inside the
// Recorder call that caused them), in stream order: FirstToken before the
// Chunk of the same chunk, Finish last and exactly once. StallStart runs on
// a timer goroutine, concurrently with the consumer; it never runs after
// Finish has been called. Callbacks must not block for long: the stream
// waits for them.
//
// A panicking callback is recovered: the stream and the meter carry on
// unchanged, the panic is counted (Meter.HookPanics) and passed to the
// handler set with WithPanicHandler, if any.
type Hooks struct {
	// Start fires once per request, when the meter starts measuring it
	// (Meter.Start, before the start time is taken, so that its work is not
	// part of the request's timings; Meter.StartAt). What it returns comes
	// back unchanged as the State field of every FirstTokenInfo, ChunkInfo,
	// StallInfo and FinishInfo that the callbacks of the same Hooks value
	// receive for that request; each Hooks given to the meter has its own.
	// A Start that panics leaves its state nil.
	Start func(StartInfo) any
	// FirstToken fires once per request, when the first chunk with
	// non-empty output arrives (the TTFT moment).
	FirstToken func(FirstTokenInfo)
	// Chunk fires for every chunk that carries output, after its tokens
	// were counted.
	Chunk func(ChunkInfo)
	// StallStart fires while a stall is happening: when no output has
	// arrived for the stall threshold (default 1 s, see
	// perceive.Config.StallThreshold) after the first token. It fires once
	// per stall; the next output chunk ends the stall (its Chunk info then
	// has the full gap).
	StallStart func(StallInfo)
	// Finish fires once per request with its Result, after the meter's
	// aggregates were updated.
	Finish func(FinishInfo)
}

// StartInfo is passed to Hooks.Start.
type StartInfo struct {
	// Context is the context given to Meter.Start (context.Background for
	// Meter.StartAt).
	Context context.Context
	// Request describes the request, as given to Meter.Start (with the
	// fields of WithRequestInfo laid over it).
	Request RequestInfo
}

// FinishInfo is passed to Hooks.Finish.
type FinishInfo struct {
	// Context is the context given to Meter.Start (context.Background for
	// Meter.StartAt), e.g. to find the caller's trace span.
	Context context.Context
	// Request describes the request, as given to Meter.Start.
	Request RequestInfo
	Result  Result
	// State is what this Hooks' Start returned for the request (nil
	// without a Start).
	State any
}

// FirstTokenInfo is passed to Hooks.FirstToken.
type FirstTokenInfo struct {
	// Context is the context given to Meter.Start.
	Context context.Context
	Request RequestInfo
	// TTFT is the time from the request's start to this chunk.
	TTFT time.Duration
	// Tokens credited to the first output chunk.
	Tokens int
	// State is what this Hooks' Start returned for the request.
	State any
}

// ChunkInfo is passed to Hooks.Chunk.
type ChunkInfo struct {
	// Context is the context given to Meter.Start, e.g. to tell requests
	// apart in one hook.
	Context context.Context
	Request RequestInfo
	// Index counts output chunks from 0.
	Index int
	// At is the chunk's arrival, measured from the request's start.
	At time.Duration
	// Gap is the time since the previous output chunk (0 for the first).
	Gap time.Duration
	// Tokens credited to this chunk (may be 0 when a BPE credit lags; see
	// package tokenize) and Chars (bytes of output text) it carried.
	Tokens int
	Chars  int
	// TotalTokens credited so far, this chunk included.
	TotalTokens int
	// State is what this Hooks' Start returned for the request.
	State any
}

// StallInfo is passed to Hooks.StallStart.
type StallInfo struct {
	// Context is the context given to Meter.Start.
	Context context.Context
	Request RequestInfo
	// LastOutputAt is when the last output arrived, from the request's start.
	LastOutputAt time.Duration
	// Threshold is the stall threshold that was crossed.
	Threshold time.Duration
	// TokensSoFar is the number of output tokens credited before the stall.
	TokensSoFar int
	// State is what this Hooks' Start returned for the request.
	State any
}

// hookSet is the combination of every Hooks given to a Meter: each field is
// nil when no Hooks set it, so an unused callback costs one nil check.
type hookSet struct {
	start      []func(StartInfo) any
	firstToken []hook[FirstTokenInfo]
	chunk      []hook[ChunkInfo]
	stallStart []hook[StallInfo]
	finish     []hook[FinishInfo]
}

// hook is one callback and the index of its Hooks' per-request state in
// Recorder.states, or -1 when its Hooks has no Start.
type hook[T any] struct {
	f     func(T)
	state int
}

func (h *hookSet) add(x Hooks) {
	state := -1
	if x.Start != nil {
		state = len(h.start)
		h.start = append(h.start, x.Start)
	}
	if x.FirstToken != nil {
		h.firstToken = append(h.firstToken, hook[FirstTokenInfo]{x.FirstToken, state})
	}
	if x.Chunk != nil {
		h.chunk = append(h.chunk, hook[ChunkInfo]{x.Chunk, state})
	}
	if x.StallStart != nil {
		h.stallStart = append(h.stallStart, hook[StallInfo]{x.StallStart, state})
	}
	if x.Finish != nil {
		h.finish = append(h.finish, hook[FinishInfo]{x.Finish, state})
	}
}

// startStates runs the Start callbacks of a request and returns their
// states, in buf when it is large enough.
func (m *Meter) startStates(ctx context.Context, info RequestInfo, buf []any) []any {
	starts := m.cfg.hooks.start
	if len(starts) == 0 {
		return nil
	}
	states := buf[:0]
	if len(starts) > cap(buf) {
		states = make([]any, 0, len(starts))
	}
	si := StartInfo{Context: ctx, Request: info}
	for _, f := range starts {
		states = append(states, callStart(m, f, si))
	}
	return states
}

// callStart runs f(si), recovering a panic into the meter's panic
// accounting (the state is then nil).
func callStart(m *Meter, f func(StartInfo) any, si StartInfo) (state any) {
	defer func() {
		if p := recover(); p != nil {
			state = nil
			m.hookPanic(p)
		}
	}()
	return f(si)
}

// call runs f(v), recovering a panic into the meter's panic accounting.
func call[T any](m *Meter, f func(T), v T) {
	defer func() {
		if p := recover(); p != nil {
			m.hookPanic(p)
		}
	}()
	f(v)
}
