package tpsmeter

import (
	"iter"
	"runtime"
)

// Iterator is the shape of the streams that openai-go and anthropic-sdk-go
// return (ssestream.Stream): Next advances, Current returns the chunk, Err
// the error that ended the stream, Close releases it.
type Iterator[T any] interface {
	Next() bool
	Current() T
	Err() error
	Close() error
}

// Extractor tells the Recorder what one chunk carries, by calling its
// Content, Refusal, ToolCall, Reasoning, SetUsage, SetResponseModel and
// FinishReason methods. It runs on the goroutine that consumes the stream,
// between the chunk's arrival and its return to the caller. It receives a
// pointer so that large chunk types are not copied (openai-go's Responses
// event is over 10 KB); it must not modify the chunk.
type Extractor[T any] func(rec *Recorder, chunk *T)

// Stream is a metered Iterator: a drop-in replacement for the stream it
// wraps, with the same Next/Current/Err/Close methods, that passes every
// chunk and error through unchanged and finishes its Recorder exactly once:
// when Next returns false (end of stream or error), when Close is called
// before that, or, as a last resort, when an abandoned Stream is garbage
// collected. Like the streams it wraps, a Stream is for one goroutine.
type Stream[T any] struct {
	inner   Iterator[T]
	rec     *Recorder
	extract Extractor[T]
	cur     T
	ended   bool
}

// Wrap meters inner with rec (from Meter.Start, taken before the request was
// sent) and extract (which knows the chunk type). Each chunk is copied into
// the Stream; for openai-go streams use package tpsopenai, whose streams
// copy a chunk only to the stack and cost less per chunk.
func Wrap[T any](rec *Recorder, inner Iterator[T], extract Extractor[T]) *Stream[T] {
	s := &Stream[T]{inner: inner, rec: rec, extract: extract}
	runtime.AddCleanup(s, (*Recorder).Abandon, rec)
	return s
}

// Next advances the wrapped stream and measures the chunk it yields.
func (s *Stream[T]) Next() bool {
	if s.ended {
		return false
	}
	if !s.inner.Next() {
		s.ended = true
		s.rec.End(s.rec.Now(), s.inner.Err())
		return false
	}
	s.cur = s.inner.Current()
	s.rec.Chunk(s.rec.Now())
	if s.extract != nil {
		s.extract(s.rec, &s.cur)
	}
	s.rec.EndChunk()
	return true
}

// Current returns the chunk that Next advanced to, unchanged.
func (s *Stream[T]) Current() T { return s.cur }

// Err returns the wrapped stream's error, unchanged.
func (s *Stream[T]) Err() error { return s.inner.Err() }

// Close finishes the measurement (as ErrClosedEarly when the stream had not
// ended) and closes the wrapped stream, returning its error.
func (s *Stream[T]) Close() error {
	if !s.ended {
		s.ended = true
		s.rec.End(s.rec.Now(), ErrClosedEarly)
	}
	return s.inner.Close()
}

// Recorder returns the stream's Recorder.
func (s *Stream[T]) Recorder() *Recorder { return s.rec }

// Result returns the measurement once the stream has finished (Next returned
// false or Close was called), and false before.
func (s *Stream[T]) Result() (Result, bool) { return s.rec.Result() }

// Seq meters an iter.Seq2[T, error] (the shape of range-over-func streaming
// APIs). Chunks and errors pass through unchanged; the Recorder finishes
// when the sequence ends (with the last error it yielded, if any) or when
// the loop stops early (ErrClosedEarly, or the error the loop stopped on).
func Seq[T any](rec *Recorder, seq iter.Seq2[T, error], extract Extractor[T]) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		defer func() {
			if !rec.Done() {
				rec.End(rec.Now(), ErrClosedEarly)
			}
		}()
		var last error
		for v, err := range seq {
			if err != nil {
				last = err
				if !yield(v, err) {
					rec.End(rec.Now(), err)
					return
				}
				continue
			}
			rec.Chunk(rec.Now())
			if extract != nil {
				extract(rec, &v)
			}
			rec.EndChunk()
			if !yield(v, nil) {
				rec.End(rec.Now(), ErrClosedEarly)
				return
			}
		}
		rec.End(rec.Now(), last)
	}
}
