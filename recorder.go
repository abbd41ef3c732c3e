package tpsmeter

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/tpsmeter/tpsmeter/perceive"
	"github.com/tpsmeter/tpsmeter/stats"
	"github.com/tpsmeter/tpsmeter/tokenize"
)

// Kind says what a piece of streamed text is.
type Kind uint8

const (
	// KindContent is visible answer text (delta.content, response.output_text.delta).
	KindContent Kind = iota
	// KindRefusal is refusal text, visible to the user.
	KindRefusal
	// KindToolName is a tool call's function name.
	KindToolName
	// KindToolArgs is a tool call's arguments (or custom tool input).
	KindToolArgs
	// KindSummary is a reasoning summary (Responses API), counted apart:
	// servers bill the hidden reasoning, not its summary.
	KindSummary
	// KindReasoning is reasoning text (reasoning_content, reasoning,
	// reasoning_text deltas); it is counted apart and does not make a chunk
	// an output chunk. It must stay the last Kind.
	KindReasoning
)

// maxCounters bounds the number of separately tokenized texts in one
// request (choices x kinds x tool calls). Texts beyond it are estimated.
const maxCounters = 256

type textCounter struct {
	choice   int32
	sub      int32
	kind     Kind
	counter  tokenize.StreamCounter
	credited int
	pooled   bool // from the meter's pool: returned to it at the end
}

// Recorder measures one request: the low-level API under every stream
// wrapper. Between Chunk calls, the text methods (Content, Refusal,
// ToolCall, Reasoning) describe what the current chunk carried; SetUsage,
// SetResponseModel and FinishReason record metadata; End finishes the
// measurement exactly once and returns the Result.
//
// A Recorder is for one stream and is not safe for concurrent use, except
// that Meter.Middleware may record wire timings from another goroutine, and
// concurrent calls of End are safe (the first one counts, the others wait
// for it and return its Result).
type Recorder struct {
	// The fields are grouped by use: those read or written at every chunk
	// come first, next to each other, so that a chunk touches few cache
	// lines (the decoder's work between two chunks pushes them out of the
	// core's caches); what is written once or read at the end comes after.
	m     *Meter
	ctx   context.Context
	info  RequestInfo
	start time.Time

	// done is set by End once the Result is built.
	done atomic.Bool

	// Current chunk.
	inChunk        bool
	chunkAt        time.Duration
	chunkTokens    int
	chunkChars     int
	chunkVisTokens int // content and refusal only: what a reader sees
	chunkVisChars  int

	chunks, outputChunks int
	haveChunk            bool
	haveOutput           bool
	lastOutputAt         time.Duration
	lastCreditedAt       time.Duration
	lastEventAt          time.Duration

	counters      []textCounter
	last          int // index of the last counter used
	choices       int
	sums          [KindReasoning + 1]int
	responseModel string

	chunkGap, tokenGap, perChunk *stats.Sketch
	// perChunkSmall counts the output chunks credited k tokens, for small
	// k, until End adds them to perChunk: one increment per chunk instead
	// of a sketch update (most chunks carry 0-3 tokens). A count about to
	// overflow is added to perChunk first.
	perChunkSmall [8]uint32
	sample        pendingSample
	// states are the per-request states of the Hooks that have a Start
	// (see hookSet), in stateBuf when there are few.
	states []any

	perc perceive.Tracker

	// Set once, or read at the end.
	classifier       ErrorClassifier
	firstChunkAt     time.Duration
	ttft             time.Duration
	firstChunkTokens int
	haveReasoning    bool
	firstReasoningAt time.Duration
	basis            Basis
	encoding         string
	usage            *Usage
	finishReason     string
	finished         uint64 // bitset of choices (0..63) that sent a finish reason
	finishSeen       bool   // a finish reason arrived
	expectTerminal   bool
	terminal         bool
	inbandErr        error
	sketches         *sketchSet // pooled storage of chunkGap, tokenGap and perChunk
	pooled           bool       // set by newCounter when the counter came from a pool
	stateBuf         [2]any

	// Wire timings from the middleware: nanoseconds after start, +1 so
	// that zero means "not seen".
	headersAt   atomic.Int64
	firstByteAt atomic.Int64
	attempts    atomic.Int32

	stallTimer   Timer
	stallMu      sync.Mutex
	stallClosed  bool
	atomicLastAt atomic.Int64
	atomicTokens atomic.Int64

	endOnce sync.Once
	result  Result
}

