package llmsim_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	tiktoken "github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"

	"github.com/tpsmeter/tpsmeter/llmsim"
)

// start starts a server for one test and closes it at the end.
func start(t testing.TB, cfg llmsim.Config) *llmsim.Server {
	t.Helper()
	srv, err := llmsim.Start(cfg)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return srv
}

// newClient returns an openai-go client for srv that never retries, with its
// own transport (closed at the end of the test, so no goroutine lingers).
func newClient(t testing.TB, srv *llmsim.Server, opts ...option.RequestOption) openai.Client {
	t.Helper()
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	t.Cleanup(tr.CloseIdleConnections)
	base := []option.RequestOption{
		option.WithBaseURL(srv.URL()), option.WithAPIKey("test-key"), option.WithMaxRetries(0),
		option.WithHTTPClient(&http.Client{Transport: tr}),
	}
	return openai.NewClient(append(base, opts...)...)
}

// clientOpts are newClient's options with a caller-owned transport.
func clientOpts(srv *llmsim.Server, tr *http.Transport) []option.RequestOption {
	return []option.RequestOption{option.WithBaseURL(srv.URL()), option.WithAPIKey("k"), option.WithMaxRetries(0),
		option.WithHTTPClient(&http.Client{Transport: tr})}
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

var (
	encOnce sync.Once
	encs    map[string]*tiktoken.Tiktoken
	encErr  error
)

// encoding returns a tiktoken encoding from the embedded ranks (no download).
func encoding(t testing.TB, name string) *tiktoken.Tiktoken {
	t.Helper()
	encOnce.Do(func() {
		tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader())
		encs = map[string]*tiktoken.Tiktoken{}
		for _, n := range []string{llmsim.EncodingCL100k, llmsim.EncodingO200k} {
			e, err := tiktoken.GetEncoding(n)
			if err != nil {
				encErr = err
				return
			}
			encs[n] = e
		}
	})
	if encErr != nil {
		t.Fatalf("tiktoken: %v", encErr)
	}
	return encs[name]
}

func countTokens(t testing.TB, model, text string) int {
	return len(encoding(t, llmsim.EncodingForModel(model)).Encode(text, nil, nil))
}

// sharedDir returns ../shared beside the module root, failing the test with
// the path it looked for when it is missing.
func sharedDir(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			shared := filepath.Join(d, "..", "shared")
			if _, err := os.Stat(filepath.Join(shared, "testdata", "real-streams")); err != nil {
				t.Fatalf("missing %s: the recorded streams are needed to check the wire format (%v)", filepath.Join(shared, "testdata", "real-streams"), err)
			}
			return shared
		}
		if filepath.Dir(d) == d {
			t.Fatalf("no go.mod above %s; cannot locate ../shared", dir)
		}
	}
}

// reports collects StreamReports.
type reports struct {
	mu   sync.Mutex
	list []llmsim.StreamReport
}

func (r *reports) add(rep llmsim.StreamReport) {
	r.mu.Lock()
	r.list = append(r.list, rep)
	r.mu.Unlock()
}

// wait returns the reports once there are n (OnStream runs after the last
// byte was written, so a client may finish reading a little before it).
func (r *reports) wait(t testing.TB, n int) []llmsim.StreamReport {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := r.all()
		if len(got) >= n || time.Now().After(deadline) {
			if len(got) != n {
				t.Fatalf("%d stream reports, want %d", len(got), n)
			}
			return got
		}
		time.Sleep(time.Millisecond)
	}
}

func (r *reports) all() []llmsim.StreamReport {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]llmsim.StreamReport(nil), r.list...)
}

// fakeClock is a virtual clock: sleeping jumps to the wake-up time, so
// schedules are followed exactly and instantly.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) SleepUntil(ctx context.Context, t time.Time) error {
	c.mu.Lock()
	if t.After(c.now) {
		c.now = t
	}
	c.mu.Unlock()
	return ctx.Err()
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}
