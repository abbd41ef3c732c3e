package stats_test

import (
	"bytes"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tpsmeter/tpsmeter/stats"
)

// qGrid is a sorted grid of quantiles in [0,1], tails included.
var qGrid = func() []float64 {
	var qs []float64
	for i := 0; i <= 200; i++ {
		qs = append(qs, float64(i)/200)
	}
	qs = append(qs, 0.0001, 0.0005, 0.001, 0.999, 0.9995, 0.9999, 0.99999)
	slices.Sort(qs)
	return qs
}()

// sameFloat reports whether a and b are the same float64, NaN equal to NaN.
func sameFloat(a, b float64) bool {
	return math.Float64bits(a) == math.Float64bits(b) || (math.IsNaN(a) && math.IsNaN(b))
}

// requireSame fails unless a and b are observably identical sketches: same
// count, dropped, sum, min, max, accuracy, the same quantile at every point
// of qGrid, and the same binary encoding.
func requireSame(t testing.TB, a, b *stats.Sketch) {
	t.Helper()
	if a.Count() != b.Count() || a.Dropped() != b.Dropped() {
		t.Fatalf("count/dropped differ: %d/%d vs %d/%d", a.Count(), a.Dropped(), b.Count(), b.Dropped())
	}
	for _, f := range []struct {
		name string
		x, y float64
	}{
		{"sum", a.Sum(), b.Sum()},
		{"min", a.Min(), b.Min()},
		{"max", a.Max(), b.Max()},
		{"accuracy", a.RelativeAccuracy(), b.RelativeAccuracy()},
	} {
		if !sameFloat(f.x, f.y) {
			t.Fatalf("%s differs: %v vs %v", f.name, f.x, f.y)
		}
	}
	for _, q := range qGrid {
		if x, y := a.Quantile(q), b.Quantile(q); !sameFloat(x, y) {
			t.Fatalf("Quantile(%v) differs: %v vs %v", q, x, y)
		}
	}
	ea, err := a.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	eb, err := b.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ea, eb) {
		t.Fatalf("binary encodings differ:\n%x\n%x", ea, eb)
	}
}

// dist is a named generator of n samples.
type dist struct {
	name string
	gen  func(r *rand.Rand) float64
}

// logUniform draws between lo and hi, uniformly on a log scale.
func logUniform(lo, hi float64) func(r *rand.Rand) float64 {
	return func(r *rand.Rand) float64 {
		return math.Exp(math.Log(lo) + r.Float64()*(math.Log(hi)-math.Log(lo)))
	}
}

// distributions are the shapes the meter meets: uniform, lognormal latencies,
// bimodal (cache hits and misses), heavy-tailed stalls, and the full range of
// durations and rates the package promises to cover.
var distributions = []dist{
	{"uniform", func(r *rand.Rand) float64 { return 0.05 + r.Float64()*0.95 }},
	{"lognormal", func(r *rand.Rand) float64 { return math.Exp(-3 + 1.2*r.NormFloat64()) }},
	{"bimodal", func(r *rand.Rand) float64 {
		if r.IntN(10) < 7 {
			return math.Exp(math.Log(0.02) + 0.3*r.NormFloat64())
		}
		return math.Exp(math.Log(2) + 0.5*r.NormFloat64())
	}},
	{"pareto", func(r *rand.Rand) float64 { return 0.01 * math.Pow(1-r.Float64(), -1/1.2) }},
	{"durations-1us-3h", logUniform(1e-6, 3*3600)},
	{"rates-0.01-100k", logUniform(0.01, 1e5)},
	{"exponential", func(r *rand.Rand) float64 { return r.ExpFloat64() * 0.03 }},
}

func sample(d dist, n int, seed uint64) []float64 {
	r := rand.New(rand.NewPCG(seed, 0x7470736d))
	out := make([]float64, n)
	for i := range out {
		out[i] = d.gen(r)
	}
	return out
}

func sketchOf(vs []float64) *stats.Sketch {
	s := stats.NewSketch()
	for _, v := range vs {
		s.Add(v)
	}
	return s
}
