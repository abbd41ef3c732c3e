package reliability_test

import (
	"context"
	"errors"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/responses"
	"go.uber.org/goleak"

	"github.com/tpsmeter/tpsmeter"
	"github.com/tpsmeter/tpsmeter/tpsopenai"
)

// meteredStream is what the package's metered streams offer: the wrapped
// stream's methods plus Result.
type meteredStream[T any] interface {
	Next() bool
	Current() T
	Err() error
	Close() error
	Result() (tpsmeter.Result, bool)
}

// api is one of openai-go's streaming APIs, unmetered and metered.
type api[T any] struct {
	name string
	// plain opens the stream without the meter.
	plain func(ctx context.Context, c openai.Client) *ssestream.Stream[T]
	// metered opens it through the package's constructor and keeps the
	// inner openai-go stream in *inner.
	metered func(ctx context.Context, m *tpsmeter.Meter, c openai.Client, inner **ssestream.Stream[T]) meteredStream[T]
	text    func(T) string
}

var chatAPI = api[openai.ChatCompletionChunk]{
	name: "chat",
	plain: func(ctx context.Context, c openai.Client) *ssestream.Stream[openai.ChatCompletionChunk] {
		return c.Chat.Completions.NewStreaming(ctx, chatParams("hi"))
	},
	metered: func(ctx context.Context, m *tpsmeter.Meter, c openai.Client, inner **ssestream.Stream[openai.ChatCompletionChunk]) meteredStream[openai.ChatCompletionChunk] {
		open := func(ctx context.Context, p openai.ChatCompletionNewParams, o ...option.RequestOption) *ssestream.Stream[openai.ChatCompletionChunk] {
			*inner = c.Chat.Completions.NewStreaming(ctx, p, o...)
			return *inner
		}
		return tpsopenai.NewChatStream(ctx, m, open, chatParams("hi"))
	},
	text: chatText,
}

var responsesAPI = api[responses.ResponseStreamEventUnion]{
	name: "responses",
	plain: func(ctx context.Context, c openai.Client) *ssestream.Stream[responses.ResponseStreamEventUnion] {
		return c.Responses.NewStreaming(ctx, responsesParams("hi"))
	},
	metered: func(ctx context.Context, m *tpsmeter.Meter, c openai.Client, inner **ssestream.Stream[responses.ResponseStreamEventUnion]) meteredStream[responses.ResponseStreamEventUnion] {
		open := func(ctx context.Context, p responses.ResponseNewParams, o ...option.RequestOption) *ssestream.Stream[responses.ResponseStreamEventUnion] {
			*inner = c.Responses.NewStreaming(ctx, p, o...)
			return *inner
		}
		return tpsopenai.NewResponseStream(ctx, m, open, responsesParams("hi"))
	},
	text: responsesText,
}

// Faults, injected after the first word ("Hello") reached the caller.
const (
	faultNone      = "none"       // the stream ends normally
	faultReset     = "reset"      // TCP RST on the connection
	faultAbort     = "abort"      // the handler aborts (http.ErrAbortHandler): h1 cuts the connection, h2 sends RST_STREAM
	faultStall     = "stall"      // the server stalls forever; the caller's deadline ends the stream
	faultTruncJSON = "trunc-json" // an event whose JSON is cut short
	faultEOF       = "eof"        // the body ends without a terminal event
	faultErrEvent  = "error-event"
	faultRetryOK   = "5xx-then-ok" // a 500, then success on openai-go's retry
	fault5xx       = "5xx"         // 503 on every attempt
	faultHang      = "hang"        // the server keeps the stream open; the caller stops reading
)

// Consumers: how the caller reads.
const (
	readAll     = "all"      // until Next returns false
	breakClose  = "close"    // break after "Hello", then Close
	breakNoStop = "no-close" // break after "Hello" and drop the stream without Close
)

// faultServer answers every request with a two-word stream and injects its
// fault once the caller has seen the first word.
type faultServer struct {
	api, fault string
	attempts   atomic.Int32
	consumed   chan struct{} // closed by the caller when it saw "Hello"
	gone       chan struct{} // closed when a handler saw the client go away
	goneOnce   sync.Once
	release    chan struct{} // closed at the end of the test
}

