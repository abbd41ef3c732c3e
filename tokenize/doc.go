// Package tokenize counts the tokens of streamed LLM output exactly, as the
// chunks arrive, with OpenAI's tiktoken encodings, and fast enough to
// disappear next to the stream.
//
// Every rate a meter reports (tokens per second, time per token, tokens per
// chunk) divides by a token count. Counting chunks assumes one token per
// chunk, which servers that batch tokens break; estimating from characters is
// rough; and running a tokenizer on each chunk separately miscounts at chunk
// boundaries. A Counter instead counts the text as one text, incrementally.
//
// # Quick start
//
//	enc, exact := tokenize.EncodingForModel(model) // "o200k_base", true for "gpt-4o-mini"
//	c, err := tokenize.NewCounter(enc)
//	if err != nil {
//		return err
//	}
//	for chunk := range chunks {
//		n := c.Add(chunk) // tokens credited to this chunk
//		...
//	}
//	n := c.Flush()  // credit what Add held back
//	total := c.Count() // exact; an estimate of the model's tokens if !exact
//
// # Exactness
//
// Count is exactly len(EncodeOrdinary(text)) of the reference implementation,
// github.com/pkoukk/tiktoken-go, for all text added so far, however it was
// split into chunks; the tests check this on the public tiktoken vectors, on
// real recorded streams and with a fuzzer that cuts arbitrary text at
// arbitrary bytes. Special-token text such as "<|endoftext|>" in model
// output is counted as ordinary text. Invalid UTF-8 counts as one U+FFFD per
// invalid byte, as in Go's string to []rune conversion (and in the
// reference); a character split across chunks is reassembled. Characters
// are classified with Go's Unicode tables (15.0 in Go 1.26), as the
// reference does; text with letters added to Unicode later may count
// differently in Python's tiktoken.
//
// # Credits
//
// Add returns how many tokens a chunk is credited with. Because appending
// text can change, and even lower, the tokens of the piece being streamed
// (BPE counts are not monotonic), a piece is credited in full only once it
// is complete, and a credit can lag: see Counter.Add. Credits are never
// negative, never run ahead of Count, and with Flush at the end they sum to
// Count.
//
// # Other tokenizers
//
// StreamCounter is what a meter needs from any tokenizer; *Counter
// implements it, FromFunc adapts a one-shot tokenizer (such as a Hugging Face
// one) and NewEstimator returns a character-based estimate for when no
// tokenizer fits. EncodingForModel says whether a model's tokenizer is known
// (exact) or the count is an estimate; reports must say which.
//
// # Data, network and memory
//
// The encodings' data is embedded in the binary (the files of
// github.com/pkoukk/tiktoken-go-loader); nothing is ever downloaded, and the
// package neither uses nor changes pkoukk/tiktoken-go's global loader. An
// encoding is built on first use, once per process, in tens of
// milliseconds, and takes a few MB of heap; docs/performance.md has the
// measured numbers.
//
// # Concurrency
//
// NewCounter, Encodings, EncodingForModel and FromFunc are safe for
// concurrent use. A Counter, an Estimator or a FromFunc StreamCounter
// serves one stream at a time and is not safe for concurrent use; the
// encoding tables behind Counters are immutable and shared.
package tokenize
