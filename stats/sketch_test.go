package stats_test

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tpsmeter/tpsmeter/stats"
)

func TestSketchEmpty(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    *stats.Sketch
	}{
		{"NewSketch", stats.NewSketch()},
		{"zero value", new(stats.Sketch)},
		{"after Reset", func() *stats.Sketch { s := sketchOf([]float64{1, 2, 3}); s.Reset(); return s }()},
		{"only dropped", sketchOf([]float64{math.NaN(), math.Inf(1)})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.s
			if s.Count() != 0 || s.Sum() != 0 {
				t.Errorf("Count, Sum = %d, %v; want 0, 0", s.Count(), s.Sum())
			}
			for name, v := range map[string]float64{
				"Min": s.Min(), "Max": s.Max(), "Mean": s.Mean(),
				"Quantile(0)": s.Quantile(0), "Quantile(0.5)": s.Quantile(0.5), "Quantile(1)": s.Quantile(1),
			} {
				if !math.IsNaN(v) {
					t.Errorf("%s = %v, want NaN", name, v)
				}
			}
			if got := s.Summary(); got != (stats.Summary{}) {
				t.Errorf("Summary = %+v, want zero", got)
			}
			if s.RelativeAccuracy() != stats.DefaultRelativeAccuracy {
				t.Errorf("RelativeAccuracy = %v", s.RelativeAccuracy())
			}
		})
	}
}

func TestSketchSpecialValues(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	tiny := math.SmallestNonzeroFloat64
	for _, tc := range []struct {
		name                 string
		in                   []float64
		count, dropped       int64
		sum, min, max        float64
		quantiles            map[float64]float64 // exact expectations
		approxQ50, approxQ99 float64             // 0: not checked
	}{
		{name: "NaN and Inf dropped", in: []float64{nan, inf, -inf, 2, nan},
			count: 1, dropped: 4, sum: 2, min: 2, max: 2, quantiles: map[float64]float64{0: 2, 0.5: 2, 1: 2}},
		{name: "beyond float range dropped", in: []float64{math.MaxFloat64, -math.MaxFloat64, 1e308, -1e308},
			count: 2, dropped: 2, sum: 0, min: -1e308, max: 1e308, approxQ50: -1e308},
		{name: "zeros are exact", in: []float64{0, 0, 0, 5},
			count: 4, sum: 5, min: 0, max: 5, quantiles: map[float64]float64{0: 0, 0.5: 0, 0.66: 0, 1: 5}},
		{name: "negative zero", in: []float64{math.Copysign(0, -1)},
			count: 1, sum: 0, min: math.Copysign(0, -1), max: math.Copysign(0, -1)}, // IEEE: 0 + -0 = +0
		{name: "subnormals go to the zero bucket, min and max stay exact", in: []float64{tiny, 3 * tiny},
			count: 2, sum: 4 * tiny, min: tiny, max: 3 * tiny, quantiles: map[float64]float64{0: tiny, 0.5: tiny, 1: 3 * tiny}},
		{name: "negatives kept", in: []float64{-5, -1, 2},
			count: 3, sum: -4, min: -5, max: 2, approxQ50: -1},
		{name: "mixed signs", in: []float64{-100, -10, -1, 0, 1, 10, 100},
			count: 7, sum: 0, min: -100, max: 100, quantiles: map[float64]float64{0.5: 0}, approxQ99: 10},
		{name: "one value", in: []float64{0.25},
			count: 1, sum: 0.25, min: 0.25, max: 0.25, quantiles: map[float64]float64{0: 0.25, 0.3: 0.25, 1: 0.25}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := sketchOf(tc.in)
			if s.Count() != tc.count || s.Dropped() != tc.dropped {
				t.Fatalf("Count, Dropped = %d, %d; want %d, %d", s.Count(), s.Dropped(), tc.count, tc.dropped)
			}
			if !sameFloat(s.Sum(), tc.sum) || !sameFloat(s.Min(), tc.min) || !sameFloat(s.Max(), tc.max) {
				t.Fatalf("Sum, Min, Max = %v, %v, %v; want %v, %v, %v", s.Sum(), s.Min(), s.Max(), tc.sum, tc.min, tc.max)
			}
			for q, want := range tc.quantiles {
				if got := s.Quantile(q); !sameFloat(got, want) {
					t.Errorf("Quantile(%v) = %v, want %v", q, got, want)
				}
			}
			for q, want := range map[float64]float64{0.5: tc.approxQ50, 0.99: tc.approxQ99} {
				if want == 0 {
					continue
				}
				if got := s.Quantile(q); math.Abs(got-want) > bound(stats.DefaultRelativeAccuracy, want) {
					t.Errorf("Quantile(%v) = %v, want %v within 1%%", q, got, want)
				}
			}
			sum := s.Summary()
			for _, f := range []float64{sum.Min, sum.Max, sum.Mean, sum.P50, sum.P90, sum.P95, sum.P99, sum.P999} {
				if math.IsNaN(f) || math.IsInf(f, 0) {
					t.Errorf("Summary has a non-finite field: %+v", sum)
				}
			}
		})
	}
}

