package bench

import (
	"errors"
	"math"
	"sort"
)

// ErrTooFewSamples is returned by MannWhitneyU when a sample is empty.
var ErrTooFewSamples = errors.New("bench: too few samples for the test")

// MannWhitney is the outcome of a two-sided Mann-Whitney U test (also
// called the Wilcoxon rank-sum test): whether values of one sample tend to
// be larger than values of the other, without assuming any distribution.
// It is a plain value.
type MannWhitney struct {
	// N1 and N2 are the sample sizes.
	N1, N2 int
	// U is the U statistic of the first sample: the number of pairs (x, y)
	// with x > y, ties counting one half.
	U float64
	// Z is the standardized statistic (normal approximation, with tie and
	// continuity corrections); positive when the first sample is larger.
	Z float64
	// P is the two-sided p-value: the probability of a difference at
	// least this large if both samples came from one distribution.
	P float64
	// Superiority is U / (N1*N2): the probability that a random value of
	// the first sample exceeds a random value of the second (0.5 = no
	// difference).
	Superiority float64
}

// MannWhitneyU runs the test on x and y with the normal approximation to
// the distribution of U, corrected for ties and for continuity, which is
// accurate for samples of about 8 or more values each. NaN values are not
// allowed (they are ranked as if they were smaller than every number). It
// returns ErrTooFewSamples when x or y is empty. x and y are not modified.
func MannWhitneyU(x, y []float64) (MannWhitney, error) {
	n1, n2 := len(x), len(y)
	if n1 == 0 || n2 == 0 {
		return MannWhitney{N1: n1, N2: n2, P: 1}, ErrTooFewSamples
	}
	type item struct {
		v     float64
		first bool
	}
	all := make([]item, 0, n1+n2)
	for _, v := range x {
		all = append(all, item{v, true})
	}
	for _, v := range y {
		all = append(all, item{v, false})
	}
	sort.Slice(all, func(i, j int) bool {
		a, b := all[i].v, all[j].v
		if math.IsNaN(a) {
			return !math.IsNaN(b)
		}
		return a < b
	})
	n := float64(n1 + n2)
	var r1, ties float64
	for i := 0; i < len(all); {
		j := i + 1
		for j < len(all) && (all[j].v == all[i].v || math.IsNaN(all[j].v) && math.IsNaN(all[i].v)) {
			j++
		}
		rank := float64(i+j+1) / 2 // average of ranks i+1 .. j
		for k := i; k < j; k++ {
			if all[k].first {
				r1 += rank
			}
		}
		if t := float64(j - i); t > 1 {
			ties += t*t*t - t
		}
		i = j
	}
	f1, f2 := float64(n1), float64(n2)
	u := r1 - f1*(f1+1)/2
	mu := f1 * f2 / 2
	variance := f1 * f2 / 12 * ((n + 1) - ties/(n*(n-1)))
	res := MannWhitney{N1: n1, N2: n2, U: u, P: 1, Superiority: u / (f1 * f2)}
	if variance <= 0 || n < 2 {
		return res, nil
	}
	d := u - mu
	switch {
	case d > 0.5:
		d -= 0.5
	case d < -0.5:
		d += 0.5
	default:
		d = 0
	}
	res.Z = d / math.Sqrt(variance)
	res.P = math.Min(1, math.Erfc(math.Abs(res.Z)/math.Sqrt2))
	return res, nil
}

// twoProportions tests whether the rates k1/n1 and k2/n2 differ (pooled
// two-proportion z-test, two-sided); it returns p = 1 when undefined.
func twoProportions(k1, n1, k2, n2 int64) float64 {
	if n1 == 0 || n2 == 0 {
		return 1
	}
	p := float64(k1+k2) / float64(n1+n2)
	se := math.Sqrt(p * (1 - p) * (1/float64(n1) + 1/float64(n2)))
	if se == 0 {
		return 1
	}
	z := (float64(k2)/float64(n2) - float64(k1)/float64(n1)) / se
	return math.Min(1, math.Erfc(math.Abs(z)/math.Sqrt2))
}