// state returns the per-request state at index i of states (nil for -1).
func (r *Recorder) state(i int) any {
	if i < 0 || i >= len(r.states) {
		return nil
	}
	return r.states[i]
}

// Info returns the request's description.
func (r *Recorder) Info() RequestInfo { return r.info }

// StartTime returns the time the request started.
func (r *Recorder) StartTime() time.Time { return r.start }

// Now reads the meter's clock. With the system clock it is the start time
// plus the monotonic time elapsed since, so that wall-clock steps during a
// request do not show.
func (r *Recorder) Now() time.Time {
	if _, ok := r.m.cfg.clock.(systemClock); ok {
		// The same reading, at half the cost: time.Since reads only the
		// monotonic clock, time.Now the wall clock too (two vDSO calls, a
		// good part of the meter's cost per chunk in a VM).
		return r.start.Add(time.Since(r.start))
	}
	return r.m.cfg.clock.Now()
}

// SetErrorClassifier sets a classifier for this request's errors, consulted
// before the meter's; stream adapters use it for their clients' error types.
func (r *Recorder) SetErrorClassifier(f ErrorClassifier) {
	if f == nil {
		return
	}
	prev := r.classifier
	r.classifier = func(err error) string {
		if s := f(err); s != "" {
			return s
		}
		if prev != nil {
			return prev(err)
		}
		return ""
	}
}

// ExpectTerminalEvent declares that the stream has a terminal event (a
// finish reason per choice, or a final Responses event) so that a stream
// ending without one is recorded as truncated (ErrTruncated).
func (r *Recorder) ExpectTerminalEvent() { r.expectTerminal = true }

// Chunk begins a new chunk that arrived at the given time. The previous
// chunk, if any, is complete from now on.
func (r *Recorder) Chunk(at time.Time) {
	if r.done.Load() {
		return
	}
	r.commit()
	d := at.Sub(r.start)
	if d < r.lastEventAt {
		d = r.lastEventAt // a clock that stepped back: keep time monotonic
	}
	r.inChunk = true
	r.chunkAt = d
	r.lastEventAt = d
	r.chunks++
	if !r.haveChunk {
		r.haveChunk = true
		r.firstChunkAt = d
	}
}

// Content adds visible answer text of the given choice to the current chunk.
func (r *Recorder) Content(choice int, text string) { r.text(choice, 0, KindContent, text) }

// Refusal adds refusal text of the given choice to the current chunk.
func (r *Recorder) Refusal(choice int, text string) { r.text(choice, 0, KindRefusal, text) }

// Reasoning adds reasoning text of the given choice.
func (r *Recorder) Reasoning(choice int, text string) { r.text(choice, 0, KindReasoning, text) }

// ToolCall adds a piece of tool call number index of the given choice: its
// function name and/or a piece of its arguments.
func (r *Recorder) ToolCall(choice, index int, name, args string) {
	if name != "" {
		r.text(choice, index, KindToolName, name)
	}
	if args != "" {
		r.text(choice, index, KindToolArgs, args)
	}
}

// Text adds text of any kind; sub distinguishes parallel texts of one kind
// (tool calls) within a choice.
func (r *Recorder) Text(choice, sub int, kind Kind, text string) { r.text(choice, sub, kind, text) }

func (r *Recorder) text(choice, sub int, kind Kind, text string) {
	if text == "" || !r.inChunk || kind > KindReasoning {
		return
	}
	if choice < 0 {
		choice = 0
	}
	if choice >= r.choices {
		r.choices = choice + 1
	}
	c := r.counter(int32(choice), int32(sub), kind)
	credit := c.counter.Add(text)
	c.credited += credit
	r.sums[kind] += credit
	if kind == KindSummary {
		return
	}
	if kind == KindReasoning {
		if !r.haveReasoning {
			r.haveReasoning = true
			r.firstReasoningAt = r.chunkAt
		}
		return
	}
	r.chunkTokens += credit
	r.chunkChars += len(text)
	if kind == KindContent || kind == KindRefusal {
		r.chunkVisTokens += credit
		r.chunkVisChars += utf8.RuneCountInString(text)
	}
}