func TestSketchQuantileArguments(t *testing.T) {
	s := sketchOf([]float64{1, 2, 3, 4, 100})
	for _, tc := range []struct {
		q    float64
		want float64
	}{
		{-1, 1}, {math.Inf(-1), 1}, {0, 1}, {1, 100}, {2, 100}, {math.Inf(1), 100}, {math.NaN(), math.NaN()},
	} {
		if got := s.Quantile(tc.q); !sameFloat(got, tc.want) {
			t.Errorf("Quantile(%v) = %v, want %v", tc.q, got, tc.want)
		}
	}
}

func TestSketchMeanAndSumOverflow(t *testing.T) {
	s := sketchOf([]float64{1e308, 1e308}) // sum overflows float64
	if !math.IsInf(s.Sum(), 1) {
		t.Fatalf("Sum = %v, want +Inf", s.Sum())
	}
	if got := s.Summary().Mean; got != 1e308 {
		t.Errorf("Summary().Mean = %v, want it clamped to Max 1e308", got)
	}
	if err := s.Merge(sketchOf([]float64{-1e308, -1e308, -1e308})); err != nil { // +Inf + -Inf = NaN
		t.Fatal(err)
	}
	if !math.IsNaN(s.Sum()) {
		t.Fatalf("Sum = %v, want NaN", s.Sum())
	}
	sum := s.Summary()
	if sum.Mean != sum.P50 {
		t.Errorf("Summary().Mean = %v, want P50 %v", sum.Mean, sum.P50)
	}
}

func TestSketchSummaryMatchesQuantiles(t *testing.T) {
	vs := sample(distributions[1], 5000, 3)
	s := sketchOf(vs)
	got := s.Summary()
	want := stats.Summary{
		Count: 5000, Min: slices.Min(vs), Max: slices.Max(vs), Mean: s.Sum() / 5000,
		P50: s.Quantile(0.5), P90: s.Quantile(0.9), P95: s.Quantile(0.95), P99: s.Quantile(0.99), P999: s.Quantile(0.999),
	}
	if got != want {
		t.Errorf("Summary = %+v\nwant      %+v", got, want)
	}
}

// Quantiles never decrease as q grows, for every shape, sign and size.
func TestSketchQuantileMonotone(t *testing.T) {
	shapes := append(slices.Clone(distributions),
		dist{"signed", func(r *rand.Rand) float64 { return r.NormFloat64() * 10 }},
		dist{"with zeros", func(r *rand.Rand) float64 {
			if r.IntN(3) == 0 {
				return 0
			}
			return r.NormFloat64()
		}},
		dist{"huge range", func(r *rand.Rand) float64 { return math.Exp(r.NormFloat64() * 200) }},
	)
	for _, d := range shapes {
		for _, n := range []int{1, 2, 7, 100, 20000} {
			s := sketchOf(sample(d, n, uint64(n)))
			prev := math.Inf(-1)
			for i := 0; i <= 10000; i++ {
				q := float64(i) / 10000
				v := s.Quantile(q)
				if v < prev {
					t.Fatalf("%s n=%d: Quantile(%v) = %v < previous %v", d.name, n, q, v, prev)
				}
				if v < s.Min() || v > s.Max() {
					t.Fatalf("%s n=%d: Quantile(%v) = %v outside [%v, %v]", d.name, n, q, v, s.Min(), s.Max())
				}
				prev = v
			}
		}
	}
}

