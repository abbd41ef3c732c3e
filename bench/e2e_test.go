package bench_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tpsmeter/tpsmeter/bench"
	"github.com/tpsmeter/tpsmeter/llmsim"
)

// End-to-end tests against the in-process simulator. Timing assertions
// are about distributions with generous tolerances (the machine is small
// and shared), never about how long a test takes.

// The timing tests below do not run in parallel (with each other or with
// the parallel tests, which Go runs after them): they measure time.

func TestPresetsMeasured(t *testing.T) {
	tests := []struct {
		preset           string
		ttftLo, ttftHi   float64 // seconds, around the preset's TTFT median
		tpsLo, tpsHi     float64 // decode rate of hard (unpredictable) text
		minTokensPerChnk float64
	}{
		{"fast-steady", 0.19, 0.36, 68, 92, 1},    // 250 ms, 80 tok/s, 1 token per chunk
		{"bursty-batched", 0.35, 1.00, 45, 80, 3}, // 600 ms, 60 tok/s, chunks of 3 (hard prompts rarely burst)
		{"slow-reasoning", 1.25, 2.60, 28, 42, 1}, // 1.2 s + 20 visible reasoning tokens (set below) at 35 tok/s before the answer
	}
	for _, tc := range tests {
		t.Run(tc.preset, func(t *testing.T) {
			p := preset(t, tc.preset)
			if tc.preset == "slow-reasoning" {
				p.ReasoningTokens = 20 // keep the test short: 20 reasoning tokens ≈ 0.6 s
			}
			srv, tg := startSimServer(t, tc.preset, p, 1)
			res := calmRun(t, bench.Config{
				Targets:  []bench.Target{tg},
				Workload: oneShape("hard", "short", 30), Requests: 16, Concurrency: 16, Seed: 1,
			}, srv)
			c := res.Cell(bench.CellKey{Target: tc.preset, Bucket: "short", Class: "hard", Phase: bench.PhaseMeasure})
			if c == nil || c.Completed != 16 {
				t.Fatalf("cell = %+v, want 16 completed requests", c)
			}
			skipTimingUnderRace(t)
			ttft := c.Metric(bench.MetricTTFT).Quantile(0.5)
			if ttft < tc.ttftLo || ttft > tc.ttftHi {
				t.Errorf("TTFT p50 = %.3fs, want within [%.2f, %.2f]", ttft, tc.ttftLo, tc.ttftHi)
			}
			tps := c.Metric(bench.MetricDecodeTPS).Quantile(0.5)
			if tps < tc.tpsLo || tps > tc.tpsHi {
				t.Errorf("decode TPS p50 = %.1f, want within [%.0f, %.0f]", tps, tc.tpsLo, tc.tpsHi)
			}
			if tpc := c.Metric(bench.MetricTokensPerChunk).Quantile(0.5); tpc < tc.minTokensPerChnk {
				t.Errorf("tokens per chunk p50 = %v, want >= %v", tpc, tc.minTokensPerChnk)
			}
			if out := c.Metric(bench.MetricOutputTokens); out.Summary().Min != 30 || out.Summary().Max != 30 {
				t.Errorf("output tokens %v..%v, want exactly the 30 asked of the simulator", out.Summary().Min, out.Summary().Max)
			}
		})
	}
}

