package llmsim_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"
	"go.uber.org/goleak"

	"github.com/tpsmeter/tpsmeter/llmsim"
)

func TestShutdownLetsStreamsFinish(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	srv, err := llmsim.Start(llmsim.Config{Profile: llmsim.Profile{TokensPerSecond: 500}})
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	client := openai.NewClient(clientOpts(srv, tr)...)
	stream := client.Chat.Completions.NewStreaming(ctxT(t), openai.ChatCompletionNewParams{Model: "gpt-4o-mini", Messages: userMsg("x"),
		StreamOptions: includeUsage, Metadata: shared.Metadata{llmsim.ExtOutputTokens: "50"}})
	if !stream.Next() {
		t.Fatal(stream.Err())
	}
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		done <- srv.Shutdown(ctx)
	}()
	r := readChat(t, stream, 1)
	if r.err != nil || r.usage == nil || r.usage.CompletionTokens != 50 {
		t.Errorf("the in-flight stream did not finish: err %v usage %v", r.err, r.usage)
	}
	if err := <-done; err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	// after shutdown nothing listens
	if _, err := client.Models.List(ctxT(t)); err == nil {
		t.Errorf("server still answers after Shutdown")
	}
	if err := srv.Start(); !errors.Is(err, llmsim.ErrClosed) {
		t.Errorf("Start after Shutdown: %v", err)
	}
}

func TestShutdownDeadlineCancelsStreams(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	var got reports
	srv, err := llmsim.Start(llmsim.Config{Profile: llmsim.Profile{TokensPerSecond: 10, Slots: 1}, OnStream: got.add})
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	client := openai.NewClient(clientOpts(srv, tr)...)
	stream := client.Chat.Completions.NewStreaming(ctxT(t), openai.ChatCompletionNewParams{Model: "gpt-4o-mini", Messages: userMsg("x"),
		Metadata: shared.Metadata{llmsim.ExtOutputTokens: "1000"}})
	if !stream.Next() {
		t.Fatal(stream.Err())
	}
	// a second request waits in the queue
	queued := make(chan error, 1)
	go func() {
		_, err := client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{Model: "gpt-4o-mini", Messages: userMsg("y")})
		queued <- err
	}()
	for srv.Stats().Queued != 1 {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := srv.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Shutdown = %v, want the deadline error", err)
	}
	for stream.Next() {
	}
	if stream.Err() == nil {
		t.Errorf("a stream cut by shutdown ended without error")
	}
	if err := <-queued; err == nil {
		t.Errorf("the queued request succeeded")
	}
	if reps := got.wait(t, 1); reps[0].Outcome != llmsim.OutcomeClientGone {
		t.Errorf("outcome %q", reps[0].Outcome)
	}
	if st := srv.Stats(); st.InFlight != 0 || st.Queued != 0 || st.Generating != 0 {
		t.Errorf("stats after shutdown %+v", st)
	}
}

func TestHandlerOnlyServerCloses(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	srv := llmsim.New(llmsim.Config{})
	if srv.URL() != "" {
		t.Errorf("URL of a server that does not listen: %q", srv.URL())
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	rec := &recorder{header: http.Header{}}
	req, _ := http.NewRequest(http.MethodGet, "/v1/models", nil)
	srv.ServeHTTP(rec, req)
	if rec.status != http.StatusServiceUnavailable {
		t.Errorf("status after Close %d, want 503", rec.status)
	}
}

type recorder struct {
	header http.Header
	status int
}

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) Write(b []byte) (int, error) { return len(b), nil }
func (r *recorder) WriteHeader(s int)           { r.status = s }
