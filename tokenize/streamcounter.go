package tokenize

// StreamCounter is what a meter needs from a tokenizer: the tokens of a text
// that arrives in chunks. *Counter (exact tiktoken counts), *Estimator (a
// character-based estimate) and FromFunc (any one-shot tokenizer) implement
// it; users can plug in their own.
//
// The contract, which the implementations in this package keep:
//   - Add appends the next chunk, which may split a multi-byte character,
//     and returns the tokens credited to it. Credits are never negative, and
//     their running sum never exceeds Count, then or later. A credit may lag
//     behind the text (the tokens of an unfinished word can still change).
//   - Count returns the tokens of all text added so far.
//   - Reset starts a new stream.
//
// A StreamCounter is used by one stream at a time; implementations need not
// be safe for concurrent use.
type StreamCounter interface {
	Add(chunk string) int
	Count() int
	Reset()
}

// Flusher is implemented by a StreamCounter whose Add can hold credits back.
// Flush credits the rest, Count minus the sum of all credits so far, and
// returns it; a meter calls it once when the stream is over, after which the
// credits sum to Count. Like Add, it is called by the one goroutine that
// owns the stream. All StreamCounters in this package implement it.
type Flusher interface {
	Flush() int
}

// Compile-time checks.
var (
	_ StreamCounter = (*Counter)(nil)
	_ StreamCounter = (*Estimator)(nil)
	_ StreamCounter = (*funcCounter)(nil)
	_ Flusher       = (*Counter)(nil)
	_ Flusher       = (*Estimator)(nil)
	_ Flusher       = (*funcCounter)(nil)
)
