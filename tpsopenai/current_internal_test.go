package tpsopenai

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/responses"

	"github.com/tpsmeter/tpsmeter/internal/shareddata"
	"github.com/tpsmeter/tpsmeter/internal/streamtest"
)

// TestCurrentFieldFound fails when openai-go no longer keeps the current
// chunk in a field "cur" of type T: the extractors then copy every chunk
// (correct, but slower), and currentField's doc and docs/performance.md
// need another look.
func TestCurrentFieldFound(t *testing.T) {
	if !chatCurrent.ok {
		t.Error("ssestream.Stream[openai.ChatCompletionChunk] has no field cur of the chunk type")
	}
	if !responsesCurrent.ok {
		t.Error("ssestream.Stream[responses.ResponseStreamEventUnion] has no field cur of the event type")
	}
}

// TestCurrentInPlaceIsCurrent: after every Next of every recorded stream
// (and the benchmarks' 1,000-chunk stream), the chunk read in place is
// Current's value, field for field.
func TestCurrentInPlaceIsCurrent(t *testing.T) {
	dir := shareddata.RealStreams(t)
	check := func(t *testing.T, api string, body []byte) int {
		if api == "responses" {
			return checkInPlace[responses.ResponseStreamEventUnion](t, body, responsesCurrent)
		}
		return checkInPlace[openai.ChatCompletionChunk](t, body, chatCurrent)
	}
	if n := check(t, "chat", streamtest.Chat1000); n != 1000 {
		t.Fatalf("Chat1000: %d chunks", n)
	}
	seen := 0
	for _, row := range shareddata.Index(t) {
		if !strings.HasSuffix(row["file"], ".sse") {
			continue
		}
		body, err := os.ReadFile(filepath.Join(dir, row["file"]))
		if err != nil {
			t.Fatal(err)
		}
		if check(t, row["api"], body) > 0 {
			seen++
		}
	}
	if seen < 30 {
		t.Errorf("only %d recorded streams had chunks", seen)
	}
}

// checkInPlace decodes body with openai-go's SSE decoder and compares the
// chunk read in place with Current after every Next; it returns the number
// of chunks.
func checkInPlace[T any](t *testing.T, body []byte, f currentField) int {
	t.Helper()
	res := &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": []string{"text/event-stream"}}, Body: io.NopCloser(bytes.NewReader(body))}
	s := ssestream.NewStream[T](ssestream.NewDecoder(res), nil)
	n := 0
	for s.Next() {
		if got, want := current(s, f), s.Current(); got == nil || !reflect.DeepEqual(*got, want) {
			t.Fatalf("chunk %d read in place differs from Current", n)
		}
		n++
	}
	return n
}