// Merging A and B gives the same sketch as adding every value to one.
func TestSketchMergeEqualsAdd(t *testing.T) {
	shapes := append(slices.Clone(distributions),
		dist{"signed with zeros", func(r *rand.Rand) float64 {
			switch r.IntN(4) {
			case 0:
				return 0
			case 1:
				return math.NaN()
			}
			return r.NormFloat64()
		}})
	for _, d := range shapes {
		t.Run(d.name, func(t *testing.T) {
			vs := sample(d, 30000, 11)
			whole := sketchOf(vs)
			for _, cut := range []int{0, 1, 12345, len(vs)} {
				a, b := sketchOf(vs[:cut]), sketchOf(vs[cut:])
				if err := a.Merge(b); err != nil {
					t.Fatal(err)
				}
				if a.Count() != whole.Count() || a.Dropped() != whole.Dropped() || a.Min() != whole.Min() || a.Max() != whole.Max() {
					t.Fatalf("cut %d: count/dropped/min/max differ", cut)
				}
				if math.Abs(a.Sum()-whole.Sum()) > 1e-9*math.Max(1, math.Abs(whole.Sum())) {
					t.Fatalf("cut %d: Sum %v vs %v", cut, a.Sum(), whole.Sum())
				}
				// Bins add exactly, so every quantile is identical, not just
				// within the error bound.
				for _, q := range qGrid {
					if x, y := a.Quantile(q), whole.Quantile(q); x != y {
						t.Fatalf("cut %d: Quantile(%v) = %v after merge, %v when added directly", cut, q, x, y)
					}
				}
			}
		})
	}
}

func TestSketchMergeSpecialCases(t *testing.T) {
	t.Run("nil", func(t *testing.T) {
		s := sketchOf([]float64{1, 2})
		if err := s.Merge(nil); err != nil || s.Count() != 2 {
			t.Fatalf("Merge(nil) = %v, Count %d", err, s.Count())
		}
	})
	t.Run("self doubles", func(t *testing.T) {
		s := sketchOf([]float64{1, 2, 3})
		if err := s.Merge(s); err != nil {
			t.Fatal(err)
		}
		requireSame(t, s, sketchOf([]float64{1, 2, 3, 1, 2, 3}))
	})
	t.Run("into zero value", func(t *testing.T) {
		var s stats.Sketch
		if err := s.Merge(sketchOf([]float64{-4, 5, math.NaN()})); err != nil {
			t.Fatal(err)
		}
		requireSame(t, &s, sketchOf([]float64{-4, 5, math.NaN()}))
	})
	t.Run("different accuracy", func(t *testing.T) {
		s := sketchOf([]float64{1, 2})
		before, _ := s.MarshalBinary()
		o, err := stats.NewSketchWithAccuracy(0.005)
		if err != nil {
			t.Fatal(err)
		}
		o.Add(3)
		if err := s.Merge(o); !errors.Is(err, stats.ErrIncompatible) {
			t.Fatalf("Merge = %v, want ErrIncompatible", err)
		}
		after, _ := s.MarshalBinary()
		if string(before) != string(after) {
			t.Fatal("failed Merge modified the receiver")
		}
	})
}

func TestNewSketchWithAccuracy(t *testing.T) {
	for _, tc := range []struct {
		acc float64
		ok  bool
	}{
		{0.01, true}, {0.001, true}, {stats.MinRelativeAccuracy, true}, {stats.MaxRelativeAccuracy, true},
		{0, false}, {-0.01, false}, {1, false}, {0.9, false}, {1e-9, false}, {math.NaN(), false}, {math.Inf(1), false},
	} {
		s, err := stats.NewSketchWithAccuracy(tc.acc)
		if tc.ok != (err == nil) || (!tc.ok && !errors.Is(err, stats.ErrInvalidAccuracy)) {
			t.Errorf("NewSketchWithAccuracy(%v) error = %v, want ok=%v", tc.acc, err, tc.ok)
			continue
		}
		if !tc.ok {
			continue
		}
		if s.RelativeAccuracy() != tc.acc {
			t.Errorf("RelativeAccuracy = %v, want %v", s.RelativeAccuracy(), tc.acc)
		}
		// The bound holds at the requested accuracy.
		vs := sample(distributions[1], 20000, 5)
		for _, v := range vs {
			s.Add(v)
		}
		slices.Sort(vs)
		for _, q := range []float64{0.1, 0.5, 0.9, 0.99} {
			exact := vs[int(q*float64(len(vs)-1))]
			if got := s.Quantile(q); math.Abs(got-exact) > bound(tc.acc, exact) {
				t.Errorf("accuracy %v: Quantile(%v) = %v, exact %v", tc.acc, q, got, exact)
			}
		}
	}
}

