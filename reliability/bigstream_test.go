package reliability_test

import (
	"context"
	"encoding/json"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/tpsmeter/tpsmeter"
	"github.com/tpsmeter/tpsmeter/llmsim"
	"github.com/tpsmeter/tpsmeter/tpsopenai"
)

// liveHeap returns the bytes of live heap objects after a full collection.
func liveHeap() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// warmUp loads the o200k_base tables (once per process, a few MB, shared by
// every stream) so that heap measurements see only per-stream memory.
func warmUp() {
	m := tpsmeter.New()
	rec := m.StartAt(tpsmeter.RequestInfo{Model: model}, time.Unix(0, 0))
	rec.Chunk(time.Unix(0, 1))
	rec.Content(0, "warm")
	rec.End(time.Unix(0, 2), nil)
}

// simText returns n tokens of the simulator's text, whose o200k_base count
// is exactly n (llmsim's documented guarantee, checked here on a sample
// against tiktoken so the expectation does not rest on llmsim alone).
func simText(t *testing.T, seed uint64, n int) string {
	t.Helper()
	if got := count(t, llmsim.Text(seed, 3000)); got != 3000 {
		t.Fatalf("llmsim.Text(%d, 3000) has %d tokens by tiktoken: it cannot serve as an expectation", seed, got)
	}
	return llmsim.Text(seed, n)
}

// chatContent is one chat chunk with content, JSON-encoded as a server
// would (so that any byte sequence survives).
func chatContent(content string) string {
	b, _ := json.Marshal(content)
	return `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":` + string(b) + `},"finish_reason":null}]}` + "\n\n"
}

// bodyHandler streams a role chunk, the given content chunks, a finish
// chunk and [DONE], each flushed; if hold is not nil it waits for it to be
// closed before the finish chunk (so the client can look at its memory
// while the stream is still open).
func bodyHandler(chunks []string, hold <-chan struct{}) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sseHeaders(w)
		if send(w, chatRole) != nil {
			return
		}
		for i, c := range chunks {
			if _, err := w.Write([]byte(chatContent(c))); err != nil {
				return
			}
			if i%64 == 63 {
				w.(http.Flusher).Flush()
			}
		}
		w.(http.Flusher).Flush()
		if hold != nil {
			select {
			case <-hold:
			case <-r.Context().Done():
				return
			}
		}
		_ = send(w, chatEvent("", "stop")+chatDone)
	})
}