// counter finds or creates the counter of one text.
func (r *Recorder) counter(choice, sub int32, kind Kind) *textCounter {
	if r.last < len(r.counters) {
		c := &r.counters[r.last]
		if c.choice == choice && c.sub == sub && c.kind == kind {
			return c
		}
	}
	for i := range r.counters {
		c := &r.counters[i]
		if c.choice == choice && c.sub == sub && c.kind == kind {
			r.last = i
			return c
		}
	}
	var sc tokenize.StreamCounter
	if len(r.counters) >= maxCounters {
		sc = tokenize.NewEstimator(0)
		r.basis = BasisEstimate
	} else {
		sc = r.newCounter()
	}
	pooled := r.pooled
	r.pooled = false
	r.counters = append(r.counters, textCounter{choice: choice, sub: sub, kind: kind, counter: sc, pooled: pooled})
	r.last = len(r.counters) - 1
	return &r.counters[r.last]
}

func (r *Recorder) newCounter() tokenize.StreamCounter {
	cfg := &r.m.cfg
	model := r.info.Model
	if model == "" {
		model = r.responseModel
	}
	if cfg.tokenizer != nil {
		c, b := cfg.tokenizer(model)
		if c != nil {
			r.setBasis(b, "")
			return c
		}
	}
	enc, exact := cfg.encoding, true
	if enc == "" {
		enc, exact = tokenize.EncodingForModel(model)
	}
	c, err := getCounter(enc)
	if err != nil {
		r.setBasis(BasisEstimate, "")
		return tokenize.NewEstimator(0)
	}
	r.pooled = true
	if exact {
		r.setBasis(BasisExact, enc)
	} else {
		r.setBasis(BasisEstimate, enc)
	}
	return c
}

// setBasis keeps the weakest basis seen: one estimated text makes the
// request's count an estimate.
func (r *Recorder) setBasis(b Basis, enc string) {
	switch {
	case r.basis == "":
		r.basis, r.encoding = b, enc
	case b == BasisEstimate:
		r.basis = BasisEstimate
	}
}

// SetUsage records the server-reported usage (the last call wins).
func (r *Recorder) SetUsage(u Usage) {
	if r.done.Load() {
		return
	}
	if r.usage == nil {
		r.usage = new(Usage)
	}
	*r.usage = u
}

// SetResponseModel records the model the server said it used.
func (r *Recorder) SetResponseModel(model string) {
	if model != "" && r.responseModel == "" {
		r.responseModel = model
	}
}

// FinishReason records that a choice finished with the given reason. The
// stream has reached its terminal event if, when it ends, every choice seen
// has finished (a choice that starts after the others finished must finish
// too).
func (r *Recorder) FinishReason(choice int, reason string) {
	if reason == "" {
		return
	}
	if r.finishReason == "" || choice == 0 {
		if choice == 0 || r.finishReason == "" {
			r.finishReason = reason
		}
	}
	if choice >= r.choices {
		r.choices = choice + 1
	}
	if choice >= 0 && choice < 64 {
		r.finished |= 1 << uint(choice)
	}
	r.finishSeen = true
}

// allFinished reports whether a finish reason arrived for every choice seen
// (the first 64).
func (r *Recorder) allFinished() bool {
	n := min(r.choices, 64)
	return r.finishSeen && (r.finished == (uint64(1)<<uint(n))-1 || n == 64 && r.finished == ^uint64(0))
}

// Terminal records that the stream's terminal event arrived (for streams
// whose end is not a per-choice finish reason, such as response.completed).
func (r *Recorder) Terminal() { r.terminal = true }

