package tpsopenai

import (
	"reflect"
	"unsafe"

	"github.com/openai/openai-go/v3/packages/ssestream"
)

// currentField locates the current chunk inside an *ssestream.Stream[T],
// so that the extractors read it where it is instead of copying it.
//
// Why: Stream.Current returns the chunk by value, so reading it costs a
// copy (a Chat Completions chunk is 1.4 KB, a Responses event 10.6 KB) into
// stack memory the decoder has just pushed out of the cache; that copy was
// a fifth of the meter's instructions per chunk (callgrind, see
// docs/performance.md). The stream keeps the chunk in its unexported field
// "cur", which Current returns unchanged; the extractors only read it,
// between the stream's Next and the caller's Current, on the goroutine that
// consumes the stream.
//
// Safety: the field is looked up once by reflection and used only if it
// exists and has type T; otherwise (a future openai-go that renames or
// retypes it) the extractors fall back to Current, and
// TestCurrentFieldFound fails so that the change is noticed.
type currentField struct {
	offset uintptr
	ok     bool
}

func findCurrentField[T any]() currentField {
	f, ok := reflect.TypeFor[ssestream.Stream[T]]().FieldByName("cur")
	if !ok || f.Type != reflect.TypeFor[T]() || len(f.Index) != 1 {
		return currentField{}
	}
	return currentField{offset: f.Offset, ok: true}
}

// current returns a pointer to s's current chunk (the value Current would
// return), or nil when the field was not found. The caller must not keep
// it past the next call of s.Next, nor write through it.
func current[T any](s *ssestream.Stream[T], f currentField) *T {
	if !f.ok {
		return nil
	}
	return (*T)(unsafe.Add(unsafe.Pointer(s), f.offset))
}
