// Package cpuratio measures how much more CPU time one way of doing a job
// takes than another, robustly on a noisy shared machine. The overhead
// benchmarks of several packages use it, so that their numbers compare.
//
// Every iteration runs the baseline and the mode twice each, in the order
// A B B A on even iterations and B A A B on odd ones, and takes the process
// CPU time (getrusage: user and system time of all threads, the garbage
// collector included) around each run. A drift of the machine's speed
// during the four runs weighs on both sides alike, and the alternation
// cancels what the position in the iteration adds (a run that follows the
// garbage collection of the previous run's allocations, or that comes
// first after the harness, is slower): with a fixed A B B A order, a
// baseline-against-itself control read 1.005-1.012 instead of 1.
package cpuratio

import (
	"slices"
	"syscall"
	"testing"
	"time"
)

// Result is what Measure found.
type Result struct {
	// Median is the median over the iterations of the per-iteration ratio
	// cpu(mode runs)/cpu(baseline runs): the number to quote.
	Median float64
	// Sum is the ratio of the summed CPU times.
	Sum float64
	// BaseCPU and ModeCPU are the mean CPU times of one run.
	BaseCPU, ModeCPU time.Duration
}

// Measure runs base and mode b.N times each twice, alternating as the
// package comment says, and returns the ratios. It calls both once before
// measuring (to load what they load once). It fails b if no CPU time was
// measured.
func Measure(b *testing.B, base, mode func()) Result {
	base()
	mode()
	cpuOf := func(run func()) time.Duration {
		c := ProcessCPU()
		run()
		return ProcessCPU() - c
	}
	var ratios []float64
	var baseSum, modeSum time.Duration
	i := 0
	for b.Loop() {
		var a, m time.Duration
		if i%2 == 0 {
			a = cpuOf(base)
			m = cpuOf(mode) + cpuOf(mode)
			a += cpuOf(base)
		} else {
			m = cpuOf(mode)
			a = cpuOf(base) + cpuOf(base)
			m += cpuOf(mode)
		}
		i++
		baseSum += a
		modeSum += m
		if a > 0 {
			ratios = append(ratios, float64(m)/float64(a))
		}
	}
	if len(ratios) == 0 || baseSum == 0 {
		b.Fatal("cpuratio: no CPU time measured")
	}
	return Result{
		Median:  median(ratios),
		Sum:     float64(modeSum) / float64(baseSum),
		BaseCPU: baseSum / time.Duration(2*i),
		ModeCPU: modeSum / time.Duration(2*i),
	}
}

// ProcessCPU returns the CPU time this process has used (user + system,
// all threads, the garbage collector included). Unlike wall time it does
// not grow when other processes take the shared cores.
func ProcessCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