// commit closes the current chunk: it updates the timings and statistics of
// an output chunk and fires the chunk hooks.
func (r *Recorder) commit() {
	if !r.inChunk {
		return
	}
	r.inChunk = false
	visTokens, visChars := r.chunkVisTokens, r.chunkVisChars
	r.chunkVisTokens, r.chunkVisChars = 0, 0
	if r.chunkChars == 0 {
		r.chunkTokens = 0
		return
	}
	at, k, nchars := r.chunkAt, r.chunkTokens, r.chunkChars
	r.chunkTokens, r.chunkChars = 0, 0
	var gap time.Duration
	r.flushSample()
	if !r.haveOutput {
		r.haveOutput = true
		r.ttft = at
		r.firstChunkTokens = k
		r.lastCreditedAt = at
		r.sketches = getSketches()
		r.chunkGap, r.tokenGap, r.perChunk = &r.sketches.chunkGap, &r.sketches.tokenGap, &r.sketches.perChunk
		r.sample = pendingSample{ok: true, first: true, k: k}
	} else {
		gap = at - r.lastOutputAt
		r.chunkGap.Add(gap.Seconds())
		r.sample = pendingSample{ok: true, at: at, from: r.lastCreditedAt, k: k}
		if k > 0 {
			r.lastCreditedAt = at
		}
	}
	r.lastOutputAt = at
	if visChars > 0 {
		r.perc.Observe(at, visTokens, visChars)
	}
	idx := r.outputChunks
	r.outputChunks++
	total := r.outputTotal()
	h := &r.m.cfg.hooks
	if idx == 0 {
		for _, hk := range h.firstToken {
			call(r.m, hk.f, FirstTokenInfo{Context: r.ctx, Request: r.info, TTFT: at, Tokens: k, State: r.state(hk.state)})
		}
	}
	for _, hk := range h.chunk {
		call(r.m, hk.f, ChunkInfo{Context: r.ctx, Request: r.info, Index: idx, At: at, Gap: gap, Tokens: k, Chars: nchars, TotalTokens: total, State: r.state(hk.state)})
	}
	if len(h.stallStart) > 0 {
		r.armStall(at, total)
	}
}

// pendingSample holds the last output chunk's tokens-per-chunk and
// per-token-gap samples until the next output chunk or the end of the
// stream, so that tokens a Counter held back until the end (the last word)
// are credited to the chunk that carried them.
type pendingSample struct {
	ok, first bool
	at, from  time.Duration
	k         int
}

// flushSample records the pending sample in the distributions.
func (r *Recorder) flushSample() {
	p := r.sample
	if !p.ok {
		return
	}
	r.sample.ok = false
	if p.k >= 0 && p.k < len(r.perChunkSmall) {
		if r.perChunkSmall[p.k] == math.MaxUint32 {
			r.flushPerChunkSmall()
		}
		r.perChunkSmall[p.k]++
	} else {
		r.perChunk.Add(float64(p.k))
	}
	if p.first || p.k == 0 {
		return
	}
	if g := (p.at - p.from).Seconds(); p.k == 1 {
		r.tokenGap.Add(g)
	} else {
		r.tokenGap.AddN(g/float64(p.k), p.k)
	}
}

// flushPerChunkSmall adds the small tokens-per-chunk counts to perChunk.
func (r *Recorder) flushPerChunkSmall() {
	for k, n := range r.perChunkSmall {
		if n > 0 {
			r.perChunk.AddN(float64(k), int(n))
		}
	}
	r.perChunkSmall = [len(r.perChunkSmall)]uint32{}
}

// outputTotal is the number of output tokens credited so far.
func (r *Recorder) outputTotal() int {
	return r.sums[KindContent] + r.sums[KindRefusal] + r.sums[KindToolName] + r.sums[KindToolArgs]
}

// flushCounters credits every counter's not-yet-credited tokens and
// returns how many of them are output tokens, and how many of those are
// visible (content, refusal).
func (r *Recorder) flushCounters() (out, vis int) {
	for i := range r.counters {
		c := &r.counters[i]
		rest := c.counter.Count() - c.credited
		if rest <= 0 {
			continue
		}
		c.credited += rest
		r.sums[c.kind] += rest
		if c.kind != KindReasoning && c.kind != KindSummary {
			out += rest
		}
		if c.kind == KindContent || c.kind == KindRefusal {
			vis += rest
		}
	}
	return out, vis
}

