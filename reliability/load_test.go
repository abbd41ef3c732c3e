package reliability_test

import (
	"context"
	"net"
	"net/http"
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/tpsmeter/tpsmeter"
	"github.com/tpsmeter/tpsmeter/llmsim"
	"github.com/tpsmeter/tpsmeter/tpsopenai"
)

// loadReport is what a load run measured.
type loadReport struct {
	streams                   int
	wall                      time.Duration
	chunks, tokens            int64
	peakInFlight              int64 // the meter's, sampled at each first token
	peakGenerating            int64 // the simulator's streams generating at once
	baseHeap, peakHeap        uint64
	conns                     int64
	streamsPerSec, chunksPerS float64
}

// reqIDKey carries a request's number in its context, so that the Finish
// hook can tell which request a Result belongs to.
type reqIDKey struct{}

// runLoad sends n chat streams at once (one goroutine each, no semaphore)
// through one Meter and one openai-go client to the in-process simulator,
// over proto: "h1" (llmsim.Start, one TCP connection per stream) or "h2c"
// (HTTP/2 without TLS, streams multiplexed over a few connections, so that
// thousands are really open at the same time within the file-descriptor
// limit). Every answer is 20 tokens after a fixed TTFT.
func runLoad(t *testing.T, n int, proto string, ttft time.Duration) loadReport {
	t.Helper()
	var truthMu sync.Mutex
	truth := map[string]llmsim.StreamReport{} // by response id
	cfg := llmsim.Config{Seed: 11, Profile: llmsim.Profile{TTFTMedian: ttft, OutputTokens: llmsim.Lengths{Median: 20}},
		OnStream: func(r llmsim.StreamReport) {
			truthMu.Lock()
			truth[r.ID] = r
			truthMu.Unlock()
		}}
	sim := llmsim.New(cfg)
	var base string
	var stop func()
	var conns atomic.Int64
	tr := &http.Transport{MaxIdleConnsPerHost: n, DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		conns.Add(1)
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}}
	switch proto {
	case "h1":
		// One TCP connection per stream in flight, two descriptors each:
		// cap them under the process's limit (20,000 here).
		tr.MaxConnsPerHost = 2000
		s, err := llmsim.Start(cfg)
		if err != nil {
			t.Fatal(err)
		}
		sim = s
		base, stop = s.URL(), func() { _ = s.Close() }
	case "h2c":
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		var p http.Protocols
		p.SetUnencryptedHTTP2(true)
		hs := &http.Server{Handler: sim, Protocols: &p, HTTP2: &http.HTTP2Config{MaxConcurrentStreams: 1000}}
		go func() { _ = hs.Serve(ln) }()
		tr.Protocols = &p
		tr.MaxConnsPerHost = 64 // up to 64,000 streams; without a cap every request that finds no connection ready dials one
		base, stop = "http://"+ln.Addr().String()+"/v1", func() { _ = hs.Close(); _ = sim.Close() }
	default:
		t.Fatalf("unknown protocol %q", proto)
	}
	defer stop()
	defer tr.CloseIdleConnections()

	var resMu sync.Mutex
	results := map[int]tpsmeter.Result{}
	finishes := make([]atomic.Int32, n)
	var peakInFlight atomic.Int64
	var m *tpsmeter.Meter // the hooks read it; set before any request starts
	m = tpsmeter.New(tpsmeter.WithHooks(tpsmeter.Hooks{
		FirstToken: func(tpsmeter.FirstTokenInfo) {
			for v := m.InFlight(); ; {
				p := peakInFlight.Load()
				if v <= p || peakInFlight.CompareAndSwap(p, v) {
					break
				}
			}
		},
		Finish: func(f tpsmeter.FinishInfo) {
			id, ok := f.Context.Value(reqIDKey{}).(int)
			if !ok {
				t.Errorf("a Result without a request id: %+v", f.Result)
				return
			}
			finishes[id].Add(1)
			resMu.Lock()
			results[id] = f.Result
			resMu.Unlock()
		},
	}))
	client := openai.NewClient(option.WithBaseURL(base), option.WithAPIKey("k"), option.WithMaxRetries(0),
		option.WithHTTPClient(&http.Client{Transport: tr}), option.WithMiddleware(m.Middleware))

	// Warm up: one stream opens a connection and loads the encoding.
	ws := tpsopenai.NewChatStream(context.Background(), tpsmeter.New(), client.Chat.Completions.NewStreaming, chatParams("warm up"))
	for ws.Next() {
	}
	if ws.Err() != nil {
		t.Fatalf("warm-up: %v", ws.Err())
	}

	// Sample the simulator's concurrency and the heap while the load runs.
	var peakGen atomic.Int64
	var peakHeap atomic.Uint64
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	runtime.GC()
	metrics.Read(sample)
	baseHeap := sample[0].Value.Uint64()
	sampling := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			if g := sim.Stats().Generating; g > peakGen.Load() {
				peakGen.Store(g)
			}
			metrics.Read(s)
			if h := s[0].Value.Uint64(); h > peakHeap.Load() {
				peakHeap.Store(h)
			}
			select {
			case <-sampling:
				return
			case <-tick.C:
			}
		}
	}()

	respID := make([]string, n)
	streamErr := make([]error, n)
	start := time.Now()
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			ctx := context.WithValue(context.Background(), reqIDKey{}, i)
			s := tpsopenai.NewChatStream(ctx, m, client.Chat.Completions.NewStreaming, chatParams("hi"))
			for s.Next() {
				if respID[i] == "" {
					respID[i] = s.Current().ID
				}
			}
			streamErr[i] = s.Err()
		})
	}
	wg.Wait()
	wall := time.Since(start)
	close(sampling)
	<-sampled

	// Exactly one Result per request, none lost, none doubled.
	if len(results) != n {
		t.Errorf("%d Results for %d requests", len(results), n)
	}
	bad := 0
	for i := range n {
		if c := finishes[i].Load(); c != 1 && bad < 10 {
			bad++
			t.Errorf("request %d: %d Finish calls", i, c)
		}
	}
	// Each Result counts what the simulator sent and billed.
	truthMu.Lock()
	defer truthMu.Unlock()
	var chunks, tokens, ttftCount, partial int64
	bad = 0
	for i := range n {
		r := results[i]
		chunks += int64(r.Chunks)
		tokens += int64(r.OutputTokens)
		if r.OutputChunks > 0 {
			ttftCount++
		}
		if r.Partial() {
			partial++
		}
		tr, ok := truth[respID[i]]
		if (streamErr[i] != nil || !ok || r.Status != tpsmeter.StatusComplete || r.OutputTokens != tr.CompletionTokens ||
			r.Usage == nil || r.Usage.CompletionTokens != int64(tr.CompletionTokens)) && bad < 10 {
			bad++
			t.Errorf("request %d (%s): err %v, status %q, %d tokens, usage %+v; simulator billed %d (report found: %v)",
				i, respID[i], streamErr[i], r.Status, r.OutputTokens, r.Usage, tr.CompletionTokens, ok)
		}
	}
	// The aggregates are the sums of the Results.
	var aReq, aTok, aTTFT, aPartial, aDur int64
	for _, g := range m.Snapshot() {
		aReq += g.Requests
		aTok += g.OutputTokens
		aTTFT += g.TTFT.Count
		aPartial += g.Partial
		aDur += g.Duration.Count
	}
	if aReq != int64(n) || aTok != tokens || aTTFT != ttftCount || aPartial != partial || aDur != int64(n) {
		t.Errorf("aggregates: %d requests, %d tokens, %d TTFTs, %d partial, %d durations; sums of the Results: %d, %d, %d, %d, %d",
			aReq, aTok, aTTFT, aPartial, aDur, n, tokens, ttftCount, partial, n)
	}
	if m.InFlight() != 0 {
		t.Errorf("InFlight = %d after every stream ended", m.InFlight())
	}
	rep := loadReport{streams: n, wall: wall, chunks: chunks, tokens: tokens, peakInFlight: peakInFlight.Load(),
		peakGenerating: peakGen.Load(), baseHeap: baseHeap, peakHeap: peakHeap.Load(), conns: conns.Load(),
		streamsPerSec: float64(n) / wall.Seconds(), chunksPerS: float64(chunks) / wall.Seconds()}
	t.Logf("%d streams over %s: %v wall, %.0f streams/s, %.0f chunks/s, %d tokens; peak in flight %d (meter), %d generating (simulator), %d dials; heap %.1f MiB -> peak %.1f MiB (%.1f KiB per stream in flight)",
		n, proto, wall.Round(time.Millisecond), rep.streamsPerSec, rep.chunksPerS, tokens, rep.peakInFlight, rep.peakGenerating, rep.conns,
		float64(baseHeap)/(1<<20), float64(rep.peakHeap)/(1<<20), float64(rep.peakHeap-baseHeap)/float64(max(1, rep.peakInFlight))/1024)
	return rep
}