func TestColdStartProbes(t *testing.T) {
	p := llmsim.Profile{
		TTFTMedian: 50 * time.Millisecond, TokensPerSecond: 400,
		ColdStartPenalty: 500 * time.Millisecond, ColdStartAfter: 200 * time.Millisecond,
	}
	var rec recorder
	srv, tg := startSimServer(t, "sim", p, 1)
	res := calmRun(t, bench.Config{
		Targets:  []bench.Target{tg},
		Workload: oneShape("easy", "short", 20), Requests: 6, Concurrency: 2, Warmup: 1, Seed: 1,
		Probes: []time.Duration{0, 400 * time.Millisecond}, ProbeRepeat: 2,
		OnRecord: func(r bench.Record) {
			if r.Phase == bench.PhaseWarmup {
				rec.reset() // a new attempt of calmRun
			}
			rec.add(r)
		},
	}, srv)
	probe := func(idle float64) *bench.Cell {
		c := res.Cell(bench.CellKey{Target: "sim", Bucket: "short", Class: "easy", Phase: bench.PhaseProbe, Idle: idle})
		if c == nil || c.Completed != 2 {
			t.Fatalf("probe cell at %vs = %+v, want 2 completed probes", idle, c)
		}
		return c
	}
	skipTimingUnderRace(t)
	warm, cold := probe(0).Metric(bench.MetricTTFT), probe(0.4).Metric(bench.MetricTTFT)
	if warm.Summary().Max > 0.3 {
		t.Errorf("TTFT right after traffic = %.3fs, want a warm TTFT (50 ms median)", warm.Summary().Max)
	}
	if cold.Summary().Min < 0.5 {
		t.Errorf("TTFT after 400 ms idle = %.3fs, want the 500 ms cold-start penalty on top", cold.Summary().Min)
	}
	if m := res.Cell(bench.CellKey{Target: "sim", Bucket: "short", Class: "easy", Phase: bench.PhaseMeasure}).Metric(bench.MetricTTFT); m.Summary().Max > 0.3 {
		t.Errorf("measured TTFT max = %.3fs: the warm-up should have absorbed the first cold start", m.Summary().Max)
	}
	found := false
	for _, f := range bench.Analyze(res) {
		found = found || f.Kind == bench.FindingColdStart && f.Severity == "warning" && strings.Contains(f.Message, "400ms idle")
	}
	if !found {
		t.Errorf("no cold-start finding in %+v", bench.Analyze(res))
	}
	phases := map[string]int{}
	for _, r := range rec.all() {
		phases[r.Phase]++
	}
	if phases[bench.PhaseWarmup] != 1 || phases[bench.PhaseMeasure] != 6 || phases[bench.PhaseProbe] != 4 {
		t.Errorf("records by phase = %v, want 1 warm-up, 6 measured, 4 probes", phases)
	}
}

func TestSpeculativeDecodingFinding(t *testing.T) {
	spec := llmsim.Profile{TTFTMedian: 20 * time.Millisecond, TokensPerSecond: 150, SpeculativeMaxBurst: 6}
	plain := llmsim.Profile{TTFTMedian: 20 * time.Millisecond, TokensPerSecond: 150}
	s1, t1 := startSimServer(t, "speculative", spec, 1)
	s2, t2 := startSimServer(t, "plain", plain, 2)
	res := calmRun(t, bench.Config{
		Targets:  []bench.Target{t1, t2},
		Workload: easyHard(120), Requests: 24, Concurrency: 8, Seed: 3,
	}, s1, s2)
	med := func(target, class string) float64 {
		c := res.Cell(bench.CellKey{Target: target, Bucket: "medium", Class: class, Phase: bench.PhaseMeasure})
		if c == nil || c.Completed < 8 {
			t.Fatalf("%s/%s: %+v, want at least 8 completed", target, class, c)
		}
		return c.Metric(bench.MetricDecodeTPS).Quantile(0.5)
	}
	skipTimingUnderRace(t)
	if e, h := med("speculative", "easy"), med("speculative", "hard"); e < 1.5*h {
		t.Errorf("speculative: easy %.0f tok/s vs hard %.0f, want easy at least 1.5x faster", e, h)
	}
	if e, h := med("plain", "easy"), med("plain", "hard"); e > 1.15*h || h > 1.15*e {
		t.Errorf("plain: easy %.0f tok/s vs hard %.0f, want about equal", e, h)
	}
	kinds := map[string]bool{}
	for _, f := range bench.Analyze(res) {
		kinds[f.Target+":"+f.Kind] = true
	}
	if !kinds["speculative:"+bench.FindingSpeculative] || !kinds["speculative:"+bench.FindingMultiToken] {
		t.Errorf("findings %v lack speculative decoding / multi-token chunks for the speculative target", kinds)
	}
	if kinds["plain:"+bench.FindingSpeculative] || kinds["plain:"+bench.FindingMultiToken] {
		t.Errorf("findings %v flag the plain target", kinds)
	}
}