// armStall (re)arms the stall timer after an output chunk at `at`.
func (r *Recorder) armStall(at time.Duration, total int) {
	r.atomicLastAt.Store(int64(at))
	r.atomicTokens.Store(int64(total))
	if r.stallTimer == nil {
		r.stallMu.Lock()
		if !r.stallClosed {
			r.stallTimer = r.m.cfg.clock.AfterFunc(r.m.stallLimit, r.fireStall)
		}
		r.stallMu.Unlock()
		return
	}
	r.stallTimer.Reset(r.m.stallLimit)
}

// fireStall runs on the timer's goroutine when no output arrived for the
// stall threshold.
func (r *Recorder) fireStall() {
	r.stallMu.Lock()
	defer r.stallMu.Unlock()
	if r.stallClosed {
		return
	}
	info := StallInfo{
		Context:      r.ctx,
		Request:      r.info,
		LastOutputAt: time.Duration(r.atomicLastAt.Load()),
		Threshold:    r.m.stallLimit,
		TokensSoFar:  int(r.atomicTokens.Load()),
	}
	for _, hk := range r.m.cfg.hooks.stallStart {
		info.State = r.state(hk.state)
		call(r.m, hk.f, info)
	}
}

// Done reports whether End was called.
func (r *Recorder) Done() bool { return r.done.Load() }

// Result returns the Result once End was called, and false before.
func (r *Recorder) Result() (Result, bool) {
	if !r.done.Load() {
		return Result{}, false
	}
	return r.result, true
}

// Abandon finishes a measurement that has not ended as ErrClosedEarly, at
// the time of the last event it saw. It is for stream wrappers whose caller
// dropped the stream unfinished: their cleanup (runtime.AddCleanup) calls
// it, so that no Result is lost; a measurement that has ended is left as it
// is.
func (r *Recorder) Abandon() {
	if !r.Done() {
		r.End(r.start.Add(r.lastEventAt), ErrClosedEarly)
	}
}

// End finishes the measurement at the given time with the error that ended
// the stream (nil for a normal end), records it in the meter's aggregates,
// calls Hooks.Finish and returns the Result. Only the first call counts;
// later calls return the same Result, also when made from inside a Finish
// hook.
func (r *Recorder) End(at time.Time, err error) Result {
	if r.done.Load() { // the Result is built (a call from a Finish hook must not wait for itself)
		return r.result
	}
	r.endOnce.Do(func() { r.end(at, err) })
	return r.result
}

func (r *Recorder) end(at time.Time, err error) {
	r.commit()
	// Tokens the counters held back until the end (the last word) belong
	// to the last output chunk.
	extra, vis := r.flushCounters()
	if extra > 0 && r.sample.ok {
		r.sample.k += extra
		if r.outputChunks == 1 {
			r.firstChunkTokens += extra
		}
	}
	if vis > 0 && r.haveOutput {
		r.perc.Observe(r.lastOutputAt, vis, 0) // adds to the last visible chunk
	}
	if r.haveOutput {
		r.flushSample()
		r.flushPerChunkSmall()
	}
	if r.stallTimer != nil || len(r.m.cfg.hooks.stallStart) > 0 {
		r.stallMu.Lock()
		r.stallClosed = true
		if r.stallTimer != nil {
			r.stallTimer.Stop()
		}
		r.stallMu.Unlock()
	}
	end := at.Sub(r.start)
	if end < r.lastEventAt {
		end = r.lastEventAt
	}
	if err == nil && r.inbandErr != nil {
		err = r.inbandErr
	}
	if err == nil && r.expectTerminal && !r.terminal && !r.allFinished() {
		err = ErrTruncated
	}
	r.result = r.build(end, err)
	r.done.Store(true) // after the Result is complete: Done and Result read it without End's lock
	r.m.finished.Add(1)
	r.m.record(&r.result, r)
	r.release()
	for _, hk := range r.m.cfg.hooks.finish {
		call(r.m, hk.f, FinishInfo{Context: r.ctx, Request: r.info, Result: r.result, State: r.state(hk.state)})
	}
	// The states were handed over for the last time: a Recorder the caller
	// keeps must not keep them alive (a Finish may have recycled its state).
	r.states, r.stateBuf = nil, [len(r.stateBuf)]any{}
}