// TestLoad10000: 10,000 concurrent metered streams through one Meter. The
// race run (-race -short) skips it and runs TestLoadRace instead.
func TestLoad10000(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: TestLoadRace runs a smaller load")
	}
	rep := runLoad(t, 10_000, "h2c", time.Second)
	if rep.peakInFlight < 5_000 {
		t.Errorf("at most %d streams were in flight at once: the load did not overlap", rep.peakInFlight)
	}
}

// TestLoadRace: the same checks with 500 streams, small enough for the
// race detector, over HTTP/1.1 and HTTP/2.
func TestLoadRace(t *testing.T) {
	for _, proto := range []string{"h1", "h2c"} {
		t.Run(proto, func(t *testing.T) { runLoad(t, 500, proto, 200*time.Millisecond) })
	}
}

// TestMeterMemoryPerStream: the meter's own memory per open stream, 10,000
// Recorders open at once, each having seen a few chunks.
func TestMeterMemoryPerStream(t *testing.T) {
	const n = 10_000
	warmUp()
	m := tpsmeter.New()
	start := time.Unix(0, 0)
	recs := make([]*tpsmeter.Recorder, n)
	base := liveHeap()
	for i := range recs {
		_, recs[i] = m.Start(context.Background(), tpsmeter.RequestInfo{Model: model, Provider: "openai"})
		for j, w := range []string{"Hello", " there", ",", " world"} {
			recs[i].Chunk(start.Add(time.Duration(j+1) * 7 * time.Millisecond))
			recs[i].Content(0, w)
			recs[i].EndChunk()
		}
	}
	open := liveHeap() - base
	for _, r := range recs {
		r.End(start.Add(time.Second), nil)
	}
	t.Logf("%d open streams hold %d B: %d B per stream (meter only)", n, open, open/n)
	if open/n > 64<<10 {
		t.Errorf("%d B per open stream", open/n)
	}
	if m.InFlight() != 0 {
		t.Errorf("InFlight %d", m.InFlight())
	}
}
