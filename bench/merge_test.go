package bench_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/tpsmeter/tpsmeter/bench"
	"github.com/tpsmeter/tpsmeter/stats"
)

// Merging the results of two halves of a set of requests gives exactly the
// sketches of one collector fed with all of them.
func TestMergeEqualsWhole(t *testing.T) {
	var recs []bench.Record
	for i := 0; i < 200; i++ {
		ttft := time.Duration(100+(i*37)%400) * time.Millisecond
		tps := 40 + float64((i*53)%80)
		class := []string{"easy", "hard"}[i%2]
		recs = append(recs, synthRecord("t", "medium", class, ttft, tps, 20+i%30))
	}
	recs[7].Result.Status = "partial"
	recs[7].Result.ErrorType = "429"
	whole := bench.NewCollector(stats.LengthBuckets{}, 0, 1)
	a, b := bench.NewCollector(stats.LengthBuckets{}, 0, 2), bench.NewCollector(stats.LengthBuckets{}, 0, 3)
	for i, r := range recs {
		whole.Add(r)
		if i < 120 {
			a.Add(r)
		} else {
			b.Add(r)
		}
	}
	ra, rb := a.Results(), b.Results()
	ra.Runs = []bench.RunInfo{{ID: "a"}}
	rb.Runs = []bench.RunInfo{{ID: "b"}}
	m, err := bench.Merge(ra, rb)
	if err != nil {
		t.Fatal(err)
	}
	w := whole.Results()
	if len(m.Cells) != len(w.Cells) || len(m.Runs) != 2 {
		t.Fatalf("%d cells / %d runs, want %d / 2", len(m.Cells), len(m.Runs), len(w.Cells))
	}
	for _, wc := range w.Cells {
		mc := m.Cell(wc.CellKey)
		if mc == nil {
			t.Fatalf("merged results lack cell %s", wc.CellKey)
		}
		if mc.Requests != wc.Requests || mc.Completed != wc.Completed || mc.ErrorCount() != wc.ErrorCount() {
			t.Errorf("cell %s: counts %d/%d/%d, want %d/%d/%d", wc.CellKey, mc.Requests, mc.Completed, mc.ErrorCount(), wc.Requests, wc.Completed, wc.ErrorCount())
		}
		for name, wd := range wc.Metrics {
			md := mc.Metric(name)
			if md.Count() != wd.Count() {
				t.Errorf("%s %s: count %d, want %d", wc.CellKey, name, md.Count(), wd.Count())
			}
			for _, q := range []float64{0.01, 0.5, 0.9, 0.95, 0.99} {
				if x, y := md.Quantile(q), wd.Quantile(q); x != y {
					t.Errorf("%s %s q%v: merged %v, whole %v", wc.CellKey, name, q, x, y)
				}
			}
		}
	}
	// Exact quantiles of all TTFTs, against the merged sketch (1% bound).
	var ttfts []float64
	for _, r := range recs {
		if r.OK() {
			ttfts = append(ttfts, r.Result.TTFT.Seconds())
		}
	}
	all := bench.NewDist(10_000, 1)
	for _, c := range m.Cells {
		_ = all.Merge(c.Metrics[bench.MetricTTFT])
	}
	for _, q := range []float64{0.5, 0.9, 0.99} {
		exact := exactQuantile(ttfts, q)
		if got := all.Quantile(q); math.Abs(got-exact) > 0.01*exact {
			t.Errorf("q%v: merged %v, exact %v (more than 1%% apart)", q, got, exact)
		}
	}
}

// exactQuantile is the lower quantile: the value of rank floor(q*(n-1)).
func exactQuantile(xs []float64, q float64) float64 {
	s := append([]float64(nil), xs...)
	for i := 1; i < len(s); i++ { // insertion sort: tiny inputs
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s[int(math.Floor(q*float64(len(s)-1)))]
}

func TestMergeRefuses(t *testing.T) {
	a := synthResults(t, "a", 5, 1, 1)
	if _, err := bench.Merge(a, a); !errors.Is(err, bench.ErrIncompatible) {
		t.Errorf("merging a run with itself: err = %v, want ErrIncompatible", err)
	}
	b := synthResults(t, "b", 5, 1, 2)
	b.Buckets, _ = stats.NewLengthBuckets([]int{10, 20}, nil)
	if _, err := bench.Merge(a, b); !errors.Is(err, bench.ErrIncompatible) {
		t.Errorf("different buckets: err = %v, want ErrIncompatible", err)
	}
	if _, err := bench.Merge(); !errors.Is(err, bench.ErrIncompatible) {
		t.Errorf("nothing: err = %v, want ErrIncompatible", err)
	}
}

func TestMergeKeepsInputs(t *testing.T) {
	a, b := synthResults(t, "a", 10, 1, 1), synthResults(t, "b", 10, 1, 2)
	before := a.Cells[0].Metric(bench.MetricTTFT).Count()
	m, err := bench.Merge(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if a.Cells[0].Metric(bench.MetricTTFT).Count() != before {
		t.Fatal("Merge modified its input")
	}
	if m.Cells[0].Metric(bench.MetricTTFT).Count() != 2*before {
		t.Fatal("merged count is not the sum")
	}
	m.Partial = true
	if a.Partial {
		t.Fatal("merged results share state with the input")
	}
}
