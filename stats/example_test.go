package stats_test

import (
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/tpsmeter/tpsmeter/stats"
)

func ExampleSketch() {
	s := stats.NewSketch()
	for i := 1; i <= 1000; i++ {
		s.Add(float64(i) / 1000) // time to first token in seconds: 1 ms .. 1 s
	}
	s.Add(-1)    // kept: negative values are supported
	s.Add(nan()) // ignored, counted by Dropped
	fmt.Println(s.Count(), s.Dropped(), s.Min(), s.Max())
	fmt.Printf("P50 %.3f s, P99 %.3f s\n", s.Quantile(0.5), s.Quantile(0.99))
	// Output:
	// 1001 1 -1 1
	// P50 0.505 s, P99 0.991 s
}

func nan() float64 { var zero float64; return zero / zero }

func ExampleSketch_Summary() {
	s := stats.NewSketch()
	for _, ms := range []float64{120, 180, 95, 240, 3100} {
		s.Add(ms / 1000)
	}
	// Quantiles are lower quantiles (rank floor(q*(n-1))): with 5 values,
	// P90 to P99.9 are all the 4th value; only Max shows the 3.1 s outlier.
	b, _ := json.Marshal(s.Summary())
	fmt.Println(string(b))
	empty, _ := json.Marshal(stats.NewSketch().Summary())
	fmt.Println(string(empty))
	// Output:
	// {"count":5,"min":0.095,"max":3.1,"mean":0.7470000000000001,"p50":0.18019047603876573,"p90":0.23815179599100578,"p95":0.23815179599100578,"p99":0.23815179599100578,"p999":0.23815179599100578}
	// {"count":0,"min":0,"max":0,"mean":0,"p50":0,"p90":0,"p95":0,"p99":0,"p999":0}
}

// Benchmark runs on several machines each ship their sketch; the merged
// report is exactly what one machine recording everything would show.
func ExampleSketch_Merge() {
	var shipped [][]byte
	for pod := range 3 {
		s := stats.NewSketch()
		for i := range 100 {
			s.Add(float64(pod*100+i+1) / 10) // tokens per second
		}
		b, _ := s.MarshalBinary()
		shipped = append(shipped, b)
	}
	report := stats.NewSketch()
	for _, b := range shipped {
		var s stats.Sketch
		if err := s.UnmarshalBinary(b); err != nil {
			fmt.Println(err)
			return
		}
		if err := report.Merge(&s); err != nil {
			fmt.Println(err)
			return
		}
	}
	fmt.Printf("%d values, min %.1f, max %.1f, P50 %.2f\n", report.Count(), report.Min(), report.Max(), report.Quantile(0.5))
	// Output:
	// 300 values, min 0.1, max 30.0, P50 14.95
}

func ExampleAggregate() {
	a := stats.NewAggregate() // one per metric, shared by every stream
	var wg sync.WaitGroup
	for stream := range 4 {
		wg.Go(func() {
			for i := range 250 {
				a.Add(float64(stream*250+i) / 1000) // inter-token gap in seconds
			}
		})
	}
	wg.Wait()
	s := a.Snapshot()
	fmt.Printf("%d gaps, max %.3f s\n", s.Count(), s.Max())
	// Output:
	// 1000 gaps, max 0.999 s
}

func ExampleWindow() {
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	w := stats.NewWindow(5*time.Minute, 5, clock) // last 5 minutes, 1-minute slices

	w.Add(0.4)
	now = now.Add(3 * time.Minute)
	w.Add(0.6)
	fmt.Println("after 3 min:", w.Snapshot().Count())
	now = now.Add(2 * time.Minute) // the first value is now 5 minutes old
	fmt.Println("after 5 min:", w.Snapshot().Count())
	// Output:
	// after 3 min: 2
	// after 5 min: 1
}

func ExampleGroups() {
	buckets := stats.DefaultLengthBuckets()
	g := stats.NewGroups(2, func(stats.Key) *stats.Sketch { return stats.NewSketch() })
	for _, r := range []struct {
		model  string
		tokens int
		tps    float64
	}{
		{"gpt-4o", 80, 55}, {"gpt-4o", 900, 70}, {"llama-3", 40, 120}, {"mistral", 300, 90},
	} {
		k := stats.Key{Model: r.model, Provider: "test", Bucket: buckets.Bucket(r.tokens), Class: "chat"}
		g.Get(k).Add(r.tps) // one goroutine here; guard the sketches otherwise
	}
	g.Range(func(k stats.Key, s *stats.Sketch) bool {
		fmt.Printf("%s/%s: %d\n", k.Model, k.Bucket, s.Count())
		return true
	})
	fmt.Println("folded into other:", g.Overflowed())
	// Output:
	// gpt-4o/long: 1
	// gpt-4o/short: 1
	// other/other: 2
	// folded into other: 2
}

func ExampleNewLengthBuckets() {
	b, err := stats.NewLengthBuckets([]int{50, 1000}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(b.Bucket(10), b.Bucket(50), b.Bucket(4000))
	// Output:
	// <50 50-999 >=1000
}
