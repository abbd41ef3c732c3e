package stats_test

import (
	"math"
	"slices"
	"testing"

	"github.com/tpsmeter/tpsmeter/stats"
)

// One sketch after 10^6 values stays small, in any input order: under 8 KiB
// for the shapes a meter sees, 8.4 and 10.4 KiB for values spread evenly (on
// a log scale) over all of 0.01 to 100k tokens/s and 1 µs to 3 hours, and
// never above the MaxBins bound. Footprint counts the structs and the bin
// arrays' capacity; BenchmarkSketchMemory cross-checks with heap statistics.
func TestSketchMemoryAfterMillionValues(t *testing.T) {
	const kib = 1024
	limits := map[string]uint64{
		"uniform": 8 * kib, "lognormal": 8 * kib, "bimodal": 8 * kib, "pareto": 8 * kib,
		"exponential": 8 * kib,
		// Spread evenly (on a log scale) over their whole promised ranges:
		// 815 and 1163 bins of 8 bytes, plus the library's 63 bins of slack,
		// rounded up by the allocator's size classes (6,984 bytes -> 8 KiB).
		"rates-0.01-100k": 9 * kib, "durations-1us-3h": 11 * kib,
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
		orders := map[string][]float64{"random order": vs}
		if d.name == "lognormal" || d.name == "durations-1us-3h" {
			orders["sorted"] = slices.Sorted(slices.Values(vs))
		}
		for order, in := range orders {
			live := uint64(stats.Footprint(sketchOf(in)))
			if live > limit {
				t.Errorf("%s, %s: %d bytes live, want at most %d", d.name, order, live, limit)
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
	if bound := uint64(2*stats.MaxBins*8 + 2*kib); live > bound {
		t.Errorf("extreme spread: %d bytes live, want at most %d", live, bound)
	}
}