func newFaultServer(api, fault string) *faultServer {
	return &faultServer{api: api, fault: fault, consumed: make(chan struct{}), gone: make(chan struct{}), release: make(chan struct{})}
}

func (fs *faultServer) head() string {
	if fs.api == "chat" {
		return chatRole + chatEvent("Hello", "")
	}
	return respCreated() + respDelta("Hello")
}

func (fs *faultServer) tail() string {
	if fs.api == "chat" {
		return chatEvent(" world", "stop") + chatUsage(2) + chatDone
	}
	return respDelta(" world") + respCompleted(2)
}

func (fs *faultServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := fs.attempts.Add(1)
	if fs.fault == fault5xx || (fs.fault == faultRetryOK && n == 1) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After-Ms", "1")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"error":{"message":"try again","type":"server_error","param":null,"code":null}}`))
		return
	}
	sseHeaders(w)
	if send(w, fs.head()) != nil {
		return
	}
	if fs.fault == faultNone || fs.fault == faultRetryOK {
		_ = send(w, fs.tail())
		return
	}
	select {
	case <-fs.consumed:
	case <-r.Context().Done():
		fs.goneOnce.Do(func() { close(fs.gone) })
		return
	case <-fs.release:
		return
	}
	switch fs.fault {
	case faultReset:
		_ = resetConn(r)
	case faultAbort:
		panic(http.ErrAbortHandler)
	case faultStall, faultHang:
		select {
		case <-r.Context().Done():
			fs.goneOnce.Do(func() { close(fs.gone) })
		case <-fs.release:
		}
	case faultTruncJSON:
		if fs.api == "chat" {
			_ = send(w, `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"choices":[{"index":0,"delta":{"content":" wor`+"\n\n")
		} else {
			_ = send(w, "event: response.output_text.delta\n"+`data: {"type":"response.output_text.delta","delta":" wor`+"\n\n")
		}
		_ = send(w, fs.tail())
	case faultEOF:
	case faultErrEvent:
		if fs.api == "chat" {
			_ = send(w, `data: {"error":{"message":"The server had an error while processing your request.","type":"server_error","param":null,"code":null}}`+"\n\n")
		} else {
			_ = send(w, respEvent("error", `"sequence_number":2,"code":"server_error","message":"The server had an error while processing your request.","param":null`))
		}
	}
}

// lateDeadline is a context whose deadline passes a moment after arm is
// called (when the first word arrived), so a stalled stream is ended by the
// caller's deadline however slowly the machine reached that point.
type lateDeadline struct {
	context.Context
	done chan struct{}
	once sync.Once
}

func newLateDeadline() *lateDeadline {
	return &lateDeadline{Context: context.Background(), done: make(chan struct{})}
}

func (c *lateDeadline) arm(d time.Duration) {
	time.AfterFunc(d, func() { c.once.Do(func() { close(c.done) }) })
}

func (c *lateDeadline) Done() <-chan struct{} { return c.done }

func (c *lateDeadline) Err() error {
	select {
	case <-c.done:
		return context.DeadlineExceeded
	default:
		return nil
	}
}

