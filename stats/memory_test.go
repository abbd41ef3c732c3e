package stats_test

import (
	"math"
	"slices"
	"testing"

	"github.com/tpsmeter/tpsmeter/stats"
)

// One sketch after 10^6 values stays under 8 KiB, in any input order, for
// the shapes a meter sees and for values spread evenly (on a log scale) over
// the whole promised ranges, 0.01 to 100k tokens/s and 1 µs to 3 hours, and
// never above the MaxBins bound. Footprint counts the struct and the bin
// arrays' capacity; BenchmarkSketchMemory cross-checks with heap statistics.
func TestSketchMemoryAfterMillionValues(t *testing.T) {
	const kib = 1024
	limits := map[string]uint64{
		"uniform": 8 * kib, "lognormal": 8 * kib, "bimodal": 8 * kib, "pareto": 8 * kib,
		"exponential": 8 * kib,
		// Spread evenly (on a log scale) over their whole promised ranges:
		// 815 and 1163 bins of 4 bytes, plus slack, rounded up to the
		// allocator's size classes.
		"rates-0.01-100k": 8 * kib, "durations-1us-3h": 8 * kib,
	}
	for _, d := range distributions {
		limit, ok := limits[d.name]
		if !ok {
			t.Fatalf("no memory limit for %s", d.name)
		}
		n := 1_000_000
		if raceEnabled {
			n = 100_000 // memory depends on the range of values, not their number
		}
		vs := sample(d, n, 7)
		sorted := slices.Sorted(slices.Values(vs))
		descending := slices.Clone(sorted)
		slices.Reverse(descending)
		for _, o := range []struct {
			order string
			in    []float64
		}{{"random order", vs}, {"sorted", sorted}, {"descending", descending}} {
			order, in := o.order, o.in
			live := uint64(stats.Footprint(sketchOf(in)))
			if live >= limit {
				t.Errorf("%s, %s: %d bytes live, want under %d", d.name, order, live, limit)
			}
			t.Logf("%s, %s: %d bytes", d.name, order, live)
		}
	}
	// The hard bound: values of both signs over 600 decades.
	s := stats.NewSketch()
	for e := -300.0; e <= 300; e += 0.01 {
		s.Add(math.Pow(10, e))
		s.Add(-math.Pow(10, -e))
	}
	live := uint64(stats.Footprint(s))
	if bound := uint64(2*stats.MaxBins*4 + kib); live > bound {
		t.Errorf("extreme spread: %d bytes live, want at most %d", live, bound)
	}
}
