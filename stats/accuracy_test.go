package stats_test

import (
	"math"
	"slices"
	"testing"

	"github.com/tpsmeter/tpsmeter/stats"
)

// Every quantile is within 1% of the exact quantile of a large sample, for
// every shape, and Count, Min, Max, Sum are exact.
func TestSketchAccuracyAgainstExactQuantiles(t *testing.T) {
	quantiles := []float64{0.0001, 0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.995, 0.999, 0.9999}
	for i, d := range distributions {
		n := 300_000
		if d.name == "lognormal" || d.name == "durations-1us-3h" {
			n = 1_000_000
		}
		if raceEnabled {
			n /= 10
		}
		t.Run(d.name, func(t *testing.T) {
			vs := sample(d, n, uint64(100+i))
			s := sketchOf(vs)
			exactSum := 0.0
			for _, v := range vs {
				exactSum += v
			}
			slices.Sort(vs)
			if s.Count() != int64(n) || s.Min() != vs[0] || s.Max() != vs[n-1] {
				t.Fatalf("Count, Min, Max = %d, %v, %v; want %d, %v, %v", s.Count(), s.Min(), s.Max(), n, vs[0], vs[n-1])
			}
			if math.Abs(s.Sum()-exactSum) > 1e-9*exactSum {
				t.Fatalf("Sum = %v, want %v", s.Sum(), exactSum)
			}
			worst := 0.0
			for _, q := range quantiles {
				exact := vs[int(q*float64(n-1))] // the lower quantile, as documented
				got := s.Quantile(q)
				if math.Abs(got-exact) > bound(stats.DefaultRelativeAccuracy, exact) {
					t.Errorf("Quantile(%v) = %v, exact %v: relative error %.4f%%", q, got, exact, 100*math.Abs(got-exact)/exact)
				}
				worst = max(worst, math.Abs(got-exact)/exact)
			}
			sum := s.Summary()
			for _, c := range []struct {
				q   float64
				got float64
			}{{0.5, sum.P50}, {0.9, sum.P90}, {0.95, sum.P95}, {0.99, sum.P99}, {0.999, sum.P999}} {
				exact := vs[int(c.q*float64(n-1))]
				if math.Abs(c.got-exact) > bound(stats.DefaultRelativeAccuracy, exact) {
					t.Errorf("Summary P%v = %v, exact %v", 100*c.q, c.got, exact)
				}
			}
			t.Logf("n=%d, worst relative error %.4f%%", n, 100*worst)
		})
	}
}
