package stats_test

import (
	"errors"
	"math"
	"sync"
	"testing"

	"github.com/tpsmeter/tpsmeter/stats"
)

// Many goroutines recording at once lose nothing: the snapshot is exactly
// the sketch of all their values.
func TestAggregateConcurrentAddsAreExact(t *testing.T) {
	for _, goroutines := range []int{1, 2, 8, 64} {
		vs := sample(distributions[2], 40000, uint64(goroutines))
		vs = append(vs, math.NaN(), 0, -1)
		a := stats.NewAggregate()
		var wg sync.WaitGroup
		for g := range goroutines {
			wg.Go(func() {
				for i := g; i < len(vs); i += goroutines {
					a.Add(vs[i])
				}
			})
		}
		// Snapshots taken meanwhile are consistent sketches.
		for range 5 {
			s := a.Snapshot()
			if s.Count() > int64(len(vs)) || (s.Count() > 0 && s.Quantile(0.5) > s.Max()) {
				t.Fatalf("inconsistent snapshot during adds: count %d", s.Count())
			}
		}
		wg.Wait()
		got, want := a.Snapshot(), sketchOf(vs)
		if got.Count() != want.Count() || got.Dropped() != 1 || got.Min() != want.Min() || got.Max() != want.Max() {
			t.Fatalf("%d goroutines: count %d dropped %d min %v max %v; want %d 1 %v %v",
				goroutines, got.Count(), got.Dropped(), got.Min(), got.Max(), want.Count(), want.Min(), want.Max())
		}
		if math.Abs(got.Sum()-want.Sum()) > 1e-9*want.Sum() {
			t.Fatalf("%d goroutines: Sum %v, want %v", goroutines, got.Sum(), want.Sum())
		}
		for _, q := range qGrid {
			if got.Quantile(q) != want.Quantile(q) {
				t.Fatalf("%d goroutines: Quantile(%v) = %v, want %v", goroutines, q, got.Quantile(q), want.Quantile(q))
			}
		}
	}
}

func TestAggregateMergeAndReset(t *testing.T) {
	a := stats.NewAggregate()
	a.Add(1)
	if err := a.Merge(sketchOf([]float64{2, 3})); err != nil {
		t.Fatal(err)
	}
	if err := a.Merge(nil); err != nil {
		t.Fatal(err)
	}
	requireSame(t, a.Snapshot(), sketchOf([]float64{1, 2, 3}))

	fine, _ := stats.NewSketchWithAccuracy(0.001)
	fine.Add(4)
	if err := a.Merge(fine); !errors.Is(err, stats.ErrIncompatible) {
		t.Fatalf("Merge of a 0.1%% sketch = %v, want ErrIncompatible", err)
	}
	if a.Snapshot().Count() != 3 {
		t.Fatal("failed Merge added values")
	}

	snap := a.Snapshot()
	a.Reset()
	if c := a.Snapshot().Count(); c != 0 {
		t.Fatalf("Count after Reset = %d", c)
	}
	if snap.Count() != 3 {
		t.Fatal("Reset changed an earlier snapshot")
	}
	a.Add(5)
	requireSame(t, a.Snapshot(), sketchOf([]float64{5}))
}

func TestAggregateAddDoesNotAllocate(t *testing.T) {
	a := stats.NewAggregate()
	vs := sample(distributions[1], 1024, 1)
	for _, v := range vs {
		a.Add(v)
	}
	i := 0
	if n := testing.AllocsPerRun(5000, func() { a.Add(vs[i%len(vs)]); i++ }); n != 0 {
		t.Fatalf("Aggregate.Add allocates %v times", n)
	}
}
