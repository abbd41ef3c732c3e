package tpsopenai_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/tpsmeter/tpsmeter"
	"github.com/tpsmeter/tpsmeter/internal/shareddata"
	"github.com/tpsmeter/tpsmeter/tpsopenai"
)

// bodyServer answers every POST with the recorded SSE body, as the
// original server did.
func bodyServer(t *testing.T, body []byte) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func newClient(srv *httptest.Server, m *tpsmeter.Meter) openai.Client {
	return openai.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("test-key"),
		option.WithMaxRetries(0), option.WithMiddleware(m.Middleware))
}

// replay streams one recorded body through the real openai-go client and
// the meter, and returns the Result and the stream's own error.
func replay(t *testing.T, m *tpsmeter.Meter, api, model string, body []byte) (tpsmeter.Result, error, int) {
	t.Helper()
	srv := bodyServer(t, body)
	client := newClient(srv, m)
	ctx := context.Background()
	n := 0
	if api == "responses" {
		s := tpsopenai.NewResponseStream(ctx, m, client.Responses.NewStreaming, responses.ResponseNewParams{
			Model: model,
			Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hi")},
		})
		for s.Next() {
			_ = s.Current()
			n++
		}
		err := s.Err()
		_ = s.Close()
		r, ok := s.Result()
		if !ok {
			t.Fatalf("no Result after the stream ended")
		}
		return r, err, n
	}
	s := tpsopenai.NewChatStream(ctx, m, client.Chat.Completions.NewStreaming, openai.ChatCompletionNewParams{
		Model:    model,
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
	})
	for s.Next() {
		_ = s.Current()
		n++
	}
	err := s.Err()
	_ = s.Close()
	r, ok := s.Result()
	if !ok {
		t.Fatalf("no Result after the stream ended")
	}
	return r, err, n
}

// TestReplayRealStreams replays every recorded SSE body in
// ../shared/testdata/real-streams through openai-go and checks the exact
// count of the answer text and its reconciliation with server usage.
func TestReplayRealStreams(t *testing.T) {
	dir := shareddata.RealStreams(t)
	rows := shareddata.Index(t)
	seen := 0
	for _, row := range rows {
		file := row["file"]
		if !strings.HasSuffix(file, ".sse") {
			continue
		}
		seen++
		t.Run(file, func(t *testing.T) {
			body, err := os.ReadFile(filepath.Join(dir, file))
			if err != nil {
				t.Fatalf("read: %v", err)
			}
			enc := row["tiktoken_encoding"]
			host := row["endpoint_host"]
			official := strings.Contains(host, "openai.com") || strings.Contains(host, "azure") || strings.Contains(host, "fake-azure")
			var m *tpsmeter.Meter
			if official {
				m = tpsmeter.New() // the encoding must follow from the model name alone
			} else {
				m = tpsmeter.New(tpsmeter.WithEncoding(enc)) // the index counted other servers' text with this encoding
			}
			res, serr, n := replay(t, m, row["api"], row["model"], body)
			if serr != nil {
				t.Fatalf("stream error: %v", serr)
			}
			if n == 0 {
				t.Fatalf("no chunks")
			}
			if res.Status != tpsmeter.StatusComplete {
				t.Errorf("Status = %q (%v), want complete", res.Status, res.Err)
			}
			if official {
				if res.Encoding != enc || res.TokenBasis != tpsmeter.BasisExact {
					t.Errorf("model %s: encoding %q basis %q, want %s exact", row["model"], res.Encoding, res.TokenBasis, enc)
				}
			}
			want, _ := strconv.Atoi(row["tiktoken_content_tokens"])
			if res.ContentTokens != want {
				t.Errorf("ContentTokens = %d, want %d (tiktoken %s of the concatenated text per choice)", res.ContentTokens, want, enc)
			}
			if row["tool_calls"] == "yes" && res.ToolTokens == 0 {
				t.Errorf("tool call stream counted no tool tokens")
			}
			if c := row["choices"]; c != "" {
				if nc, _ := strconv.Atoi(c); nc != res.Choices {
					t.Errorf("Choices = %d, want %d", res.Choices, nc)
				}
			}
			checkUsage(t, row, res, official)
			t.Logf("%s: content=%d tool=%d reasoning=%d usage=%+v diff=%d chunks=%d/%d ttft=%v",
				file, res.ContentTokens, res.ToolTokens, res.ReasoningTokens, res.Usage, res.UsageDiff, res.OutputChunks, res.Chunks, res.TTFT)
		})
	}
	if seen < 39 {
		t.Errorf("replayed %d recorded streams, want all 39", seen)
	}
}

// checkUsage checks the reconciliation of our count with the server's
// usage, as ../shared/testdata/real-streams/README.txt describes it.
func checkUsage(t *testing.T, row map[string]string, res tpsmeter.Result, official bool) {
	t.Helper()
	if row["has_usage"] != "yes" {
		if res.Usage != nil {
			t.Errorf("Usage = %+v for a stream without usage", res.Usage)
		}
		return
	}
	if res.Usage == nil {
		t.Fatalf("server usage not captured")
	}
	ct, _ := strconv.ParseInt(row["completion_tokens"], 10, 64)
	if res.Usage.CompletionTokens != ct {
		t.Errorf("Usage.CompletionTokens = %d, want %d", res.Usage.CompletionTokens, ct)
	}
	if res.UsageDiff != ct-int64(res.OutputTokens+res.ReasoningTokens) {
		t.Errorf("UsageDiff = %d, want %d", res.UsageDiff, ct-int64(res.OutputTokens+res.ReasoningTokens))
	}
	if !official {
		return // other servers use their own tokenizers: no reconciliation rule
	}
	// What the usage bills beyond the visible output and the reasoning the
	// server says it hid.
	rest := res.UsageDiff - res.Usage.ReasoningTokens
	calls := int64(max(1, res.ToolCalls))
	switch {
	case strings.HasPrefix(row["model"], "gpt-5"):
		// gpt-5 family: 9-13 tokens beyond text and reported reasoning
		// (012: 11 billed for a 2-token answer with reasoning_tokens=0;
		// 015: 78 = 4 + 64 + 10; 027: 469 = 8 + 448 + 13 with a tool call).
		if rest < 1 || rest > 16 {
			t.Errorf("gpt-5 unexplained tokens = %d, want 1..16", rest)
		}
	case res.ToolTokens > 0:
		// Tool calls: framing tokens around each call's name and arguments
		// (007: 8, 010: 7, 024: 8 for one call; 005: 28 for two).
		if rest < 1 || rest > 16*calls {
			t.Errorf("tool call unexplained tokens = %d, want 1..%d for %d calls", rest, 16*calls, calls)
		}
	case row["api"] == "responses":
		// output_tokens is the text's count + 1 on every Responses stream
		// (026: 1680 = 271 + 1408 hidden reasoning + 1).
		if rest != 1 {
			t.Errorf("Responses API unexplained tokens = %d, want +1", rest)
		}
	default:
		// Plain chat: exact in most, +1 on some (008, 011, 016).
		if rest != 0 && rest != 1 {
			t.Errorf("plain chat unexplained tokens = %d, want 0 or +1", rest)
		}
	}
}