// Two runs of one configuration do not regress; a 20% slower server does.
func TestCompareEndToEnd(t *testing.T) {
	base := llmsim.Profile{TTFTMedian: 80 * time.Millisecond, TTFTSpread: 0.2, TokensPerSecond: 200, Jitter: 0.1}
	slow := base
	slow.TTFTMedian = 96 * time.Millisecond
	slow.TokensPerSecond = 160
	run := func(p llmsim.Profile, seed uint64) *bench.Results {
		srv, tg := startSimServer(t, "model", p, int64(seed))
		return calmRun(t, bench.Config{
			Targets:  []bench.Target{tg},
			Workload: oneShape("hard", "short", 40), Requests: 30, Concurrency: 6, Seed: seed,
		}, srv)
	}
	b, same, slower := run(base, 1), run(base, 2), run(slow, 3)
	skipTimingUnderRace(t)
	cmp, err := bench.Compare(b, same, bench.CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	_ = cmp.WriteText(&out)
	if cmp.Regressed() {
		t.Errorf("two runs of one configuration regressed:\n%s", out.String())
	}
	cmp, err = bench.Compare(b, slower, bench.CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out.Reset()
	_ = cmp.WriteText(&out)
	if !cmp.Regressed() {
		t.Fatalf("a 20%% slower server did not regress:\n%s", out.String())
	}
	found := false
	for _, r := range cmp.Regressions() {
		found = found || r.Metric == bench.MetricDecodeTPS && r.MedianChange < -0.12
	}
	if !found {
		t.Errorf("no decode TPS regression of about -20%%:\n%s", out.String())
	}
}

// Merging two half-runs gives the quantiles of all their requests within
// the sketch's error, like one run over all of them.
func TestMergeHalfRuns(t *testing.T) {
	t.Parallel()
	p := preset(t, "fast-steady")
	var rec recorder
	half := func(seed uint64) *bench.Results {
		return mustRun(t, bench.Config{
			Targets:  []bench.Target{startSim(t, "fast", p, int64(seed))},
			Workload: oneShape("hard", "short", 30), Requests: 12, Concurrency: 6, Seed: seed, OnRecord: rec.add,
			RunID: "half-" + string(rune('0'+seed)),
		})
	}
	a, b := half(1), half(2)
	m, err := bench.Merge(a, b)
	if err != nil {
		t.Fatal(err)
	}
	c := m.Cell(bench.CellKey{Target: "fast", Bucket: "short", Class: "hard", Phase: bench.PhaseMeasure})
	if c == nil || c.Requests != 24 || len(m.Runs) != 2 {
		t.Fatalf("merged cell %+v, runs %d: want 24 requests from 2 runs", c, len(m.Runs))
	}
	var ttft, tps []float64
	for _, r := range rec.all() {
		ttft = append(ttft, r.Result.TTFT.Seconds())
		tps = append(tps, r.Result.DecodeTPS)
	}
	for _, q := range []float64{0.5, 0.9, 0.95, 0.99} {
		for _, m := range []struct {
			name string
			vals []float64
		}{{bench.MetricTTFT, ttft}, {bench.MetricDecodeTPS, tps}} {
			exact := exactQuantile(m.vals, q)
			got := c.Metric(m.name).Quantile(q)
			if got < exact*0.99 || got > exact*1.01 {
				t.Errorf("%s q%v: merged %v, exact over all requests %v", m.name, q, got, exact)
			}
		}
	}
	if s := c.Metric(bench.MetricTTFT).Samples(); len(s) != 24 {
		t.Errorf("merged samples = %d, want all 24", len(s))
	}
}

func TestResponsesAPI(t *testing.T) {
	t.Parallel()
	tg := startSim(t, "resp", preset(t, "instant"), 1)
	tg.API = bench.APIResponses
	var rec recorder
	res := mustRun(t, bench.Config{Targets: []bench.Target{tg}, Workload: oneShape("easy", "medium", 150), Requests: 4, Concurrency: 2, OnRecord: rec.add})
	c := res.Cell(bench.CellKey{Target: "resp", Bucket: "medium", Class: "easy", Phase: bench.PhaseMeasure})
	if c == nil || c.Completed != 4 {
		t.Fatalf("cell %+v, want 4 completed", c)
	}
	for _, r := range rec.all() {
		if r.Result.OutputTokens != 150 || r.Result.Usage == nil || r.Result.Usage.CompletionTokens != 150 || r.Result.TokenBasis != "exact" {
			t.Errorf("record: %d tokens (%s), usage %+v; want exactly 150", r.Result.OutputTokens, r.Result.TokenBasis, r.Result.Usage)
		}
	}
}

func TestUnreachableEndpoint(t *testing.T) {
	t.Parallel()
	tg := bench.Target{Name: "gone", BaseURL: "http://" + closedAddr(t) + "/v1", Model: "m"}
	res, err := bench.Run(context.Background(), bench.Config{Targets: []bench.Target{tg}, Requests: 3, Concurrency: 1, BackoffMax: 10 * time.Millisecond})
	if !errors.Is(err, bench.ErrNoSuccess) || !strings.Contains(err.Error(), "connection: 3") {
		t.Fatalf("err = %v, want ErrNoSuccess naming 3 connection errors", err)
	}
	var errs int64
	for _, c := range res.Cells {
		errs += c.Errors["connection"]
	}
	if errs != 3 || res.Partial {
		t.Fatalf("connection errors = %d, partial %v; want 3, false", errs, res.Partial)
	}
}

func TestUnauthorizedAborts(t *testing.T) {
	t.Parallel()
	srv, err := llmsim.Start(llmsim.Config{Profile: llmsim.Profile{TTFTMedian: 10 * time.Millisecond}, APIKey: "right"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	tg := bench.Target{Name: "locked", BaseURL: srv.URL(), Model: "m", APIKey: "wrong"}
	res, err := bench.Run(context.Background(), bench.Config{Targets: []bench.Target{tg}, Requests: 200, Concurrency: 2})
	if !errors.Is(err, bench.ErrUnauthorized) || !strings.Contains(err.Error(), "401") {
		t.Fatalf("err = %v, want ErrUnauthorized with the 401", err)
	}
	if !res.Partial || !strings.Contains(res.Aborted, "locked") {
		t.Fatalf("partial %v, aborted %q", res.Partial, res.Aborted)
	}
	if n := res.Runs[0].Requests; n > 10 {
		t.Fatalf("%d requests sent after a 401, want the run to stop at once", n)
	}
	if st := srv.Stats(); st.Unauthorized == 0 || st.Unauthorized > 10 {
		t.Fatalf("server saw %d unauthorized requests", st.Unauthorized)
	}
}

func TestRateLimitStorm(t *testing.T) {
	t.Parallel()
	p := llmsim.Profile{TTFTMedian: 30 * time.Millisecond, TokensPerSecond: 400, Slots: 1, QueueLimit: -1, RetryAfter: 5 * time.Second}
	res, err := bench.Run(context.Background(), bench.Config{
		Targets:  []bench.Target{startSim(t, "busy", p, 1)},
		Workload: oneShape("hard", "short", 30), Requests: 30, Concurrency: 6, BackoffMax: 20 * time.Millisecond,
	})
	if err != nil {
		t.Fatalf("Run: %v (a 429 storm must not stop the run)", err)
	}
	c := res.Cell(bench.CellKey{Target: "busy", Bucket: "short", Class: "hard", Phase: bench.PhaseMeasure})
	if c == nil || c.Requests != 30 || c.Errors["429"] == 0 || c.Completed == 0 {
		t.Fatalf("cell %+v: want 30 requests, some 429s and some completed", c)
	}
	var out bytes.Buffer
	if err := bench.WriteTable(&out, res); err != nil || !strings.Contains(out.String(), "429: ") {
		t.Fatalf("table does not show the 429s:\n%s", out.String())
	}
}

func TestInterruptedRunIsPartial(t *testing.T) {
	t.Parallel()
	p := llmsim.Profile{TTFTMedian: 20 * time.Millisecond, TokensPerSecond: 20}
	tg := startSim(t, "slow", p, 1)
	var rec recorder
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		time.Sleep(500 * time.Millisecond)
		cancel()
	}()
	res, err := bench.Run(ctx, bench.Config{
		Targets: []bench.Target{tg}, Workload: oneShape("hard", "medium", 400), Duration: time.Minute, Concurrency: 3, OnRecord: rec.add,
	})
	if !errors.Is(err, bench.ErrInterrupted) {
		t.Fatalf("err = %v, want ErrInterrupted", err)
	}
	if !res.Partial {
		t.Fatal("results not marked partial")
	}
	c := res.Cell(bench.CellKey{Target: "slow", Bucket: "medium", Class: "hard", Phase: bench.PhaseMeasure})
	if c == nil || c.Errors[bench.ErrorTypeInterrupted] != 3 {
		t.Fatalf("cell %+v, want the 3 in-flight requests counted as interrupted", c)
	}
	for _, r := range rec.all() {
		if !r.Interrupted || r.Result.Status != "partial" || r.Result.OutputTokens == 0 {
			t.Errorf("record: interrupted %v, status %s, %d tokens; want partial results of streams cut short", r.Interrupted, r.Result.Status, r.Result.OutputTokens)
		}
	}
	var buf bytes.Buffer
	_ = res.WriteJSON(&buf)
	if !strings.Contains(buf.String(), `"partial": true`) {
		t.Fatal(`results file lacks "partial": true`)
	}
}

func TestOpenLoop(t *testing.T) {
	t.Parallel()
	fast := llmsim.Profile{TTFTMedian: 10 * time.Millisecond, TokensPerSecond: 1000}
	res := mustRun(t, bench.Config{
		Targets:  []bench.Target{startSim(t, "fast", fast, 1)},
		Workload: oneShape("easy", "short", 20), Rate: 40, Requests: 20, Seed: 5,
	})
	cs := res.Runs[0].Client[0]
	if cs.Mode != bench.ModeOpen || cs.Requests != 20 || cs.Lag == nil || cs.Lag.Count() != 20 || cs.Rate != 40 {
		t.Fatalf("client stats %+v, want 20 open-loop requests with their lag", cs)
	}
	if cs.Suspect {
		t.Logf("open loop flagged suspect on a quiet run (machine busy?): %s", cs.Reason)
	}
	// One request at a time, each taking ~200 ms, asked for 50/s: the
	// runner cannot keep the schedule and must say so.
	slow := llmsim.Profile{TTFTMedian: 200 * time.Millisecond, TokensPerSecond: 1000}
	res = mustRun(t, bench.Config{
		Targets:  []bench.Target{startSim(t, "slow", slow, 2)},
		Workload: oneShape("easy", "short", 5), Rate: 50, MaxInFlight: 1, Requests: 8, Seed: 5,
	})
	cs = res.Runs[0].Client[0]
	if !cs.Suspect || !res.Suspect() || !strings.Contains(cs.Reason, "could not keep") {
		t.Fatalf("client stats %+v: want the run flagged suspect", cs)
	}
	found := false
	for _, f := range bench.Analyze(res) {
		found = found || f.Kind == bench.FindingClientLag
	}
	if !found {
		t.Fatal("no client-lag finding")
	}
}

func TestWarmupExcluded(t *testing.T) {
	t.Parallel()
	var rec recorder
	res := mustRun(t, bench.Config{
		Targets:  []bench.Target{startSim(t, "a", preset(t, "instant"), 1), startSim(t, "b", preset(t, "instant"), 2)},
		Requests: 10, Concurrency: 3, Warmup: 2, OnRecord: rec.add, Seed: 9,
	})
	byPhase := map[string]int{}
	for _, r := range rec.all() {
		byPhase[r.Target+"/"+r.Phase]++
		if r.Phase == bench.PhaseWarmup && r.Bucket != "short" {
			t.Errorf("warm-up used a %s prompt, want a short one", r.Bucket)
		}
		if r.IntendedTokens != r.Result.OutputTokens {
			t.Errorf("asked the simulator for %d tokens, got %d", r.IntendedTokens, r.Result.OutputTokens)
		}
	}
	for _, tg := range []string{"a", "b"} {
		if byPhase[tg+"/warmup"] != 2 || byPhase[tg+"/measure"] != 10 {
			t.Errorf("target %s: %v, want 2 warm-up and 10 measured", tg, byPhase)
		}
		var n int64
		for _, c := range res.Cells {
			if c.Target == tg {
				n += c.Requests
			}
		}
		if n != 10 {
			t.Errorf("target %s: cells count %d requests, want the 10 measured ones", tg, n)
		}
	}
	// Both targets got the same prompt sequence.
	seq := map[string][]string{}
	for _, r := range rec.all() {
		if r.Phase == bench.PhaseMeasure {
			for len(seq[r.Target]) <= r.Seq {
				seq[r.Target] = append(seq[r.Target], "")
			}
			seq[r.Target][r.Seq] = r.PromptID
		}
	}
	if strings.Join(seq["a"], ",") != strings.Join(seq["b"], ",") {
		t.Errorf("targets got different prompt sequences:\n%v\n%v", seq["a"], seq["b"])
	}
}

func TestDurationBound(t *testing.T) {
	t.Parallel()
	p := llmsim.Profile{TTFTMedian: 10 * time.Millisecond, TokensPerSecond: 500}
	var rec recorder
	res := mustRun(t, bench.Config{
		Targets:  []bench.Target{startSim(t, "d", p, 1)},
		Workload: oneShape("easy", "short", 20), Duration: 500 * time.Millisecond, Concurrency: 2, OnRecord: rec.add,
	})
	n := len(rec.all())
	if n < 2 {
		t.Fatalf("%d requests in a 500 ms run", n)
	}
	for _, r := range rec.all() {
		if r.Start > 500*time.Millisecond+time.Second {
			t.Errorf("request started at %v, after the 500 ms window", r.Start)
		}
	}
	if res.Runs[0].Client[0].AchievedConcurrency <= 0 {
		t.Error("no achieved concurrency reported")
	}
}

func TestThinkTime(t *testing.T) {
	t.Parallel()
	var rec recorder
	mustRun(t, bench.Config{
		Targets:  []bench.Target{startSim(t, "think", preset(t, "instant"), 1)},
		Workload: oneShape("easy", "short", 10), Requests: 4, Concurrency: 1, ThinkTime: 150 * time.Millisecond, OnRecord: rec.add,
	})
	recs := rec.all()
	if len(recs) != 4 {
		t.Fatalf("%d records, want 4", len(recs))
	}
	// One worker: each request starts after the previous one ended and the
	// worker paused (a lower bound, which timers guarantee).
	for i := 1; i < len(recs); i++ {
		prev, cur := recs[i-1], recs[i]
		if gap := cur.Start - (prev.Start + prev.Result.Duration); gap < 150*time.Millisecond {
			t.Errorf("request %d started %v after the previous one ended, want at least the 150ms think time", i, gap)
		}
	}
}

// A target does not wait for a slower one between its warm-up and its
// load: left idle, a model that unloads quickly would be cold again for the
// first measured requests.
func TestTargetsDoNotWaitForEachOther(t *testing.T) {
	quick := llmsim.Profile{TTFTMedian: 20 * time.Millisecond, TokensPerSecond: 500,
		ColdStartPenalty: 600 * time.Millisecond, ColdStartAfter: 200 * time.Millisecond}
	slow := llmsim.Profile{TTFTMedian: 900 * time.Millisecond, TokensPerSecond: 500}
	s1, t1 := startSimServer(t, "quick", quick, 1)
	s2, t2 := startSimServer(t, "slow", slow, 2)
	res := calmRun(t, bench.Config{
		Targets: []bench.Target{t1, t2}, Workload: oneShape("easy", "short", 20),
		Warmup: 1, Requests: 6, Concurrency: 2, Seed: 1,
	}, s1, s2)
	skipTimingUnderRace(t)
	c := res.Cell(bench.CellKey{Target: "quick", Bucket: "short", Class: "easy", Phase: bench.PhaseMeasure})
	if c == nil || c.Completed != 6 {
		t.Fatalf("cell %+v, want 6 completed", c)
	}
	if max := c.Metric(bench.MetricTTFT).Summary().Max; max > 0.45 {
		t.Fatalf("quick target's measured TTFT reached %.3fs: it went cold waiting for the slow target's warm-up", max)
	}
}