func TestSketchCloneAndReset(t *testing.T) {
	s := sketchOf(sample(distributions[2], 1000, 1))
	s.Add(math.NaN())
	c := s.Clone()
	requireSame(t, s, c)
	c.Add(1e6)
	if s.Count() == c.Count() || s.Max() == 1e6 {
		t.Fatal("Clone shares state with the original")
	}
	s.Reset()
	if s.Count() != 0 || s.Dropped() != 0 || !math.IsNaN(s.Quantile(0.5)) {
		t.Fatal("Reset left values behind")
	}
	if c.Count() != 1001 {
		t.Fatalf("Reset of the original changed the clone: Count %d", c.Count())
	}
	// A reset sketch is as good as new.
	vs := sample(distributions[0], 500, 2)
	for _, v := range vs {
		s.Add(v)
	}
	requireSame(t, s, sketchOf(vs))
	requireSame(t, new(stats.Sketch).Clone(), stats.NewSketch())
}

func TestSketchAddDoesNotAllocate(t *testing.T) {
	vs := sample(distributions[4], 4096, 9)
	s := sketchOf(vs) // bins now cover the range
	i := 0
	allocs := testing.AllocsPerRun(10000, func() {
		s.Add(vs[i%len(vs)])
		s.Add(-vs[i%len(vs)])
		s.Add(0)
		s.Add(math.NaN())
		i++
	})
	if allocs != 0 {
		t.Fatalf("Add allocates %v times per run", allocs)
	}
}

// Past MaxBins the lowest bins fold together: the high quantiles keep the
// bound, memory stays bounded.
func TestSketchCollapsesLowestBins(t *testing.T) {
	s := stats.NewSketch()
	var vs []float64
	for e := -40.0; e <= 40; e += 0.001 { // 80 decades: ~9300 bins at 1%, 2048 kept
		v := math.Pow(10, e)
		vs = append(vs, v)
		s.Add(v)
	}
	slices.Sort(vs)
	// The 2048 highest bins cover about 17.6 decades: the top 22% of values.
	for _, q := range []float64{0.8, 0.9, 0.95, 0.99, 0.999} {
		exact := vs[int(q*float64(len(vs)-1))]
		if got := s.Quantile(q); math.Abs(got-exact) > bound(0.01, exact) {
			t.Errorf("Quantile(%v) = %v, exact %v: high quantiles must keep the bound", q, got, exact)
		}
	}
	// Below them, values were folded: the low quantiles are off (this is the
	// documented trade-off, and shows that collapsing did happen).
	if exact, got := vs[len(vs)/10], s.Quantile(0.1); math.Abs(got-exact) <= bound(0.01, exact) {
		t.Errorf("Quantile(0.1) = %v is within 1%% of %v: no collapse happened?", got, exact)
	}
	if s.Quantile(0) != vs[0] || s.Quantile(1) != vs[len(vs)-1] {
		t.Error("min and max must stay exact")
	}
	b, _ := s.MarshalBinary()
	if len(b) > 3*stats.MaxBins+200 {
		t.Errorf("encoding is %d bytes: more bins than MaxBins kept?", len(b))
	}
}

// bound is the largest allowed |estimate-exact| for a relative accuracy,
// with room for float64 rounding in the bin's representative value.
func bound(accuracy, exact float64) float64 {
	return accuracy * math.Abs(exact) * (1 + 1e-9)
}

func TestAddNEqualsRepeatedAdd(t *testing.T) {
	a, b := stats.NewSketch(), stats.NewSketch()
	for i, v := range []float64{0.5, 2, 0, -3, 7.25} {
		a.AddN(v, i+1)
		for j := 0; j <= i; j++ {
			b.Add(v)
		}
	}
	a.AddN(9, 0)
	a.AddN(9, -2)
	if a.Count() != b.Count() || a.Sum() != b.Sum() || a.Min() != b.Min() || a.Max() != b.Max() {
		t.Fatalf("AddN: count %d sum %v min %v max %v; repeated Add: %d %v %v %v", a.Count(), a.Sum(), a.Min(), a.Max(), b.Count(), b.Sum(), b.Min(), b.Max())
	}
	for _, q := range []float64{0, 0.25, 0.5, 0.9, 1} {
		if a.Quantile(q) != b.Quantile(q) {
			t.Errorf("Quantile(%v) = %v, want %v", q, a.Quantile(q), b.Quantile(q))
		}
	}
}

