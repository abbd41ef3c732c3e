package llmsim

import (
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"
)

func TestLatenessHistogramQuantiles(t *testing.T) {
	var h latencyHist
	if h.snapshot() != (LatenessStats{}) {
		t.Fatalf("empty histogram: %+v", h.snapshot())
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var vals []time.Duration
	for range 100000 {
		v := time.Duration(rng.ExpFloat64() * float64(200*time.Microsecond))
		vals = append(vals, v)
		h.record(v)
	}
	h.record(-time.Millisecond) // early: counts as 0
	vals = append(vals, 0)
	slices.Sort(vals)
	exact := func(q float64) time.Duration { return vals[int(q*float64(len(vals)-1))] }
	s := h.snapshot()
	if s.Count != uint64(len(vals)) || s.Max != vals[len(vals)-1] {
		t.Errorf("count %d max %v, want %d %v", s.Count, s.Max, len(vals), vals[len(vals)-1])
	}
	for _, c := range []struct {
		name string
		got  time.Duration
		q    float64
	}{{"p50", s.P50, 0.5}, {"p90", s.P90, 0.9}, {"p99", s.P99, 0.99}} {
		e := exact(c.q)
		if c.got < e || float64(c.got) > float64(e)*1.10 {
			t.Errorf("%s = %v, exact %v: want within [exact, exact+10%%]", c.name, c.got, e)
		}
	}
	var sum time.Duration
	for _, v := range vals {
		sum += v
	}
	if mean := sum / time.Duration(len(vals)); s.Mean < mean-time.Microsecond || s.Mean > mean+time.Microsecond {
		t.Errorf("mean %v, exact %v", s.Mean, mean)
	}
	h.reset()
	if h.snapshot() != (LatenessStats{}) {
		t.Errorf("after reset: %+v", h.snapshot())
	}
}

func TestLatenessHistogramConcurrent(t *testing.T) {
	var h latencyHist
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 1000 {
				h.record(time.Duration(g*1000+i) * time.Microsecond)
			}
		})
	}
	wg.Wait()
	if s := h.snapshot(); s.Count != 8000 || s.Max != 7999*time.Microsecond {
		t.Errorf("%+v", s)
	}
}

func BenchmarkLatenessRecord(b *testing.B) {
	var h latencyHist
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		h.record(time.Duration(i&0xffff) * time.Microsecond)
	}
}
