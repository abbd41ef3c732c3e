package tpsmeter_test

import (
	"context"
	"testing"
	"time"

	"github.com/tpsmeter/tpsmeter"
)

var sinkTime time.Time

// BenchmarkClockReading backs the clock figure in docs/performance.md: the
// stream wrappers read Recorder.Now once per chunk, which with the system
// clock reads only the monotonic clock (start + time.Since(start)), where
// time.Now reads the wall clock too.
//
//	go test -run '^$' -bench ClockReading -count 3 .
func BenchmarkClockReading(b *testing.B) {
	b.Run("read=time.Now", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sinkTime = time.Now()
		}
	})
	b.Run("read=Recorder.Now", func(b *testing.B) {
		_, rec := tpsmeter.New().Start(context.Background(), tpsmeter.RequestInfo{Model: "gpt-4o"})
		b.ReportAllocs()
		for b.Loop() {
			sinkTime = rec.Now()
		}
	})
}
