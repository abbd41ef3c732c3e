package llmsim

import (
	"context"
	"slices"
	"testing"
	"time"
)

// BenchmarkSleepPrecision measures how late the real clock wakes up, with a
// timer only and with the fine nanosleep finish (each op is one sleep of
// 2-5 ms; the metrics are lateness quantiles).
//
//	go test ./llmsim -run '^$' -bench SleepPrecision -benchtime 300x
func BenchmarkSleepPrecision(b *testing.B) {
	for _, tc := range []struct {
		name string
		fine bool
	}{{"timer", false}, {"timer+nanosleep+spin", true}} {
		b.Run(tc.name, func(b *testing.B) {
			c := realClock{fine: func() bool { return tc.fine }}
			var late []time.Duration
			ctx := context.Background()
			i := 0
			for b.Loop() {
				target := time.Now().Add(2*time.Millisecond + time.Duration(i*379%3000)*time.Microsecond)
				_ = c.SleepUntil(ctx, target)
				late = append(late, time.Since(target))
				i++
			}
			slices.Sort(late)
			q := func(p float64) float64 { return float64(late[int(p*float64(len(late)-1))]) / 1e3 }
			b.ReportMetric(q(0.5), "late-p50-µs")
			b.ReportMetric(q(0.99), "late-p99-µs")
			b.ReportMetric(q(1), "late-max-µs")
			b.ReportMetric(0, "ns/op")
		})
	}
}
