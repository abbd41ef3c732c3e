package stats_test

import (
	"encoding/json"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/DataDog/sketches-go/ddsketch"
	"github.com/DataDog/sketches-go/ddsketch/mapping"
	"github.com/DataDog/sketches-go/ddsketch/store"
	"github.com/tpsmeter/tpsmeter/stats"
)

// benchValues is a ring of lognormal latencies, so the loop measures Add and
// not the random generator.
var benchValues = sample(distributions[1], 4096, 42)

func BenchmarkSketchAdd(b *testing.B) {
	for _, d := range []dist{distributions[1], distributions[4]} {
		b.Run(d.name, func(b *testing.B) {
			vs := sample(d, 4096, 1)
			s := sketchOf(vs)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				s.Add(vs[i&4095])
				i++
			}
		})
	}
}

// The same values through sketches-go's own constructors, for comparison:
// its default (logarithmic mapping, buffered paginated store), and Sketch's
// mapping with the library's collapsing dense store (float64 counts, the
// store Sketch replaced with its own), called through the DDSketch
// interfaces.
func BenchmarkDDSketchLibraryAdd(b *testing.B) {
	cubic, _ := mapping.NewCubicallyInterpolatedMapping(0.01)
	for name, mk := range map[string]func() *ddsketch.DDSketch{
		"default": func() *ddsketch.DDSketch { s, _ := ddsketch.NewDefaultDDSketch(0.01); return s },
		"cubic-collapsing": func() *ddsketch.DDSketch {
			return ddsketch.NewDDSketch(cubic, store.NewCollapsingLowestDenseStore(2048), store.NewCollapsingLowestDenseStore(2048))
		},
	} {
		b.Run(name, func(b *testing.B) {
			s := mk()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				_ = s.Add(benchValues[i&4095])
				i++
			}
		})
	}
}

func BenchmarkSketchQuantile(b *testing.B) {
	s := sketchOf(sample(distributions[1], 100000, 1))
	b.ReportAllocs()
	for b.Loop() {
		_ = s.Quantile(0.99)
	}
}

func BenchmarkSketchSummary(b *testing.B) {
	s := sketchOf(sample(distributions[1], 100000, 1))
	b.ReportAllocs()
	for b.Loop() {
		_ = s.Summary()
	}
}

func BenchmarkSketchMerge(b *testing.B) {
	x := sketchOf(sample(distributions[1], 100000, 1))
	y := sketchOf(sample(distributions[1], 100000, 2))
	b.ReportAllocs()
	for b.Loop() {
		_ = x.Merge(y)
	}
}

func BenchmarkEncoding(b *testing.B) {
	s := sketchOf(sample(distributions[1], 100000, 1))
	bin, _ := s.MarshalBinary()
	js, _ := json.Marshal(s)
	b.Run("MarshalBinary", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = s.MarshalBinary()
		}
		b.ReportMetric(float64(len(bin)), "bytes")
	})
	b.Run("UnmarshalBinary", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var t stats.Sketch
			_ = t.UnmarshalBinary(bin)
		}
	})
	b.Run("MarshalJSON", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = json.Marshal(s)
		}
		b.ReportMetric(float64(len(js)), "bytes")
	})
	b.Run("UnmarshalJSON", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var t stats.Sketch
			_ = t.UnmarshalJSON(js)
		}
	})
}

// runGoroutines splits b.N calls of f over g goroutines; ns/op is then wall
// time per call with g goroutines recording at once.
func runGoroutines(b *testing.B, g int, f func(i int)) {
	b.ReportAllocs()
	b.ResetTimer()
	var wg sync.WaitGroup
	per := b.N / g
	for w := range g {
		n := per
		if w == 0 {
			n += b.N % g
		}
		wg.Go(func() {
			for i := range n {
				f(i + w)
			}
		})
	}
	wg.Wait()
}

func BenchmarkAggregateAdd(b *testing.B) {
	for _, g := range []int{1, 2, 8} {
		b.Run(fmt.Sprintf("goroutines=%d", g), func(b *testing.B) {
			a := stats.NewAggregate()
			runGoroutines(b, g, func(i int) { a.Add(benchValues[i&4095]) })
		})
	}
}

// The baseline Aggregate must beat: one Sketch behind one mutex.
func BenchmarkMutexSketchAdd(b *testing.B) {
	for _, g := range []int{1, 2, 8} {
		b.Run(fmt.Sprintf("goroutines=%d", g), func(b *testing.B) {
			var mu sync.Mutex
			s := stats.NewSketch()
			runGoroutines(b, g, func(i int) {
				mu.Lock()
				s.Add(benchValues[i&4095])
				mu.Unlock()
			})
		})
	}
}

func BenchmarkAggregateSnapshot(b *testing.B) {
	a := stats.NewAggregate()
	for _, v := range sample(distributions[1], 100000, 1) {
		a.Add(v)
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = a.Snapshot()
	}
}

func BenchmarkWindowAdd(b *testing.B) {
	for _, g := range []int{1, 2, 8} {
		b.Run(fmt.Sprintf("goroutines=%d", g), func(b *testing.B) {
			w := stats.NewWindow(time.Minute, 6, nil) // real clock: time.Now is part of the cost
			runGoroutines(b, g, func(i int) { w.Add(benchValues[i&4095]) })
		})
	}
}