// TestResetSketchReusesItsBins: a sketch that is Reset and filled again
// with values in the range it held before (a pooled per-stream sketch)
// does not allocate.
func TestResetSketchReusesItsBins(t *testing.T) {
	fill := func(s *stats.Sketch, scale float64) {
		for i := 1; i <= 500; i++ {
			s.Add(float64(i) * scale) // 0.1 ms .. 50 ms for scale 1e-4
		}
	}
	s := stats.NewSketch()
	fill(s, 1e-4)
	for _, tc := range []struct {
		name  string
		scale float64
	}{
		{"same range", 1e-4},
		// Ten times longer: the bins move by about 116 places, and the
		// array, big enough for the span, is shifted in place.
		{"shifted range", 1e-3},
		{"back", 1e-4},
	} {
		allocs := testing.AllocsPerRun(20, func() {
			s.Reset()
			fill(s, tc.scale)
		})
		if allocs != 0 {
			t.Errorf("%s: Reset and refill allocated %v times, want 0", tc.name, allocs)
		}
		fresh := stats.NewSketch()
		fill(fresh, tc.scale)
		requireSame(t, s, fresh)
	}
}

// binCounts returns the [index, count] pairs of the positive bins, from the
// JSON encoding, which writes counts as exact integers.
func binCounts(t *testing.T, s *stats.Sketch) (pos, neg [][2]int64) {
	t.Helper()
	b, err := s.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var j struct{ Positive, Negative [][2]int64 }
	if err := json.Unmarshal(b, &j); err != nil {
		t.Fatal(err)
	}
	return j.Positive, j.Negative
}

// roundTrips fails unless s survives both encodings unchanged.
func roundTrips(t *testing.T, s *stats.Sketch) {
	t.Helper()
	b, err := s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var fromBin stats.Sketch
	if err := fromBin.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	requireSame(t, s, &fromBin)
	js, err := s.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var fromJSON stats.Sketch
	if err := fromJSON.UnmarshalJSON(js); err != nil {
		t.Fatal(err)
	}
	requireSame(t, s, &fromJSON)
}

