package stats

import "math"

// Summary is a plain-value digest of a sketch for reports and callbacks: the
// exact count, min, max and mean, and the estimated percentiles (each within
// the sketch's relative accuracy). Its zero value, which is also the Summary
// of an empty sketch, has Count 0 and every float field 0 (never NaN), so it
// always encodes as JSON. It is an immutable value, safe to share.
type Summary struct {
	Count int64   `json:"count"`
	Min   float64 `json:"min"`
	Max   float64 `json:"max"`
	Mean  float64 `json:"mean"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P95   float64 `json:"p95"`
	P99   float64 `json:"p99"`
	P999  float64 `json:"p999"`
}

// Summary returns the digest of s; see Summary for the empty case. Every
// field is finite: Mean is kept within [Min, Max], which it can only leave
// when Sum overflows float64 (a NaN mean then reports P50).
func (s *Sketch) Summary() Summary {
	if s.count == 0 {
		return Summary{}
	}
	sum := Summary{
		Count: s.count,
		Min:   s.min,
		Max:   s.max,
		Mean:  s.Mean(),
		P50:   s.Quantile(0.50),
		P90:   s.Quantile(0.90),
		P95:   s.Quantile(0.95),
		P99:   s.Quantile(0.99),
		P999:  s.Quantile(0.999),
	}
	switch {
	case math.IsNaN(sum.Mean):
		sum.Mean = sum.P50
	case sum.Mean < sum.Min:
		sum.Mean = sum.Min
	case sum.Mean > sum.Max:
		sum.Mean = sum.Max
	}
	return sum
}
