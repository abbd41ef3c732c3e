package llmsim

import (
	"context"
	"net/http"
	"time"
)

// emitter writes the events of one response at their scheduled times. Every
// event is flushed on its own, and its lateness (flush time minus scheduled
// time) is recorded. It is used by one handler goroutine only.
type emitter struct {
	s       *Server
	w       http.ResponseWriter
	rc      *http.ResponseController
	ctx     context.Context
	arrived time.Time
	origin  time.Time // generation start: offsets in the plan are from here
	target  time.Time // scheduled time of the current step
	last    time.Time // time of the last flush
	buf     []byte
	rep     *StreamReport

	inStep      bool
	stepTokens  int
	wroteHeader bool
	err         error // first write, flush or sleep error: the client is gone
}

// begin sleeps until the step at offset off is due.
func (e *emitter) begin(off time.Duration) bool {
	if e.err != nil {
		return false
	}
	e.target = e.origin.Add(off)
	e.inStep, e.stepTokens = true, 0
	if err := e.s.clock.SleepUntil(e.ctx, e.target); err != nil {
		e.err = err
		return false
	}
	return true
}

// end closes the current step and records it in the report.
func (e *emitter) end() {
	if !e.inStep {
		return
	}
	e.inStep = false
	e.rep.Scheduled = append(e.rep.Scheduled, e.target.Sub(e.arrived))
	e.rep.Emitted = append(e.rep.Emitted, e.last.Sub(e.arrived))
	e.rep.Tokens = append(e.rep.Tokens, e.stepTokens)
}

// flush writes the buffered event and flushes it.
func (e *emitter) flush() bool {
	if e.err != nil {
		e.buf = e.buf[:0]
		return false
	}
	_, err := e.w.Write(e.buf)
	e.buf = e.buf[:0]
	if err == nil {
		err = e.rc.Flush()
	}
	if err != nil {
		e.err = err
		return false
	}
	e.last = e.s.clock.Now()
	e.s.lateness.record(e.last.Sub(e.target))
	return true
}

// data appends "data: " + json + "\n\n" built by fn, and flushes it.
func (e *emitter) data(fn func([]byte) []byte) bool {
	e.buf = append(e.buf, "data: "...)
	e.buf = fn(e.buf)
	e.buf = append(e.buf, '\n', '\n')
	return e.flush()
}

// event appends "event: typ\ndata: " + json + "\n\n" and flushes it.
func (e *emitter) event(typ string, fn func([]byte) []byte) bool {
	e.buf = append(e.buf, "event: "...)
	e.buf = append(e.buf, typ...)
	e.buf = append(e.buf, "\ndata: "...)
	e.buf = fn(e.buf)
	e.buf = append(e.buf, '\n', '\n')
	return e.flush()
}

// startSSE writes the 200 header of an event stream and flushes it.
func (e *emitter) startSSE(requestID string) bool {
	h := e.w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Request-Id", requestID)
	e.w.WriteHeader(http.StatusOK)
	e.wroteHeader = true
	if err := e.rc.Flush(); err != nil {
		e.err = err
		return false
	}
	return true
}