// build computes the Result of a finished request.
func (r *Recorder) build(end time.Duration, err error) Result {
	res := Result{
		Model:         r.info.Model,
		ResponseModel: r.responseModel,
		Provider:      r.info.Provider,
		Operation:     r.info.Operation,
		Class:         r.info.Class,
		Start:         r.start,
		Attempts:      int(r.attempts.Load()),
		Duration:      end,
		Chunks:        r.chunks,
		OutputChunks:  r.outputChunks,
		Choices:       r.choices,
		FinishReason:  r.finishReason,
		TokenBasis:    r.basis,
		Encoding:      r.encoding,
		Err:           err,
	}
	if res.Model == "" {
		res.Model = r.responseModel
	}
	if v := r.headersAt.Load(); v > 0 {
		res.TimeToHeaders = time.Duration(v - 1)
	}
	if v := r.firstByteAt.Load(); v > 0 {
		res.TimeToFirstByte = time.Duration(v - 1)
	}
	if r.haveChunk {
		res.TimeToFirstChunk = r.firstChunkAt
	}
	if r.haveReasoning {
		res.TimeToFirstReasoning = r.firstReasoningAt
	}
	// Totals come from each counter's exact Count of its whole text.
	var sums [KindReasoning + 1]int
	for i := range r.counters {
		c := &r.counters[i]
		sums[c.kind] += c.counter.Count()
		if c.kind == KindToolName || c.kind == KindToolArgs {
			first := true // count each (choice, sub) tool call once
			for j := 0; j < i; j++ {
				o := &r.counters[j]
				if (o.kind == KindToolName || o.kind == KindToolArgs) && o.choice == c.choice && o.sub == c.sub {
					first = false
					break
				}
			}
			if first {
				res.ToolCalls++
			}
		}
	}
	res.ContentTokens = sums[KindContent]
	res.RefusalTokens = sums[KindRefusal]
	res.ToolTokens = sums[KindToolName] + sums[KindToolArgs]
	res.ReasoningTokens = sums[KindReasoning]
	res.SummaryTokens = sums[KindSummary]
	res.OutputTokens = res.ContentTokens + res.RefusalTokens + res.ToolTokens
	if res.TokenBasis == "" {
		res.TokenBasis = BasisExact
		if r.m.cfg.tokenizer != nil {
			res.TokenBasis = BasisCustom
		}
	}
	if r.haveOutput {
		res.TTFT = r.ttft
		res.DecodeTime = r.lastOutputAt - r.ttft
		if res.DecodeTime > 0 {
			if n := res.OutputTokens - r.firstChunkTokens; n > 0 {
				res.DecodeTPS = float64(n) / res.DecodeTime.Seconds()
			}
		}
		if r.lastOutputAt > 0 {
			res.E2ETPS = float64(res.OutputTokens) / r.lastOutputAt.Seconds()
		}
		res.TokensPerChunk = r.perChunk.Summary()
		res.ChunkGap = r.chunkGap.Summary()
		res.TokenGap = r.tokenGap.Summary()
		res.Perceived = r.perc.Report(end)
	}
	if r.usage != nil {
		u := *r.usage
		res.Usage = &u
		res.UsageDiff = u.CompletionTokens - int64(res.OutputTokens+res.ReasoningTokens)
		if r.haveOutput && r.lastOutputAt > 0 {
			res.UsageTPS = float64(u.CompletionTokens) / r.lastOutputAt.Seconds()
		}
	}
	res.OutputBucket = r.m.cfg.buckets.Bucket(res.OutputTokens)
	if err != nil {
		res.Status = StatusPartial
		res.ErrorType = r.errorType(err)
	} else {
		res.Status = StatusComplete
	}
	return res
}

// EndChunk completes the current chunk now, so that its hooks fire without
// waiting for the next Chunk or End. Stream wrappers call it after each
// chunk; low-level callers may rely on the next Chunk or End instead.
func (r *Recorder) EndChunk() {
	if r.done.Load() {
		return
	}
	r.commit()
}

// StreamError records an error that arrived inside the stream as an event
// (for example a Responses API "error" event) without ending the client's
// iteration. End then records it as the Result's error when the stream
// itself reported none.
func (r *Recorder) StreamError(err error) {
	if err != nil && r.inbandErr == nil {
		r.inbandErr = err
	}
}