func BenchmarkWindowSnapshot(b *testing.B) {
	w := stats.NewWindow(5*time.Minute, 30, nil)
	for _, v := range sample(distributions[1], 100000, 1) {
		w.Add(v)
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = w.Snapshot()
	}
}

func BenchmarkGroupsGet(b *testing.B) {
	g := stats.NewGroups(16, func(stats.Key) int { return 0 })
	keys := make([]stats.Key, 32) // 16 fit, 16 overflow
	for i := range keys {
		keys[i] = stats.Key{Model: fmt.Sprintf("model-%d", i), Provider: "openai", Bucket: "medium", Class: "chat"}
		g.Get(keys[i])
	}
	for _, gs := range []int{1, 2, 8} {
		b.Run(fmt.Sprintf("existing/goroutines=%d", gs), func(b *testing.B) {
			runGoroutines(b, gs, func(i int) { g.Get(keys[i&15]) })
		})
	}
	b.Run("overflow/goroutines=1", func(b *testing.B) {
		runGoroutines(b, 1, func(i int) { g.Get(keys[16+i&15]) })
	})
}

func BenchmarkLengthBucket(b *testing.B) {
	lb := stats.DefaultLengthBuckets()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		_ = lb.Bucket(i & 1023)
		i++
	}
}

// heapPer returns the live heap bytes per result of build, measured over n
// results so that other allocations meanwhile hardly matter.
func heapPer(n int, build func() any) float64 {
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	xs := make([]any, n)
	for i := range xs {
		xs[i] = build()
	}
	runtime.GC()
	runtime.ReadMemStats(&m1)
	runtime.KeepAlive(xs)
	return (float64(m1.HeapAlloc) - float64(m0.HeapAlloc) - float64(n*16)) / float64(n)
}

// BenchmarkSketchMemory reports the memory of one Sketch after 10^6 values:
// B/sketch is the bytes its structs and bin arrays allocate (deterministic),
// heap-B/sketch the live heap per sketch measured with runtime.ReadMemStats
// over 10 sketches, encoded-B the size of its binary encoding.
func BenchmarkSketchMemory(b *testing.B) {
	for _, d := range distributions {
		vs := sample(d, 1_000_000, 7)
		b.Run(d.name, func(b *testing.B) {
			var heap float64
			for b.Loop() {
				heap = heapPer(10, func() any { return sketchOf(vs) })
			}
			s := sketchOf(vs)
			enc, _ := s.MarshalBinary()
			b.ReportMetric(float64(stats.Footprint(s)), "B/sketch")
			b.ReportMetric(heap, "heap-B/sketch")
			b.ReportMetric(float64(len(enc)), "encoded-B")
		})
	}
}

// The same comparison with testing's own parallel harness: RunParallel
// starts p*GOMAXPROCS goroutines.
func BenchmarkAggregateAddParallel(b *testing.B) {
	for _, p := range []int{1, 2, 8} {
		b.Run(fmt.Sprintf("aggregate/p=%d", p), func(b *testing.B) {
			a := stats.NewAggregate()
			b.ReportAllocs()
			b.SetParallelism(p)
			b.RunParallel(func(pb *testing.PB) {
				for i := 0; pb.Next(); i++ {
					a.Add(benchValues[i&4095])
				}
			})
		})
		b.Run(fmt.Sprintf("mutex/p=%d", p), func(b *testing.B) {
			var mu sync.Mutex
			s := stats.NewSketch()
			b.ReportAllocs()
			b.SetParallelism(p)
			b.RunParallel(func(pb *testing.PB) {
				for i := 0; pb.Next(); i++ {
					mu.Lock()
					s.Add(benchValues[i&4095])
					mu.Unlock()
				}
			})
		})
	}
}

// The library's own sketch with the same mapping and its collapsing dense
// store, fed the same 10^6 lognormal latencies: float64 counts in an array
// grown by append doubling (compare BenchmarkSketchMemory/lognormal).
func BenchmarkDDSketchLibraryMemory(b *testing.B) {
	cubic, _ := mapping.NewCubicallyInterpolatedMapping(0.01)
	vs := sample(distributions[1], 1_000_000, 7)
	var heap float64
	for b.Loop() {
		heap = heapPer(10, func() any {
			s := ddsketch.NewDDSketch(cubic, store.NewCollapsingLowestDenseStore(2048), store.NewCollapsingLowestDenseStore(2048))
			for _, v := range vs {
				_ = s.Add(v)
			}
			return s
		})
	}
	b.ReportMetric(heap, "heap-B/sketch")
}

// Groups uses an RWMutex around a map; this compares it with sync.Map for
// the same lookups of existing keys.
func BenchmarkKeyLookup(b *testing.B) {
	keys := make([]stats.Key, 16)
	for i := range keys {
		keys[i] = stats.Key{Model: fmt.Sprintf("model-%d", i), Provider: "openai", Bucket: "medium", Class: "chat"}
	}
	b.Run("rwmutex-map", func(b *testing.B) {
		var mu sync.RWMutex
		m := map[stats.Key]int{}
		for i, k := range keys {
			m[k] = i
		}
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for i := 0; pb.Next(); i++ {
				mu.RLock()
				_ = m[keys[i&15]]
				mu.RUnlock()
			}
		})
	})
	b.Run("sync.Map", func(b *testing.B) {
		var m sync.Map
		for i, k := range keys {
			m.Store(k, i)
		}
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for i := 0; pb.Next(); i++ {
				v, _ := m.Load(keys[i&15])
				_ = v.(int)
			}
		})
	})
}
