package tpsopenai

import (
	"runtime"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/responses"

	"github.com/tpsmeter/tpsmeter"
)

// stream is the metered openai-go stream under ChatStream and
// ResponseStream. It does what tpsmeter.Stream does (pass every chunk and
// error through unchanged, finish the Recorder exactly once: when Next
// returns false, on Close before that, or when an abandoned stream is
// garbage collected), but it holds the concrete *ssestream.Stream, and
// both the extractor and Current read the chunk where the stream keeps it
// (see currentField): the extractor copies nothing, and the caller's
// inlined Current makes the one copy openai-go's own Current makes
// (returning inner.Current() from Current made two). Through the generic
// tpsmeter.Stream every chunk is also copied into the heap wrapper, with
// write barriers while the GC runs (a Chat Completions chunk is 1.4 KB, a
// Responses event 10.6 KB), and the caller's Current goes through an
// interface.
type stream[T any] struct {
	inner   *ssestream.Stream[T]
	rec     *tpsmeter.Recorder
	extract func(*tpsmeter.Recorder, *ssestream.Stream[T])
	ended   bool
	copy    *T // Current's value when currentField did not find the field
}

func (s *stream[T]) init(rec *tpsmeter.Recorder, inner *ssestream.Stream[T], extract func(*tpsmeter.Recorder, *ssestream.Stream[T])) {
	s.inner, s.rec, s.extract = inner, rec, extract
	rec.ExpectTerminalEvent()
	rec.SetErrorClassifier(ClassifyError)
}

func (s *stream[T]) next() bool {
	if s.ended {
		return false
	}
	if !s.inner.Next() {
		s.ended = true
		s.rec.End(s.rec.Now(), s.inner.Err())
		return false
	}
	s.rec.Chunk(s.rec.Now())
	s.extract(s.rec, s.inner)
	s.rec.EndChunk()
	return true
}

// current returns a pointer to the inner stream's current chunk: in place
// (see currentField), or else to a copy in s.
func (s *stream[T]) current(f currentField) *T {
	if p := current(s.inner, f); p != nil {
		return p
	}
	if s.copy == nil {
		s.copy = new(T)
	}
	*s.copy = s.inner.Current()
	return s.copy
}

func (s *stream[T]) close() error {
	if !s.ended {
		s.ended = true
		s.rec.End(s.rec.Now(), tpsmeter.ErrClosedEarly)
	}
	return s.inner.Close()
}

// ChatStream is a metered Chat Completions stream: a drop-in for
// *ssestream.Stream[openai.ChatCompletionChunk] (the same Next, Current, Err
// and Close, chunks and errors unchanged), plus Result and Recorder. Like
// the stream it wraps, it is for one goroutine.
type ChatStream struct {
	s stream[openai.ChatCompletionChunk]
}

// Next advances the wrapped stream and measures the chunk it yields.
func (c *ChatStream) Next() bool { return c.s.next() }

// Current returns the chunk that Next advanced to, as openai-go returns it.
func (c *ChatStream) Current() openai.ChatCompletionChunk {
	return *c.s.current(chatCurrent)
}

// Err returns the wrapped stream's error, unchanged.
func (c *ChatStream) Err() error { return c.s.inner.Err() }

// Close finishes the measurement (as tpsmeter.ErrClosedEarly when the
// stream had not ended) and closes the wrapped stream, returning its error.
func (c *ChatStream) Close() error { return c.s.close() }

// Recorder returns the stream's Recorder.
func (c *ChatStream) Recorder() *tpsmeter.Recorder { return c.s.rec }

// Result returns the measurement once the stream has finished (Next
// returned false or Close was called), and false before.
func (c *ChatStream) Result() (tpsmeter.Result, bool) { return c.s.rec.Result() }

// ResponseStream is a metered Responses API stream: a drop-in for
// *ssestream.Stream[responses.ResponseStreamEventUnion], plus Result and
// Recorder, like ChatStream.
type ResponseStream struct {
	s stream[responses.ResponseStreamEventUnion]
}

// Next advances the wrapped stream and measures the event it yields.
func (r *ResponseStream) Next() bool { return r.s.next() }

// Current returns the event that Next advanced to, as openai-go returns it.
func (r *ResponseStream) Current() responses.ResponseStreamEventUnion {
	return *r.s.current(responsesCurrent)
}

// Err returns the wrapped stream's error, unchanged.
func (r *ResponseStream) Err() error { return r.s.inner.Err() }

// Close finishes the measurement (as tpsmeter.ErrClosedEarly when the
// stream had not ended) and closes the wrapped stream, returning its error.
func (r *ResponseStream) Close() error { return r.s.close() }

// Recorder returns the stream's Recorder.
func (r *ResponseStream) Recorder() *tpsmeter.Recorder { return r.s.rec }

// Result returns the measurement once the stream has finished, and false
// before.
func (r *ResponseStream) Result() (tpsmeter.Result, bool) { return r.s.rec.Result() }

// abandonWith finishes rec when owner, a stream the caller dropped
// unfinished, is garbage collected.
func abandonWith[S any](owner *S, rec *tpsmeter.Recorder) {
	runtime.AddCleanup(owner, (*tpsmeter.Recorder).Abandon, rec)
}
