package bench_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tpsmeter/tpsmeter/bench"
)

// naiveU counts the pairs (x, y) with x > y, ties one half: the definition
// of U, independent of the rank computation under test.
func naiveU(x, y []float64) float64 {
	u := 0.0
	for _, a := range x {
		for _, b := range y {
			switch {
			case a > b:
				u++
			case a == b:
				u += 0.5
			}
		}
	}
	return u
}

func TestMannWhitneyU(t *testing.T) {
	// Reference p-values: the normal approximation with tie and continuity
	// corrections, as scipy.stats.mannwhitneyu(method="asymptotic") and R's
	// wilcox.test(exact=FALSE) compute it.
	tests := []struct {
		name string
		x, y []float64
		u, p float64
	}{
		{"separated", []float64{1, 2, 3, 4, 5}, []float64{6, 7, 8, 9, 10}, 0, 0.012185780355344818},
		{"ties", []float64{1, 2, 2, 3, 5}, []float64{2, 3, 3, 4, 6, 7}, 7, 0.16304505585423731},
		{"larger first", []float64{10, 11, 12, 13, 14, 15, 16, 17}, []float64{1, 2, 3, 4, 5, 6, 7, 8}, 64, 0.0009391056991171905},
		{"identical", []float64{3, 3, 3}, []float64{3, 3, 3, 3}, 6, 1},
		{"interleaved", []float64{1, 3, 5, 7}, []float64{2, 4, 6, 8}, 6, 0.6650055421020291},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := bench.MannWhitneyU(tc.x, tc.y)
			if err != nil {
				t.Fatal(err)
			}
			if got.U != tc.u || got.U != naiveU(tc.x, tc.y) {
				t.Errorf("U = %v, want %v (naive %v)", got.U, tc.u, naiveU(tc.x, tc.y))
			}
			if math.Abs(got.P-tc.p) > 1e-9 {
				t.Errorf("p = %.12f, want %.12f", got.P, tc.p)
			}
			rev, _ := bench.MannWhitneyU(tc.y, tc.x)
			if math.Abs(rev.P-got.P) > 1e-12 || math.Abs(rev.Z+got.Z) > 1e-12 {
				t.Errorf("not symmetric: p %v vs %v, z %v vs %v", got.P, rev.P, got.Z, rev.Z)
			}
			if want := got.U / float64(len(tc.x)*len(tc.y)); got.Superiority != want {
				t.Errorf("superiority = %v, want %v", got.Superiority, want)
			}
		})
	}
}

func TestMannWhitneyUEmpty(t *testing.T) {
	if _, err := bench.MannWhitneyU(nil, []float64{1}); !errors.Is(err, bench.ErrTooFewSamples) {
		t.Fatalf("err = %v, want ErrTooFewSamples", err)
	}
}

// Under the null hypothesis the p-values are roughly uniform: about 1% of
// them fall below 0.01.
func TestMannWhitneyUFalsePositiveRate(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const trials = 2000
	low := 0
	for i := 0; i < trials; i++ {
		x, y := make([]float64, 30), make([]float64, 40)
		for j := range x {
			x[j] = rng.ExpFloat64()
		}
		for j := range y {
			y[j] = rng.ExpFloat64()
		}
		r, _ := bench.MannWhitneyU(x, y)
		if r.P < 0.01 {
			low++
		}
	}
	if rate := float64(low) / trials; rate > 0.02 {
		t.Fatalf("%.1f%% of null comparisons had p < 0.01, want about 1%%", 100*rate)
	}
}

func ExampleMannWhitneyU() {
	before := []float64{81, 79, 80, 82, 78, 80, 81, 79, 80, 83}
	after := []float64{66, 64, 65, 63, 67, 64, 66, 65, 62, 64} // 20% slower
	r, _ := bench.MannWhitneyU(after, before)
	fmt.Printf("U=%.0f p=%.5f superiority=%.2f\n", r.U, r.P, r.Superiority)
	// Output: U=0 p=0.00017 superiority=0.00
}

func BenchmarkMannWhitneyU(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	x, y := make([]float64, 1000), make([]float64, 1000)
	for i := range x {
		x[i], y[i] = rng.NormFloat64(), rng.NormFloat64()+0.1
	}
	b.ReportAllocs()
	for b.Loop() {
		_, _ = bench.MannWhitneyU(x, y)
	}
}