// Bins count in uint32 until one would pass 2^32-1; the store then widens
// to uint64, so counts stay exact whichever way they got there: AddN, Add
// past the limit, Merge, or the lowest bins folding together.
func TestSketchCountsPastUint32(t *testing.T) {
	const u32 = math.MaxUint32
	idx := func(v float64) int64 { // the bin of v, from a sketch holding only v
		pos, _ := binCounts(t, sketchOf([]float64{v}))
		return pos[0][0]
	}
	t.Run("AddN then Add", func(t *testing.T) {
		s := stats.NewSketch()
		s.AddN(0.5, u32) // the count is now exactly at the limit
		s.Add(0.5)       // fast path refuses, the store widens
		s.AddN(0.5, 3e9)
		s.Add(2)
		s.AddN(-1, 5e9) // the negative store widens on its own
		s.Add(0)
		want := int64(u32) + 1 + 3e9
		pos, neg := binCounts(t, s)
		if len(pos) != 2 || pos[0] != [2]int64{idx(0.5), want} || pos[1] != [2]int64{idx(2), 1} {
			t.Fatalf("positive bins %v, want [[%d %d] [%d 1]]", pos, idx(0.5), want, idx(2))
		}
		if len(neg) != 1 || neg[0][1] != 5e9 {
			t.Fatalf("negative bins %v, want one bin of 5e9", neg)
		}
		if s.Count() != want+1+5e9+1 {
			t.Fatalf("Count = %d", s.Count())
		}
		for q, v := range map[float64]float64{0.1: -1, 0.9: 0.5} {
			if got := s.Quantile(q); math.Abs(got-v) > bound(0.01, v) {
				t.Errorf("Quantile(%v) = %v, want %v", q, got, v)
			}
		}
		roundTrips(t, s)
		requireSame(t, s, s.Clone())
		// A widened sketch keeps its bins across Reset and counts again.
		s.Reset()
		s.Add(0.5)
		if pos, _ := binCounts(t, s); len(pos) != 1 || pos[0][1] != 1 {
			t.Fatalf("after Reset: %v", pos)
		}
	})
	t.Run("Merge", func(t *testing.T) {
		a, b := stats.NewSketch(), stats.NewSketch()
		a.AddN(1, 3e9)
		a.AddN(3, 7)
		a.AddN(4, 2e9)
		b.AddN(1, 1e9) // 4e9 fits in 32 bits
		b.Add(1)
		b.AddN(4, 3e9) // 5e9 does not: the store widens in the middle of the merge
		if err := a.Merge(b); err != nil {
			t.Fatal(err)
		}
		pos, _ := binCounts(t, a)
		want := [][2]int64{{idx(1), 4e9 + 1}, {idx(3), 7}, {idx(4), 5e9}}
		if !slices.Equal(pos, want) {
			t.Fatalf("merged bins %v, want %v", pos, want)
		}
		if a.Count() != 9e9+8 {
			t.Fatalf("Count = %d", a.Count())
		}
		roundTrips(t, a)
		if err := a.Merge(a); err != nil { // self-merge doubles every count
			t.Fatal(err)
		}
		if pos, _ := binCounts(t, a); pos[0][1] != 8e9+2 || pos[1][1] != 14 {
			t.Fatalf("self-merge: %v", pos)
		}
		// Merged bins that fold into the floor overflow it.
		c, d := stats.NewSketch(), stats.NewSketch()
		c.AddN(1e-100, 3e9)
		d.AddN(1e-99, 3e9)
		d.Add(1e300)
		if err := c.Merge(d); err != nil {
			t.Fatal(err)
		}
		if pos, _ := binCounts(t, c); len(pos) != 2 || pos[0][1] != 6e9 || pos[1][1] != 1 {
			t.Fatalf("merge with folding: %v", pos)
		}
	})
	t.Run("folding", func(t *testing.T) {
		s := stats.NewSketch()
		s.AddN(1e-100, 3e9)
		s.AddN(1e-99, 3e9)
		s.Add(1e300) // 400 decades above: the low bins fold into one
		pos, _ := binCounts(t, s)
		if len(pos) != 2 || pos[0][1] != 6e9 || pos[1][1] != 1 || pos[1][0]-pos[0][0] != stats.MaxBins-1 {
			t.Fatalf("bins %v, want 6e9 in the floor bin, MaxBins-1 below the top one", pos)
		}
		roundTrips(t, s)
	})
	t.Run("AddN is constant time", func(t *testing.T) {
		s := stats.NewSketch()
		s.AddN(0.25, 1<<40) // would take hours as 2^40 calls of Add
		if s.Count() != 1<<40 || s.Sum() != 0.25*(1<<40) || s.Quantile(0.5) != 0.25 {
			t.Fatalf("Count %d, Sum %v, Quantile(0.5) %v", s.Count(), s.Sum(), s.Quantile(0.5))
		}
		s.AddN(math.NaN(), 1<<40)
		if s.Dropped() != 1<<40 {
			t.Fatalf("Dropped = %d", s.Dropped())
		}
	})
	t.Run("Count stops at MaxInt64", func(t *testing.T) {
		if math.MaxInt != math.MaxInt64 {
			t.Skip("needs a 64-bit int")
		}
		s := stats.NewSketch()
		s.AddN(1, math.MaxInt-10)
		s.AddN(2, 100) // only 10 fit
		if s.Count() != math.MaxInt64 || s.Max() != 2 {
			t.Fatalf("Count %d, Max %v", s.Count(), s.Max())
		}
		if pos, _ := binCounts(t, s); pos[1][1] != 10 {
			t.Fatalf("bins %v", pos)
		}
		before, _ := s.MarshalJSON()
		if err := s.Merge(sketchOf([]float64{3})); !errors.Is(err, stats.ErrIncompatible) {
			t.Fatalf("Merge past MaxInt64 = %v, want ErrIncompatible", err)
		}
		if after, _ := s.MarshalJSON(); string(after) != string(before) {
			t.Fatal("failed Merge modified the receiver")
		}
	})
}
