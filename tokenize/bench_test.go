package tokenize_test

import (
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tpsmeter/tpsmeter/tokenize"
)

// Benchmarks for docs/performance.md; reproduce with
//
//	go test -run '^$' -bench . -benchtime 3x -count 3 ./tokenize
//
// BenchmarkStream feeds the ~1 MiB mixed corpus in 1-16 byte chunks, as a
// stream arrives, beside pkoukk/tiktoken-go's one-shot EncodeOrdinary of the
// same text.
func BenchmarkStream(b *testing.B) {
	text := corpus(b)
	parts := chunks(rand.New(rand.NewPCG(7, 7)), text, 16)
	// Ours first, then the reference, whose garbage (over 100 MB per run)
	// would otherwise slow down what follows it.
	for _, name := range baseEncodings {
		b.Run(name+"/tpsmeter-stream", func(b *testing.B) {
			c, err := tokenize.NewCounter(name)
			if err != nil {
				b.Fatal(err)
			}
			benchCounter(b, c, text, parts)
		})
		b.Run(name+"/tpsmeter-oneshot", func(b *testing.B) {
			c, err := tokenize.NewCounter(name)
			if err != nil {
				b.Fatal(err)
			}
			benchCounter(b, c, text, []string{text})
		})
	}
	for _, name := range baseEncodings {
		b.Run(name+"/pkoukk-oneshot", func(b *testing.B) {
			tk := oracle(b, name)
			tokens := 0
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			settle()
			cpu, best := cpuTime(), time.Duration(1<<62)
			for b.Loop() {
				start := time.Now()
				tokens = len(tk.EncodeOrdinary(text))
				best = min(best, time.Since(start))
			}
			reportRates(b, cpuTime()-cpu, best, len(text), tokens)
		})
	}
}

// benchCounter streams parts through c per iteration and reports tokens/s
// and allocations per Add.
func benchCounter(b *testing.B, c *tokenize.Counter, text string, parts []string) {
	b.Helper()
	tokens := 0
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	settle()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	cpu, best := cpuTime(), time.Duration(1<<62)
	for b.Loop() {
		start := time.Now()
		c.Reset()
		for _, p := range parts {
			c.Add(p)
		}
		tokens = c.Count()
		best = min(best, time.Since(start))
	}
	cpu = cpuTime() - cpu
	runtime.ReadMemStats(&after)
	reportRates(b, cpu, best, len(text), tokens)
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(b.N*len(parts)), "allocs/Add")
}

// settle collects the garbage of earlier benchmarks (pkoukk's leaves over
// 100 MB per run) and returns freed memory to the OS, so that background
// GC and scavenging do not run into the next measurement.
func settle() {
	debug.FreeOSMemory()
}

// reportRates reports tokens per second of wall time, and two steadier
// measures on a busy machine: MB per second of CPU time (user + system, all
// threads, so GC work counts), and MB/s of the fastest iteration.
func reportRates(b *testing.B, cpu, best time.Duration, bytes, tokens int) {
	b.ReportMetric(float64(tokens)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
	if cpu > 0 {
		b.ReportMetric(float64(bytes)*float64(b.N)/1e6/cpu.Seconds(), "MB/cpu-s")
	}
	b.ReportMetric(float64(bytes)/1e6/best.Seconds(), "MB/s-best")
}

// BenchmarkLongPiece streams texts that are one single pre-token piece (a
// run of one letter, of one CJK character, of random lowercase letters, of
// spaces) in 1-16 byte chunks and counts them; time per byte must not grow
// with the size (pkoukk/tiktoken-go is quadratic here).
func BenchmarkLongPiece(b *testing.B) {
	r := rand.New(rand.NewPCG(8, 8))
	random := make([]byte, 1<<20)
	for i := range random {
		random[i] = byte('a' + r.IntN(26))
	}
	units := []struct{ name, text string }{
		{"letter", strings.Repeat("a", 1<<20)},
		{"cjk", strings.Repeat("中", 1<<20/3)},
		{"random-lowercase", string(random)},
		{"spaces", strings.Repeat(" ", 1<<20)},
	}
	for _, u := range units {
		for _, size := range []int{256 << 10, 1 << 20} {
			text := u.text[:min(size, len(u.text))]
			parts := chunks(rand.New(rand.NewPCG(3, 3)), text, 16)
			b.Run(u.name+"/"+sizeName(size), func(b *testing.B) {
				c, err := tokenize.NewCounter("o200k_base")
				if err != nil {
					b.Fatal(err)
				}
				benchCounter(b, c, text, parts)
			})
		}
	}
}

// BenchmarkLongPiecePkoukk is the reference on single pieces of 8 and 32
// KiB of one letter: its time grows with the square of the size.
func BenchmarkLongPiecePkoukk(b *testing.B) {
	for _, size := range []int{8 << 10, 32 << 10} {
		text := strings.Repeat("a", size)
		b.Run("letter/"+sizeName(size), func(b *testing.B) {
			tk := oracle(b, "o200k_base")
			tokens := 0
			b.SetBytes(int64(len(text)))
			settle()
			cpu, best := cpuTime(), time.Duration(1<<62)
			for b.Loop() {
				start := time.Now()
				tokens = len(tk.EncodeOrdinary(text))
				best = min(best, time.Since(start))
			}
			reportRates(b, cpuTime()-cpu, best, len(text), tokens)
		})
	}
}

func sizeName(n int) string {
	if n >= 1<<20 {
		return strconv.Itoa(n>>20) + "MiB"
	}
	return strconv.Itoa(n>>10) + "KiB"
}

// keep holds built encodings so their heap stays live while measured.
var keep any

// BenchmarkLoad builds each encoding's tables from the embedded data (what
// the first NewCounter of a process does) and reports the heap they retain
// and the bytes allocated while building.
func BenchmarkLoad(b *testing.B) {
	for _, name := range baseEncodings {
		b.Run(name, func(b *testing.B) {
			var retained, allocated float64
			var cpu time.Duration
			for b.Loop() {
				b.StopTimer()
				keep = nil
				runtime.GC()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				c := cpuTime()
				b.StartTimer()
				enc, err := tokenize.BuildUncached(name)
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				cpu += cpuTime() - c
				keep = enc
				runtime.GC()
				runtime.ReadMemStats(&after)
				retained += float64(after.HeapAlloc) - float64(before.HeapAlloc)
				allocated += float64(after.TotalAlloc - before.TotalAlloc)
				b.StartTimer()
			}
			b.ReportMetric(retained/float64(b.N)/(1<<20), "MB-retained")
			b.ReportMetric(allocated/float64(b.N)/(1<<20), "MB-allocated")
			if cpu > 0 {
				b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op")
			}
		})
	}
}