// TestHugeChunk: a single chunk of 10 MB of text, and a 1 MiB single
// pre-token piece (one run of letters, the worst case for BPE), through the
// Recorder and through openai-go: counted exactly, and a finished stream
// keeps no tokenizer state alive.
func TestHugeChunk(t *testing.T) {
	const pieceBytes = 1 << 20
	// A run of 'a' is one piece; tiktoken merges it into 8-letter tokens.
	// Checked on small runs with the oracle, then expected of the long one.
	for _, n := range []int{8, 4096, 8000, 8192} {
		if got := count(t, strings.Repeat("a", n)); got != n/8 {
			t.Fatalf("tiktoken counts %d tokens in %d letters a, expected %d", got, n, n/8)
		}
	}
	tests := []struct {
		name string
		text string
		want int
	}{
		{"10MB text", simText(t, 2, 2_100_000), 2_100_000},
		{"1MiB single piece", strings.Repeat("a", pieceBytes), pieceBytes / 8},
	}
	warmUp()
	for _, tc := range tests {
		if tc.name == "10MB text" && len(tc.text) < 10_000_000 {
			t.Fatalf("the 10 MB chunk has only %d bytes", len(tc.text))
		}
		t.Run(tc.name+"/recorder", func(t *testing.T) {
			m := tpsmeter.New()
			start := time.Unix(0, 0)
			base := liveHeap()
			rec := m.StartAt(tpsmeter.RequestInfo{Model: model}, start)
			rec.Chunk(start.Add(time.Millisecond))
			rec.Content(0, tc.text)
			rec.FinishReason(0, "stop")
			rec.EndChunk()
			open := liveHeap() - base
			r := rec.End(start.Add(2*time.Millisecond), nil)
			kept := liveHeap() - base
			runtime.KeepAlive(rec)
			if r.OutputTokens != tc.want || r.Status != tpsmeter.StatusComplete || r.TokenBasis != tpsmeter.BasisExact {
				t.Errorf("OutputTokens %d (%s, %s), want %d exact and complete", r.OutputTokens, r.TokenBasis, r.Status, tc.want)
			}
			t.Logf("%d bytes in one chunk: heap held while open %d B, after End %d B", len(tc.text), open, kept)
			if kept > 256<<10 {
				t.Errorf("a finished Recorder still holds %d B of heap after a %d-byte chunk (limit 256 KiB)", kept, len(tc.text))
			}
		})
		t.Run(tc.name+"/openai-go", func(t *testing.T) {
			if tc.name != "10MB text" && testing.Short() {
				t.Skip("-short: the single-piece chunk through openai-go")
			}
			srv := newServer(t, "h1", bodyHandler([]string{tc.text}, nil))
			client := newClient(srv)
			// Unmetered, for the memory openai-go itself keeps.
			base := liveHeap()
			ps := client.Chat.Completions.NewStreaming(context.Background(), chatParams("hi"))
			var plain strings.Builder
			for ps.Next() {
				plain.WriteString(chatText(ps.Current()))
			}
			if ps.Err() != nil || plain.Len() != len(tc.text) {
				t.Fatalf("unmetered: err %v, %d of %d bytes", ps.Err(), plain.Len(), len(tc.text))
			}
			plain.Reset()
			plainKept := liveHeap() - base
			runtime.KeepAlive(ps)
			ps = nil

			m := tpsmeter.New()
			base = liveHeap()
			s := tpsopenai.NewChatStream(context.Background(), m, client.Chat.Completions.NewStreaming, chatParams("hi"))
			got := 0
			for s.Next() {
				got += len(chatText(s.Current()))
			}
			r, ok := s.Result()
			kept := liveHeap() - base
			runtime.KeepAlive(s)
			if !ok || s.Err() != nil || got != len(tc.text) {
				t.Fatalf("metered: err %v, %d of %d bytes", s.Err(), got, len(tc.text))
			}
			if r.OutputTokens != tc.want || r.Status != tpsmeter.StatusComplete {
				t.Errorf("OutputTokens %d (%s), want %d and complete", r.OutputTokens, r.Status, tc.want)
			}
			t.Logf("%d-byte chunk through openai-go: finished stream holds %d B unmetered, %d B metered", len(tc.text), plainKept, kept)
			if kept-plainKept > 256<<10 {
				t.Errorf("the meter keeps %d B more than openai-go alone after the stream ended (limit 256 KiB)", kept-plainKept)
			}
		})
	}
}

// splitWords cuts text before every space: one word per chunk, mostly one
// token each, as streaming servers send them.
func splitWords(text string) []string {
	var out []string
	for len(text) > 0 {
		i := strings.IndexByte(text[1:], ' ')
		if i < 0 {
			out = append(out, text)
			break
		}
		out = append(out, text[:i+1])
		text = text[i+1:]
	}
	return out
}

// group joins every k consecutive words into one chunk.
func group(words []string, k int) []string {
	var out []string
	for i := 0; i < len(words); i += k {
		out = append(out, strings.Join(words[i:min(i+k, len(words))], ""))
	}
	return out
}

