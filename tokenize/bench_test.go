package tokenize_test

import (
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tpsmeter/tpsmeter/tokenize"
)

// Benchmarks for docs/performance.md; reproduce with
//
//	go test -run '^$' -bench . -benchtime 3x ./tokenize
//
// BenchmarkStream feeds the ~1 MiB mixed corpus in 1-16 byte chunks, as a
// stream arrives, beside pkoukk/tiktoken-go's one-shot EncodeOrdinary of the
// same text.
func BenchmarkStream(b *testing.B) {
	text := corpus(b)
	parts := chunks(rand.New(rand.NewPCG(7, 7)), text, 16)
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
		b.Run(name+"/pkoukk-oneshot", func(b *testing.B) {
			tk := oracle(b, name)
			tokens := 0
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			cpu := cpuTime()
			for b.Loop() {
				tokens = len(tk.EncodeOrdinary(text))
			}
			reportRates(b, cpuTime()-cpu, len(text), tokens)
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
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	cpu := cpuTime()
	for b.Loop() {
		c.Reset()
		for _, p := range parts {
			c.Add(p)
		}
		tokens = c.Count()
	}
	cpu = cpuTime() - cpu
	runtime.ReadMemStats(&after)
	reportRates(b, cpu, len(text), tokens)
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(b.N*len(parts)), "allocs/Add")
}

// reportRates reports tokens per second of wall time, and MB/s of CPU time
// (user + system, all threads) as a steadier measure on a busy machine.
func reportRates(b *testing.B, cpu time.Duration, bytes, tokens int) {
	b.ReportMetric(float64(tokens)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
	if cpu > 0 {
		b.ReportMetric(float64(bytes)*float64(b.N)/1e6/cpu.Seconds(), "MB/cpu-s")
	}
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

func sizeName(n int) string {
	if n >= 1<<20 {
		return strings.Repeat("", 0) + itoa(n>>20) + "MiB"
	}
	return itoa(n>>10) + "KiB"
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var d []byte
	for ; n > 0; n /= 10 {
		d = append([]byte{byte('0' + n%10)}, d...)
	}
	return string(d)
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
			for b.Loop() {
				keep = nil
				runtime.GC()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				enc, err := tokenize.BuildUncached(name)
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				keep = enc
				runtime.GC()
				runtime.ReadMemStats(&after)
				retained += float64(after.HeapAlloc) - float64(before.HeapAlloc)
				allocated += float64(after.TotalAlloc - before.TotalAlloc)
				b.StartTimer()
			}
			b.ReportMetric(retained/float64(b.N)/(1<<20), "MB-retained")
			b.ReportMetric(allocated/float64(b.N)/(1<<20), "MB-allocated")
		})
	}
}
