package llmsim

import (
	"math"
	"sync/atomic"
	"time"
)

// LatenessStats summarises how late the server emitted its scheduled events:
// lateness = the moment the event was written and flushed minus its scheduled
// time. Quantiles come from a fixed log-bucket histogram (8 buckets per
// doubling), reported as the bucket's upper bound (at most ~9% high) and never
// above Max. The zero value means no event was recorded.
type LatenessStats struct {
	Count uint64        // events recorded
	Mean  time.Duration // exact mean
	P50   time.Duration
	P90   time.Duration
	P99   time.Duration
	Max   time.Duration // exact maximum
}

const (
	histSubBuckets = 8                             // buckets per doubling
	histBuckets    = 2 + histSubBuckets*(64-1) + 1 // bucket 0 holds <= 0 ns
	histMaxIndex   = histBuckets - 1
)

// latencyHist is a lock-free histogram of durations with bounded memory.
// All methods are safe for concurrent use.
type latencyHist struct {
	buckets [histBuckets]atomic.Uint64
	count   atomic.Uint64
	sum     atomic.Int64 // ns; wraps only after ~292 years of summed lateness
	max     atomic.Int64
}

func histIndex(ns int64) int {
	if ns <= 0 {
		return 0
	}
	i := 1 + int(math.Floor(histSubBuckets*math.Log2(float64(ns))))
	return min(max(i, 1), histMaxIndex)
}

// histUpper is the upper bound of bucket i in ns.
func histUpper(i int) float64 {
	if i == 0 {
		return 0
	}
	return math.Exp2(float64(i) / histSubBuckets)
}

func (h *latencyHist) record(d time.Duration) {
	ns := int64(d)
	h.buckets[histIndex(ns)].Add(1)
	h.count.Add(1)
	if ns > 0 {
		h.sum.Add(ns)
	}
	for {
		m := h.max.Load()
		if ns <= m || h.max.CompareAndSwap(m, ns) {
			break
		}
	}
}

func (h *latencyHist) reset() {
	for i := range h.buckets {
		h.buckets[i].Store(0)
	}
	h.count.Store(0)
	h.sum.Store(0)
	h.max.Store(0)
}

func (h *latencyHist) snapshot() LatenessStats {
	var counts [histBuckets]uint64
	var total uint64
	for i := range h.buckets {
		counts[i] = h.buckets[i].Load()
		total += counts[i]
	}
	if total == 0 {
		return LatenessStats{}
	}
	maxNs := h.max.Load()
	q := func(p float64) time.Duration {
		rank := uint64(math.Ceil(p * float64(total)))
		rank = max(rank, 1)
		var seen uint64
		for i, c := range counts {
			seen += c
			if seen >= rank {
				return time.Duration(min(histUpper(i), float64(maxNs)))
			}
		}
		return time.Duration(maxNs)
	}
	return LatenessStats{
		Count: total,
		Mean:  time.Duration(h.sum.Load() / int64(total)),
		P50:   q(0.50),
		P90:   q(0.90),
		P99:   q(0.99),
		Max:   time.Duration(maxNs),
	}
}
