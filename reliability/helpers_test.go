package reliability_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	tiktoken "github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
	"go.uber.org/goleak"

	"github.com/tpsmeter/tpsmeter"
)

// TestMain fails the package if any test leaves a goroutine behind; the
// fault tests also check each scenario on its own with goleak.VerifyNone.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// model is the model every test asks for: gpt-4o-mini counts exactly with
// o200k_base.
const (
	model    = "gpt-4o-mini"
	encoding = "o200k_base"
)

// The oracle for token counts is pkoukk/tiktoken-go, independent of package
// tokenize, with its embedded ranks (set in the test process only).
var (
	oracleOnce sync.Once
	oracleMu   sync.Mutex
	oracleEnc  *tiktoken.Tiktoken
	oracleErr  error
)

// count returns tiktoken's o200k_base count of text.
func count(t testing.TB, text string) int {
	t.Helper()
	oracleOnce.Do(func() {
		tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader())
		oracleEnc, oracleErr = tiktoken.GetEncoding(encoding)
	})
	if oracleErr != nil {
		t.Fatalf("oracle encoding %s: %v", encoding, oracleErr)
	}
	oracleMu.Lock()
	defer oracleMu.Unlock()
	return len(oracleEnc.EncodeOrdinary(text))
}

// connKey finds the server side of a connection from a request's context
// (the *tls.Conn for HTTP/2 over TLS, the *net.TCPConn otherwise), so that
// a handler can reset it.
type connKey struct{}

// newServer starts an httptest server speaking proto ("h1" or "h2"; h2 is
// HTTP/2 over TLS, negotiated by ALPN) and closes it at the end of the test.
func newServer(t testing.TB, proto string, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		return context.WithValue(ctx, connKey{}, c)
	}
	switch proto {
	case "h1":
		srv.Start()
	case "h2":
		srv.EnableHTTP2 = true
		srv.StartTLS()
	default:
		t.Fatalf("unknown protocol %q", proto)
	}
	t.Cleanup(srv.Close)
	return srv
}

// resetConn closes the request's TCP connection with SO_LINGER 0, so that
// the peer receives a TCP RST instead of an orderly FIN.
func resetConn(r *http.Request) error {
	c, _ := r.Context().Value(connKey{}).(net.Conn)
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	tcp, ok := c.(*net.TCPConn)
	if !ok {
		return fmt.Errorf("connection %T is not TCP", c)
	}
	if err := tcp.SetLinger(0); err != nil {
		return err
	}
	return tcp.Close()
}

// newClient returns an openai-go client for srv with the server's own
// HTTP client (HTTP/2 when srv speaks it), no retries unless opts add them.
func newClient(srv *httptest.Server, opts ...option.RequestOption) openai.Client {
	base := []option.RequestOption{option.WithBaseURL(srv.URL), option.WithAPIKey("test-key"),
		option.WithMaxRetries(0), option.WithHTTPClient(srv.Client())}
	return openai.NewClient(append(base, opts...)...)
}

func chatParams(prompt string) openai.ChatCompletionNewParams {
	return openai.ChatCompletionNewParams{
		Model:         model,
		Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage(prompt)},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
}

func responsesParams(prompt string) responses.ResponseNewParams {
	return responses.ResponseNewParams{
		Model: model,
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String(prompt)},
	}
}

// chatText is the visible text of a chat chunk, over all choices.
func chatText(c openai.ChatCompletionChunk) string {
	var b strings.Builder
	for _, ch := range c.Choices {
		b.WriteString(ch.Delta.Content)
	}
	return b.String()
}

// responsesText is the visible text of a Responses event.
func responsesText(ev responses.ResponseStreamEventUnion) string {
	if ev.Type == "response.output_text.delta" {
		return ev.Delta
	}
	return ""
}

// SSE bodies.

func chatEvent(content, finish string) string {
	f := "null"
	if finish != "" {
		f = `"` + finish + `"`
	}
	return fmt.Sprintf(`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini-2024-07-18","choices":[{"index":0,"delta":{"content":%q},"finish_reason":%s}]}`+"\n\n", content, f)
}