// scenario is one fault, read one way.
type scenario struct {
	fault, consumer string
	retries         int
	// wantType is the Result's ErrorType ("" for a complete stream) for an
	// API and protocol.
	wantType func(api, proto string) string
	attempts int
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func always(s string) func(string, string) string { return func(string, string) string { return s } }

var scenarios = []scenario{
	{fault: faultNone, consumer: readAll, wantType: always(""), attempts: 1},
	{fault: faultReset, consumer: readAll, wantType: always(tpsmeter.ErrorTypeConnection)},
	{fault: faultAbort, consumer: readAll, wantType: func(_, proto string) string {
		if proto == "h2" {
			return tpsmeter.ErrorTypeOther // RST_STREAM(INTERNAL_ERROR): net/http's unexported http2StreamError
		}
		return tpsmeter.ErrorTypeTruncated // the chunked body ends early: io.ErrUnexpectedEOF
	}},
	{fault: faultStall, consumer: readAll, wantType: always(tpsmeter.ErrorTypeDeadline)},
	{fault: faultTruncJSON, consumer: readAll, wantType: always(tpsmeter.ErrorTypeOther)},
	{fault: faultEOF, consumer: readAll, wantType: always(tpsmeter.ErrorTypeTruncated)},
	{fault: faultErrEvent, consumer: readAll, wantType: always("stream_error")},
	{fault: faultRetryOK, consumer: readAll, retries: 1, wantType: always(""), attempts: 2},
	{fault: fault5xx, consumer: readAll, retries: 1, wantType: always("503"), attempts: 2},
	{fault: faultHang, consumer: breakClose, wantType: always(tpsmeter.ErrorTypeClosedEarly)},
	{fault: faultHang, consumer: breakNoStop, wantType: always(tpsmeter.ErrorTypeClosedEarly)},
}

// TestFaults runs every fault over HTTP/1.1 and HTTP/2, for Chat
// Completions and the Responses API, through the real openai-go client:
// once without the meter and once with it, and compares.
func TestFaults(t *testing.T) {
	for _, proto := range []string{"h1", "h2"} {
		for _, sc := range scenarios {
			name := proto + "/" + sc.fault + "/" + sc.consumer
			t.Run("chat/"+name, func(t *testing.T) { runFault(t, chatAPI, proto, sc) })
			t.Run("responses/"+name, func(t *testing.T) { runFault(t, responsesAPI, proto, sc) })
		}
	}
}

// streamer is what the caller's loop needs from a stream, metered or not.
type streamer[T any] interface {
	Next() bool
	Current() T
}

// readStream is the caller's loop: it returns the texts it saw, and tells
// the server (and the deadline) when the first word arrived.
func readStream[T any](s streamer[T], text func(T) string, consumer string, onHello func()) []string {
	var texts []string
	for s.Next() {
		x := text(s.Current())
		if x == "" {
			continue
		}
		texts = append(texts, x)
		if x == "Hello" {
			onHello()
			if consumer != readAll {
				break
			}
		}
	}
	return texts
}

func runFault[T any](t *testing.T, a api[T], proto string, sc scenario) {
	ign := goleak.IgnoreCurrent()

	// The same scenario without the meter: what the caller sees without us.
	plainSrv := newFaultServer(a.name, sc.fault)
	srv := newServer(t, proto, plainSrv)
	var ctx context.Context = context.Background()
	ld := newLateDeadline()
	cancelCtx, cancel := context.WithCancel(context.Background())
	if sc.fault == faultStall {
		ctx = ld
	} else {
		ctx = cancelCtx
	}
	hello := func(fs *faultServer, ld *lateDeadline) func() {
		return func() {
			close(fs.consumed)
			ld.arm(50 * time.Millisecond)
		}
	}
	client := newClient(srv, option.WithMaxRetries(sc.retries))
	var plainTexts []string
	var plainErr error
	func() {
		s := a.plain(ctx, client)
		plainTexts = readStream[T](s, a.text, sc.consumer, hello(plainSrv, ld))
		plainErr = s.Err()
		if sc.consumer == breakClose {
			_ = s.Close()
		}
	}()
	cancel() // frees a connection left open by a caller that did not Close
	close(plainSrv.release)
	srv.Close()

	// The same scenario, metered.
	fs := newFaultServer(a.name, sc.fault)
	srv = newServer(t, proto, fs)
	log := newFinishLog()
	m := tpsmeter.New(tpsmeter.WithHooks(tpsmeter.Hooks{Finish: log.hook}))
	client = newClient(srv, option.WithMaxRetries(sc.retries), option.WithMiddleware(m.Middleware))
	ld = newLateDeadline()
	cancelCtx, cancel = context.WithCancel(context.Background())
	defer cancel()
	if sc.fault == faultStall {
		ctx = ld
	} else {
		ctx = cancelCtx
	}
	var inner *ssestream.Stream[T]
	var texts []string
	var err error
	var res tpsmeter.Result
	var resOK bool
	func() {
		s := a.metered(ctx, m, client, &inner)
		texts = readStream[T](s, a.text, sc.consumer, hello(fs, ld))
		err = s.Err()
		if err != inner.Err() {
			t.Errorf("metered Err() = %v, want the inner stream's own error %v", err, inner.Err())
		}
		switch sc.consumer {
		case breakClose:
			if cerr := s.Close(); cerr != nil {
				t.Errorf("Close: %v", cerr)
			}
		case breakNoStop:
			return // the stream is dropped here, unfinished
		}
		res, resOK = s.Result()
	}()
	if sc.consumer == breakNoStop {
		// The abandoned Stream finishes its Recorder when it is collected.
		deadline := time.After(20 * time.Second)
	wait:
		for {
			runtime.GC()
			select {
			case <-log.signal:
				break wait
			case <-deadline:
				t.Fatal("an abandoned stream was never finished")
			case <-time.After(5 * time.Millisecond):
			}
		}
		res, resOK = log.all()[0], true
		cancel() // as without the meter: the caller's context frees the connection
	}
	if sc.consumer == breakClose {
		select { // the server sees the client go away after Close
		case <-fs.gone:
		case <-time.After(20 * time.Second):
			t.Errorf("the server never saw the connection closed after Close")
		}
	}

	// (1) The caller sees exactly what openai-go shows without the meter.
	if strings.Join(texts, "|") != strings.Join(plainTexts, "|") {
		t.Errorf("texts = %q, without the meter %q", texts, plainTexts)
	}
	if errShape(err) != errShape(plainErr) {
		t.Errorf("stream error differs from the unmetered run:\n metered:   %s\n unmetered: %s", errShape(err), errShape(plainErr))
	}
	// (2) One Result, partial unless the stream completed, with what arrived.
	if !resOK {
		t.Fatal("no Result after the stream ended")
	}
	want := sc.wantType(a.name, proto)
	if res.ErrorType != want {
		t.Errorf("ErrorType = %q (err %v), want %q", res.ErrorType, res.Err, want)
	}
	if (want == "") != (res.Status == tpsmeter.StatusComplete) || res.Partial() == (want == "") {
		t.Errorf("Status = %q with ErrorType %q", res.Status, res.ErrorType)
	}
	switch {
	case want == "":
		if res.Err != nil {
			t.Errorf("complete stream with Result.Err %v", res.Err)
		}
	case want == tpsmeter.ErrorTypeClosedEarly:
		if !errors.Is(res.Err, tpsmeter.ErrClosedEarly) {
			t.Errorf("Result.Err = %v, want ErrClosedEarly", res.Err)
		}
	case err == nil:
		// openai-go saw no error: the meter names what it saw instead.
		var ee *tpsopenai.EventError
		if !errors.Is(res.Err, tpsmeter.ErrTruncated) && !errors.As(res.Err, &ee) {
			t.Errorf("Result.Err = %v, want ErrTruncated or an *EventError", res.Err)
		}
	default:
		if res.Err != err {
			t.Errorf("Result.Err = %v, want the stream's own error %v unchanged", res.Err, err)
		}
	}
	if wantTok := count(t, strings.Join(texts, "")); res.OutputTokens != wantTok {
		t.Errorf("OutputTokens = %d, want %d (tiktoken count of %q)", res.OutputTokens, wantTok, texts)
	}
	if sc.attempts > 0 && res.Attempts != sc.attempts {
		t.Errorf("Attempts = %d, want %d", res.Attempts, sc.attempts)
	}
	// (3) Exactly one Finish.
	if got := len(log.all()); got != 1 {
		t.Errorf("Finish called %d times, want 1", got)
	}
	if m.InFlight() != 0 {
		t.Errorf("InFlight = %d after the stream ended", m.InFlight())
	}
	// (5) No lock held: the same Meter serves a new request.
	stillServes(t, m)
	var reqs, partial int64
	for _, g := range m.Snapshot() {
		reqs += g.Requests
		partial += g.Partial
	}
	if wantPartial := b2i(want != ""); reqs != 2 || partial != wantPartial {
		t.Errorf("aggregates after the fault and one more request: %d requests, %d partial, want 2 and %d", reqs, partial, wantPartial)
	}
	t.Logf("%s %s %s: err %s; Result %s/%q, %d tokens", a.name, proto, sc.fault, errShape(err), res.Status, res.ErrorType, res.OutputTokens)

	// (4) No goroutine left once the server is gone.
	cancel()
	close(fs.release)
	srv.Close()
	goleak.VerifyNone(t, ign)
}
