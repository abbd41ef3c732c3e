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
// Goroutines and ordering: FirstToken, Chunk and Finish run synchronously on
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

// FinishInfo is passed to Hooks.Finish.
type FinishInfo struct {
	// Context is the context given to Meter.Start (context.Background for
	// Meter.StartAt), e.g. to find the caller's trace span.
	Context context.Context
	// Request describes the request, as given to Meter.Start.
	Request RequestInfo
	Result  Result
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
}

// hookSet is the combination of every Hooks given to a Meter: each field is
// nil when no Hooks set it, so an unused callback costs one nil check.
type hookSet struct {
	firstToken []func(FirstTokenInfo)
	chunk      []func(ChunkInfo)
	stallStart []func(StallInfo)
	finish     []func(FinishInfo)
}

func (h *hookSet) add(x Hooks) {
	if x.FirstToken != nil {
		h.firstToken = append(h.firstToken, x.FirstToken)
	}
	if x.Chunk != nil {
		h.chunk = append(h.chunk, x.Chunk)
	}
	if x.StallStart != nil {
		h.stallStart = append(h.stallStart, x.StallStart)
	}
	if x.Finish != nil {
		h.finish = append(h.finish, x.Finish)
	}
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