const chatRole = `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini-2024-07-18","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}` + "\n\n"

func chatUsage(completion int) string {
	return fmt.Sprintf(`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini-2024-07-18","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":%d,"total_tokens":%d}}`+"\n\n", completion, completion+5)
}

const chatDone = "data: [DONE]\n\n"

func respEvent(typ, fields string) string {
	return fmt.Sprintf("event: %s\ndata: {\"type\":%q,%s}\n\n", typ, typ, fields)
}

func respCreated() string {
	return respEvent("response.created", `"sequence_number":0,"response":{"id":"resp_1","object":"response","created_at":1,"model":"gpt-4o-mini-2024-07-18","output":[],"status":"in_progress"}`)
}

func respDelta(text string) string {
	return respEvent("response.output_text.delta", fmt.Sprintf(`"sequence_number":1,"item_id":"msg_1","output_index":0,"content_index":0,"delta":%q`, text))
}

func respCompleted(output int) string {
	return respEvent("response.completed", fmt.Sprintf(`"sequence_number":9,"response":{"id":"resp_1","object":"response","created_at":1,"model":"gpt-4o-mini-2024-07-18","output":[],"status":"completed","usage":{"input_tokens":5,"input_tokens_details":{"cached_tokens":0},"output_tokens":%d,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":%d}}`, output, output+5))
}

// sseHeaders starts a streaming answer.
func sseHeaders(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
}

// send writes and flushes one piece of body.
func send(w http.ResponseWriter, s string) error {
	if _, err := w.Write([]byte(s)); err != nil {
		return err
	}
	w.(http.Flusher).Flush()
	return nil
}

// digits matches the numbers in an error message (ports, stream ids), which
// differ between two runs of the same scenario.
var digits = regexp.MustCompile(`[0-9]+`)

// errShape describes an error by the types along its Unwrap chain and its
// message with numbers masked, so that the same failure seen in two runs
// (on two connections) compares equal.
func errShape(err error) string {
	if err == nil {
		return "<nil>"
	}
	var types []string
	for e := err; e != nil; e = errors.Unwrap(e) {
		types = append(types, fmt.Sprintf("%T", e))
	}
	return strings.Join(types, ">") + ": " + digits.ReplaceAllString(err.Error(), "N")
}

// finishLog counts Finish callbacks and keeps their Results.
type finishLog struct {
	mu      sync.Mutex
	results []tpsmeter.Result
	signal  chan struct{}
}

func newFinishLog() *finishLog { return &finishLog{signal: make(chan struct{}, 1)} }

func (f *finishLog) hook(i tpsmeter.FinishInfo) {
	f.mu.Lock()
	f.results = append(f.results, i.Result)
	f.mu.Unlock()
	select {
	case f.signal <- struct{}{}:
	default:
	}
}

func (f *finishLog) all() []tpsmeter.Result {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]tpsmeter.Result(nil), f.results...)
}

// within runs f on its own goroutine and fails the test if it has not
// returned after d. It detects deadlocks (a lock left held), not slowness: d
// is generous.
func within(t testing.TB, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s did not return within %v: a lock held?", what, d)
	}
}

// stillServes checks that m, after whatever happened to it, measures a new
// request end to end and returns its aggregates: nothing was left locked.
func stillServes(t testing.TB, m *tpsmeter.Meter) {
	t.Helper()
	within(t, 20*time.Second, "a new request on the same Meter, and Meter.Snapshot", func() {
		_, rec := m.Start(context.Background(), tpsmeter.RequestInfo{Model: model})
		rec.Chunk(rec.Now())
		rec.Content(0, "still")
		rec.FinishReason(0, "stop")
		rec.EndChunk()
		r := rec.End(rec.Now(), nil)
		if r.Status != tpsmeter.StatusComplete || r.OutputTokens != 1 {
			t.Errorf("new request after the fault: status %q, %d tokens", r.Status, r.OutputTokens)
		}
		_ = m.Snapshot()
	})
}
