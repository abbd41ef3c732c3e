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
	decode := func(body []byte) *http.Response {
		return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": []string{"text/event-stream"}}, Body: io.NopCloser(bytes.NewReader(body))}
	}
	check := func(t *testing.T, api string, body []byte) int {
		n := 0
		if api == "responses" {
			s := ssestream.NewStream[responses.ResponseStreamEventUnion](ssestream.NewDecoder(decode(body)), nil)
			for s.Next() {
				if got, want := current(s, responsesCurrent), s.Current(); got == nil || !reflect.DeepEqual(*got, want) {
					t.Fatalf("event %d read in place differs from Current", n)
				}
				n++
			}
			return n
		}
		s := ssestream.NewStream[openai.ChatCompletionChunk](ssestream.NewDecoder(decode(body)), nil)
		for s.Next() {
			if got, want := current(s, chatCurrent), s.Current(); got == nil || !reflect.DeepEqual(*got, want) {
				t.Fatalf("chunk %d read in place differs from Current", n)
			}
			n++
		}
		return n
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
