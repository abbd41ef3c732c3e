package tpsopenai_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"go.uber.org/goleak"

	"github.com/tpsmeter/tpsmeter"
	"github.com/tpsmeter/tpsmeter/internal/shareddata"
	"github.com/tpsmeter/tpsmeter/tpsopenai"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func chatParams() openai.ChatCompletionNewParams {
	return openai.ChatCompletionNewParams{
		Model:    "gpt-4o-mini",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
	}
}

const okBody = `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}

data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"Hello"},"finish_reason":null}]}

data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":" world"},"finish_reason":"stop"}]}

data: [DONE]

`

// TestMiddlewareWireTimingsAndRetries: a 500 then a success; openai-go
// retries, the middleware counts two attempts and stamps the last one's
// headers and first byte, in order before the first chunk.
func TestMiddlewareWireTimingsAndRetries(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write([]byte(`{"error":{"message":"try again","type":"server_error"}}`))
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		time.Sleep(20 * time.Millisecond) // headers well before the body
		_, _ = w.Write([]byte(okBody))
	}))
	defer srv.Close()
	m := tpsmeter.New()
	client := openai.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("k"), option.WithMaxRetries(1),
		option.WithMiddleware(m.Middleware), option.WithRequestTimeout(10*time.Second))
	s := tpsopenai.NewChatStream(context.Background(), m, client.Chat.Completions.NewStreaming, chatParams())
	for s.Next() {
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	r, _ := s.Result()
	if r.Attempts != 2 {
		t.Errorf("Attempts = %d, want 2 (one retry)", r.Attempts)
	}
	if !(r.TimeToHeaders > 0 && r.TimeToHeaders <= r.TimeToFirstByte && r.TimeToFirstByte <= r.TimeToFirstChunk && r.TimeToFirstChunk <= r.TTFT) {
		t.Errorf("want 0 < headers <= first byte <= first chunk <= TTFT: %v %v %v %v", r.TimeToHeaders, r.TimeToFirstByte, r.TimeToFirstChunk, r.TTFT)
	}
	if r.TimeToFirstByte-r.TimeToHeaders < 15*time.Millisecond {
		t.Errorf("first byte %v should trail headers %v by the server's 20ms pause", r.TimeToFirstByte, r.TimeToHeaders)
	}
	if r.OutputTokens != 2 || r.Status != tpsmeter.StatusComplete {
		t.Errorf("tokens %d status %q", r.OutputTokens, r.Status)
	}
}

// TestHTTPErrorPassesThrough: a 429 surfaces unchanged from the wrapped
// stream and the Result names it.
func TestHTTPErrorPassesThrough(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", "0")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = w.Write([]byte(`{"error":{"message":"slow down","type":"rate_limit_error","code":"rate_limit_exceeded"}}`))
	}))
	defer srv.Close()
	m := tpsmeter.New()
	client := newClient(srv, m)
	s := tpsopenai.NewChatStream(context.Background(), m, client.Chat.Completions.NewStreaming, chatParams())
	if s.Next() {
		t.Fatal("Next = true on a 429")
	}
	var ae *openai.Error
	if !errors.As(s.Err(), &ae) || ae.StatusCode != 429 {
		t.Fatalf("Err = %v, want the *openai.Error 429", s.Err())
	}
	r, _ := s.Result()
	if r.Err != s.Err() || r.ErrorType != "429" || r.Status != tpsmeter.StatusPartial || r.Attempts != 1 {
		t.Errorf("Result err %v type %q status %q attempts %d", r.Err, r.ErrorType, r.Status, r.Attempts)
	}
}

// TestMidStreamErrorKeepsWhatArrived replays llama.cpp's real mid-stream
// error: the stream's error is openai-go's *ssestream.StreamError, and the
// partial Result keeps the 40 content chunks that arrived.
func TestMidStreamErrorKeepsWhatArrived(t *testing.T) {
	body, err := os.ReadFile(filepath.Join(shareddata.RealStreams(t), "local-llama-server", "tiny-random-chat-midstream-error.sse"))
	if err != nil {
		t.Fatalf("shared test data missing: %v", err)
	}
	m := tpsmeter.New()
	r, serr, _ := replay(t, m, "chat", "tiny-random-llama", body)
	var se *ssestream.StreamError
	if !errors.As(serr, &se) {
		t.Fatalf("stream error = %v, want *ssestream.StreamError", serr)
	}
	if r.Err != serr || r.ErrorType != "stream_error" || !r.Partial() {
		t.Errorf("Result err %v type %q partial %v", r.Err, r.ErrorType, r.Partial())
	}
	if r.OutputChunks != 40 || r.OutputTokens == 0 || r.TokenBasis != tpsmeter.BasisEstimate {
		t.Errorf("partial Result lost data: %d output chunks, %d tokens (%s)", r.OutputChunks, r.OutputTokens, r.TokenBasis)
	}
}

// TestTruncatedStreamIsPartial: EOF without a finish reason or [DONE] is
// not an error for openai-go, but the Result says truncated.
func TestTruncatedStreamIsPartial(t *testing.T) {
	body := okBody[:strings.Index(okBody, `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":" world"}`)]
	m := tpsmeter.New()
	r, serr, _ := replay(t, m, "chat", "gpt-4o-mini", []byte(body))
	if serr != nil {
		t.Fatalf("openai-go reported %v", serr)
	}
	if !errors.Is(r.Err, tpsmeter.ErrTruncated) || r.ErrorType != tpsmeter.ErrorTypeTruncated || r.OutputTokens != 1 {
		t.Errorf("Result err %v type %q tokens %d", r.Err, r.ErrorType, r.OutputTokens)
	}
}

// TestEarlyCloseAndCancel: a loop that stops early and closes, and a
// context cancelled while the server stalls, each end the Result once, as
// partial, with no goroutine left (TestMain checks).
func TestEarlyCloseAndCancel(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(okBody[:strings.Index(okBody, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o-mini\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\" world\"")]))
		w.(http.Flusher).Flush()
		select { // stall until the client goes away or the test ends
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	var finishes atomic.Int32
	m := tpsmeter.New(tpsmeter.WithHooks(tpsmeter.Hooks{Finish: func(tpsmeter.FinishInfo) { finishes.Add(1) }}))
	client := newClient(srv, m)

	s := tpsopenai.NewChatStream(context.Background(), m, client.Chat.Completions.NewStreaming, chatParams())
	for s.Next() {
		if c := s.Current(); len(c.Choices) > 0 && c.Choices[0].Delta.Content == "Hello" {
			break
		}
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	_ = s.Close() // idempotent
	r, ok := s.Result()
	if !ok || !errors.Is(r.Err, tpsmeter.ErrClosedEarly) || r.OutputTokens != 1 {
		t.Errorf("early close: ok %v err %v tokens %d", ok, r.Err, r.OutputTokens)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	s = tpsopenai.NewChatStream(ctx, m, client.Chat.Completions.NewStreaming, chatParams())
	for s.Next() {
	}
	if !errors.Is(s.Err(), context.DeadlineExceeded) {
		t.Fatalf("Err = %v, want deadline exceeded", s.Err())
	}
	r, _ = s.Result()
	if r.ErrorType != tpsmeter.ErrorTypeDeadline || r.OutputTokens != 1 || !r.Partial() {
		t.Errorf("deadline: type %q tokens %d partial %v", r.ErrorType, r.OutputTokens, r.Partial())
	}
	_ = s.Close()
	if finishes.Load() != 2 {
		t.Errorf("Finish fired %d times for 2 requests", finishes.Load())
	}
}