// recordMany feeds chunks through a Recorder with irregular gaps (so that
// the gap sketches fill as on a real stream) and returns the live heap the
// open stream holds after its last chunk, and its Result.
func recordMany(chunks []string) (open int64, r tpsmeter.Result) {
	m := tpsmeter.New()
	start := time.Unix(0, 0)
	base := liveHeap()
	rec := m.StartAt(tpsmeter.RequestInfo{Model: model}, start)
	at, x := start, uint64(1)
	for _, c := range chunks {
		x = x*6364136223846793005 + 1442695040888963407 // LCG: gaps of 0..16 ms, log-spread
		at = at.Add(time.Duration(x>>40) >> (x >> 60))
		rec.Chunk(at)
		rec.Content(0, c)
		rec.EndChunk()
	}
	open = liveHeap() - base
	runtime.KeepAlive(chunks)
	rec.Chunk(at)
	rec.FinishReason(0, "stop")
	r = rec.End(at, nil)
	return open, r
}

// TestMillionTokenStream: a 1,000,000-token stream, one word per chunk
// through the Recorder and in chunks of 20 words through openai-go, is
// counted exactly and holds no more memory than a 10,000-token stream.
func TestMillionTokenStream(t *testing.T) {
	long := 1_000_000
	if testing.Short() {
		long = 200_000
	}
	const short = 10_000
	const slack = 256 << 10 // bytes a long stream may hold beyond a short one
	longText, shortText := simText(t, 3, long), simText(t, 4, short)
	warmUp()

	t.Run("recorder", func(t *testing.T) {
		lw, sw := splitWords(longText), splitWords(shortText)
		openShort, rs := recordMany(sw)
		openLong, rl := recordMany(lw)
		if rs.OutputTokens != short || rl.OutputTokens != long {
			t.Errorf("OutputTokens %d and %d, want %d and %d", rs.OutputTokens, rl.OutputTokens, short, long)
		}
		if rl.OutputChunks != len(lw) || rl.ChunkGap.Count != int64(len(lw)-1) {
			t.Errorf("output chunks %d, gaps %d, want %d and %d", rl.OutputChunks, rl.ChunkGap.Count, len(lw), len(lw)-1)
		}
		t.Logf("open stream holds %d B after %d tokens (%d chunks), %d B after %d tokens (%d chunks)",
			openShort, short, len(sw), openLong, long, len(lw))
		if openLong-openShort > slack {
			t.Errorf("a %d-token stream holds %d B more than a %d-token one (limit %d)", long, openLong-openShort, short, slack)
		}
	})

	t.Run("openai-go", func(t *testing.T) {
		run := func(chunks []string) (open int64, r tpsmeter.Result) {
			hold := make(chan struct{})
			srv := newServer(t, "h1", bodyHandler(chunks, hold))
			defer srv.Close()
			client := newClient(srv)
			m := tpsmeter.New()
			base := liveHeap()
			var inner *ssestream.Stream[openai.ChatCompletionChunk]
			s := chatAPI.metered(context.Background(), m, client, &inner)
			seen := 0
			for s.Next() {
				if chatText(s.Current()) == "" {
					continue
				}
				if seen++; seen == len(chunks) {
					open = liveHeap() - base
					close(hold)
				}
			}
			if s.Err() != nil {
				t.Fatalf("stream: %v", s.Err())
			}
			r, _ = s.Result()
			return open, r
		}
		lc, sc := group(splitWords(longText), 20), group(splitWords(shortText), 20)
		openShort, rs := run(sc)
		openLong, rl := run(lc)
		if rs.OutputTokens != short || rl.OutputTokens != long || rl.Status != tpsmeter.StatusComplete {
			t.Errorf("OutputTokens %d and %d (%s), want %d and %d", rs.OutputTokens, rl.OutputTokens, rl.Status, short, long)
		}
		t.Logf("open stream through openai-go holds %d B after %d tokens (%d chunks), %d B after %d tokens (%d chunks)",
			openShort, short, len(sc), openLong, long, len(lc))
		if openLong-openShort > slack {
			t.Errorf("a %d-token stream holds %d B more than a %d-token one (limit %d)", long, openLong-openShort, short, slack)
		}
	})
}
