package bench_test

import (
	"strings"
	"testing"
	"time"

	"github.com/tpsmeter/tpsmeter/bench"
	"github.com/tpsmeter/tpsmeter/stats"
)

func TestColdStartFinding(t *testing.T) {
	c := bench.NewCollector(stats.LengthBuckets{}, 0, 1)
	for i := 0; i < 40; i++ { // warm TTFTs spread from 300 ms to 1.2 s (median ~750 ms)
		c.Add(synthRecord("t", "short", "easy", time.Duration(300+i*23)*time.Millisecond, 60, 20))
	}
	probe := func(idle, ttft time.Duration) {
		r := synthRecord("t", "short", "easy", ttft, 60, 20)
		r.Phase, r.Idle = bench.PhaseProbe, idle
		c.Add(r)
	}
	probe(0, 1100*time.Millisecond)              // right after traffic: never a cold start
	probe(30*time.Second, 1150*time.Millisecond) // slow, but within the warm spread
	probe(5*time.Minute, 3000*time.Millisecond)  // a cold start
	res := c.Results()
	var cold []string
	for _, f := range bench.Analyze(res) {
		if f.Kind == bench.FindingColdStart && f.Severity == "warning" {
			cold = append(cold, f.Message)
		}
	}
	if len(cold) != 1 || !strings.Contains(cold[0], "after 5m0s idle") {
		t.Fatalf("cold-start findings = %q, want only the 5 minute probe", cold)
	}
}

func TestFindingsSpeculativeAndChunks(t *testing.T) {
	c := bench.NewCollector(stats.LengthBuckets{}, 0, 1)
	for i := 0; i < 20; i++ {
		e := synthRecord("t", "medium", "easy", 200*time.Millisecond, 150+float64(i), 150)
		h := synthRecord("t", "medium", "hard", 200*time.Millisecond, 60+float64(i), 150)
		for j := range e.Chunks { // easy answers arrive 4 tokens at a time
			e.Chunks[j].Tokens = 4
		}
		c.Add(e)
		c.Add(h)
	}
	kinds := map[string]string{}
	for _, f := range bench.Analyze(c.Results()) {
		kinds[f.Kind] = f.Message
	}
	if !strings.Contains(kinds[bench.FindingSpeculative], "faster than hard") {
		t.Errorf("no speculative-decoding finding: %v", kinds)
	}
	if _, ok := kinds[bench.FindingMultiToken]; !ok {
		t.Errorf("no multi-token finding: %v", kinds)
	}
	// Same rates for both classes: no finding.
	c = bench.NewCollector(stats.LengthBuckets{}, 0, 1)
	for i := 0; i < 20; i++ {
		c.Add(synthRecord("t", "medium", "easy", 200*time.Millisecond, 60+float64(i), 150))
		c.Add(synthRecord("t", "medium", "hard", 200*time.Millisecond, 60+float64(i), 150))
	}
	for _, f := range bench.Analyze(c.Results()) {
		if f.Kind == bench.FindingSpeculative || f.Kind == bench.FindingMultiToken {
			t.Errorf("unexpected finding on equal classes: %s", f.Message)
		}
	}
}
