package bench_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/tpsmeter/tpsmeter/bench"
	"github.com/tpsmeter/tpsmeter/stats"
)

func TestCompare(t *testing.T) {
	base := synthResults(t, "base", 40, 1, 1)
	tests := []struct {
		name       string
		cur        *bench.Results
		opts       bench.CompareOptions
		regressed  bool
		regMetrics []string // metrics expected among the regressions
		improved   bool
	}{
		{name: "same distribution", cur: synthResults(t, "same", 40, 1, 2)},
		{name: "20% slower", cur: synthResults(t, "slow", 40, 1.2, 3), regressed: true, regMetrics: []string{bench.MetricTTFT, bench.MetricDecodeTPS}},
		{name: "5% slower is below the threshold", cur: synthResults(t, "slow5", 40, 1.05, 4)},
		{name: "5% slower with a 2% threshold", cur: synthResults(t, "slow5b", 40, 1.05, 4), opts: bench.CompareOptions{Threshold: 0.02}, regressed: true},
		{name: "20% faster", cur: synthResults(t, "fast", 40, 1/1.2, 5), improved: true},
		{name: "too few samples", cur: synthResults(t, "few", 5, 1.5, 6)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cmp, err := bench.Compare(base, tc.cur, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			if err := cmp.WriteText(&out); err != nil {
				t.Fatal(err)
			}
			if cmp.Regressed() != tc.regressed {
				t.Fatalf("Regressed() = %v, want %v\n%s", cmp.Regressed(), tc.regressed, out.String())
			}
			for _, m := range tc.regMetrics {
				found := false
				for _, r := range cmp.Regressions() {
					found = found || r.Metric == m
				}
				if !found {
					t.Errorf("no regression of %s\n%s", m, out.String())
				}
			}
			improved := false
			for _, r := range cmp.Rows {
				improved = improved || r.Verdict == bench.Improvement
			}
			if improved != tc.improved {
				t.Errorf("improvement = %v, want %v\n%s", improved, tc.improved, out.String())
			}
			if tc.regressed != strings.Contains(out.String(), "REGRESSION:") {
				t.Errorf("text verdict does not match:\n%s", out.String())
			}
		})
	}
}

func TestCompareErrorRate(t *testing.T) {
	base := synthResults(t, "base", 40, 1, 1)
	cur := synthResults(t, "errs", 40, 1, 2)
	for _, c := range cur.Cells {
		c.Requests += 30
		c.Errors = map[string]int64{"429": 30}
	}
	cmp, err := bench.Compare(base, cur, bench.CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	regs := cmp.Regressions()
	if len(regs) == 0 || regs[0].Metric != bench.MetricErrorRate {
		t.Fatalf("regressions = %+v, want the error rate", regs)
	}
}

func TestCompareRenamedTarget(t *testing.T) {
	base := synthResults(t, "base", 20, 1, 1)
	cur := synthResults(t, "other", 20, 1, 2)
	for _, c := range cur.Cells {
		c.Target = "model-b"
	}
	cur.Settings.Targets[0].Name = "model-b"
	cmp, err := bench.Compare(base, cur, bench.CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(cmp.Rows) == 0 || len(cmp.Notes) == 0 || !strings.Contains(cmp.Notes[0], "model-b") {
		t.Fatalf("rows %d notes %v: want the single targets matched", len(cmp.Rows), cmp.Notes)
	}
}

func TestCompareIncompatible(t *testing.T) {
	base := synthResults(t, "base", 10, 1, 1)
	cur := synthResults(t, "cur", 10, 1, 2)
	cur.Buckets, _ = stats.NewLengthBuckets([]int{50}, nil)
	if _, err := bench.Compare(base, cur, bench.CompareOptions{}); !errors.Is(err, bench.ErrIncompatible) {
		t.Fatalf("err = %v, want ErrIncompatible", err)
	}
	if _, err := bench.Compare(base, base, bench.CompareOptions{Metrics: []string{"nope"}}); !errors.Is(err, bench.ErrConfig) {
		t.Fatalf("err = %v, want ErrConfig for an unknown metric", err)
	}
}
