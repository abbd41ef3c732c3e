package bench_test

import (
	"encoding/json"
	"math"
	"slices"
	"testing"

	"github.com/tpsmeter/tpsmeter/bench"
)

func TestDistReservoir(t *testing.T) {
	tests := []struct {
		name      string
		cap, n    int
		wantKept  int
		wantCount int64
	}{
		{"below cap keeps all", 100, 40, 40, 40},
		{"at cap", 50, 50, 50, 50},
		{"beyond cap samples", 100, 5000, 100, 5000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := bench.NewDist(tc.cap, 1)
			for i := 0; i < tc.n; i++ {
				d.Add(float64(i))
			}
			d.Add(math.NaN())
			d.Add(math.Inf(1))
			if got := len(d.Samples()); got != tc.wantKept {
				t.Errorf("kept %d, want %d", got, tc.wantKept)
			}
			if d.Count() != tc.wantCount || d.Seen() != tc.wantCount {
				t.Errorf("count %d seen %d, want %d", d.Count(), d.Seen(), tc.wantCount)
			}
			if tc.n <= tc.cap {
				s := d.Samples()
				slices.Sort(s)
				for i, v := range s {
					if v != float64(i) {
						t.Fatalf("sample %d = %v, want %d", i, v, i)
					}
				}
			}
			s := d.Summary()
			if s.Min != 0 || s.Max != float64(tc.n-1) {
				t.Errorf("min/max = %v/%v", s.Min, s.Max)
			}
			if mid := float64(tc.n-1) / 2; math.Abs(s.P50-mid) > 0.011*mid+1 {
				t.Errorf("p50 = %v, want about %v", s.P50, mid)
			}
		})
	}
}

// A reservoir sample is uniform: the mean of the kept values is close to
// the mean of all values, whatever their order.
func TestDistReservoirUniform(t *testing.T) {
	d := bench.NewDist(500, 7)
	for i := 0; i < 100_000; i++ {
		d.Add(float64(i))
	}
	sum := 0.0
	for _, v := range d.Samples() {
		sum += v
	}
	if mean := sum / 500; math.Abs(mean-50_000) > 5000 {
		t.Fatalf("sample mean %v, want about 50000 (a biased reservoir)", mean)
	}
}

func TestDistMerge(t *testing.T) {
	a, b := bench.NewDist(100, 1), bench.NewDist(100, 2)
	for i := 0; i < 3000; i++ {
		a.Add(1) // a saw 3000 ones
	}
	for i := 0; i < 1000; i++ {
		b.Add(2) // b saw 1000 twos
	}
	if err := a.Merge(b); err != nil {
		t.Fatal(err)
	}
	if a.Count() != 4000 || a.Seen() != 4000 {
		t.Fatalf("count %d seen %d, want 4000", a.Count(), a.Seen())
	}
	s := a.Samples()
	if len(s) != 100 {
		t.Fatalf("kept %d, want 100", len(s))
	}
	twos := 0
	for _, v := range s {
		if v == 2 {
			twos++
		}
	}
	if twos != 25 { // in proportion to what each side saw
		t.Fatalf("%d of 100 merged samples come from the smaller side, want 25", twos)
	}
	if b.Count() != 1000 {
		t.Fatal("Merge modified its argument")
	}
}

func TestDistMergeSmallIsConcatenation(t *testing.T) {
	a, b := bench.NewDist(100, 1), bench.NewDist(100, 2)
	for i := 0; i < 10; i++ {
		a.Add(float64(i))
		b.Add(float64(100 + i))
	}
	if err := a.Merge(b); err != nil {
		t.Fatal(err)
	}
	s := a.Samples()
	slices.Sort(s)
	if len(s) != 20 || s[0] != 0 || s[19] != 109 {
		t.Fatalf("merged samples = %v, want all 20 values", s)
	}
}

func TestDistJSON(t *testing.T) {
	d := bench.NewDist(10, 3)
	for i := 1; i <= 25; i++ {
		d.Add(float64(i) / 10)
	}
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	var back bench.Dist
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Count() != d.Count() || back.Seen() != d.Seen() || !slices.Equal(back.Samples(), d.Samples()) {
		t.Fatalf("round trip changed the dist: %s", b)
	}
	for _, q := range []float64{0, 0.5, 0.9, 0.99, 1} {
		if back.Quantile(q) != d.Quantile(q) {
			t.Errorf("q%v: %v after the round trip, %v before", q, back.Quantile(q), d.Quantile(q))
		}
	}
	var summary struct {
		Count int64   `json:"count"`
		P50   float64 `json:"p50"`
	}
	if err := json.Unmarshal(b, &summary); err != nil || summary.Count != 25 || summary.P50 == 0 {
		t.Fatalf("summary fields missing from %s", b)
	}
	for _, bad := range []string{`{"seen":1,"samples":[1,2]}`, `{"samples":"x"}`} {
		if err := json.Unmarshal([]byte(bad), &back); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}

func BenchmarkDistAdd(b *testing.B) {
	d := bench.NewDist(1000, 1)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		d.Add(float64(i%5000) / 100)
		i++
	}
}
