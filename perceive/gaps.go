package perceive

import (
	"math"
	"time"
)

// gapStats accumulates the statistics of the gaps between consecutive visible
// arrivals in O(1) memory: stall counts, jank time and a Welford running
// mean/variance for the coefficient of variation.
type gapStats struct {
	n          int           // gaps seen (arrivals - 1)
	stalls     int           // gaps > stall threshold
	longStalls int           // gaps > long-stall threshold (a subset of stalls)
	longest    time.Duration // longest gap
	stalled    time.Duration // sum of stall gaps (whole gaps)
	jank       time.Duration // sum of gaps > jank threshold
	mean, m2   float64       // Welford over gap seconds
}

func (g *gapStats) add(gap time.Duration, stall, longStall, jank time.Duration) {
	g.n++
	if gap > g.longest {
		g.longest = gap
	}
	if gap > jank {
		g.jank += gap
	}
	if gap > stall {
		g.stalls++
		g.stalled += gap
		if gap > longStall {
			g.longStalls++
		}
	}
	x := gap.Seconds()
	d := x - g.mean
	g.mean += d / float64(g.n)
	g.m2 += d * (x - g.mean)
}

// cv is the population standard deviation of the gaps over their mean; 0 with
// fewer than two gaps or a zero mean.
func (g *gapStats) cv() float64 {
	if g.n < 2 || g.mean <= 0 {
		return 0
	}
	v := g.m2 / float64(g.n)
	if v <= 0 {
		return 0
	}
	return math.Sqrt(v) / g.mean
}

// burstTokens is how many of a chunk's n tokens count as burst tokens: the
// extra tokens of a multi-token chunk, plus its first token when the chunk
// came less than one Frame after the previous arrival and an earlier token
// exists (the answer's first token never counts).
func burstTokens(n int, inFrame, hasEarlier bool) int {
	if n <= 0 {
		return 0
	}
	b := n - 1
	if inFrame && hasEarlier {
		b++
	}
	return b
}
