package perceive

import (
	"math"
	"time"
)

// Tracker follows one stream's visible arrivals and computes its Report. It
// is a value type meant to be embedded in a per-stream struct: it holds no
// pointers, never allocates, and its memory is fixed (a few hundred bytes)
// however long the stream runs. Observe is O(1).
//
// The zero Tracker is ready to use with the default configuration; Reset
// starts a new stream with a given Config. A Tracker is not safe for
// concurrent use: one goroutine (or the caller's own lock) must own it. Copying
// a Tracker copies its state; the copies are independent.
type Tracker struct {
	cfg      Config // normalized
	ready    bool
	playout  float64 // seconds, >= 0
	readRate float64 // tokens per second

	arrivals      int
	tokens        int
	chars         int
	pending       int // tokens credited before the first arrival
	first, last   time.Duration
	firstChars    int  // characters that arrived at the first arrival's instant
	lastTokens    int  // tokens credited to the latest arrival
	lastInFrame   bool // the latest arrival came less than one Frame after its predecessor
	tokensBefore  int  // tokens credited before the latest arrival
	burst         int  // burst tokens
	clamped       int
	gaps          gapStats
	read          reader
	smooth        renderer
	smoothEnabled bool
}

// Reset discards all state and starts a new stream with cfg. Fields of cfg
// that are zero take their defaults and fields that Config.Validate would
// reject are replaced as Config.Normalized documents; Reset never fails.
func (t *Tracker) Reset(cfg Config) {
	n := cfg.Normalized()
	*t = Tracker{
		cfg:           n,
		ready:         true,
		readRate:      n.ReadingWPM * n.TokensPerWord / 60,
		smoothEnabled: n.Render == Smooth,
	}
	if n.PlayoutBuffer > 0 {
		t.playout = n.PlayoutBuffer.Seconds()
	}
	t.read.rate = t.readRate
	t.read.frame = n.Frame
	t.smooth.reset(n.RevealRate, n.JankThreshold.Seconds(), n.StallThreshold.Seconds())
}

// Config returns the effective (normalized) configuration.
func (t *Tracker) Config() Config {
	if !t.ready {
		return DefaultConfig()
	}
	return t.cfg
}

// StallThreshold returns the effective stall threshold, so that a caller can
// arm a timer for "a stall has begun": see StallDeadline.
func (t *Tracker) StallThreshold() time.Duration {
	if !t.ready {
		return DefaultStallThreshold
	}
	return t.cfg.StallThreshold
}

// StallDeadline returns the time (from request start, like Observe's at) after
// which, if no further visible arrival comes, the stream is in a stall: the
// latest arrival plus StallThreshold. ok is false before the first arrival
// (time to first token is not a stall). A stall is in progress at time now
// when now > deadline.
func (t *Tracker) StallDeadline() (deadline time.Duration, ok bool) {
	if t.arrivals == 0 {
		return 0, false
	}
	return t.last + t.StallThreshold(), true
}

// Observe records a chunk of visible output that arrived at time at (measured
// from request start on a monotonic clock) carrying tokens tokens and chars
// characters. Characters are whatever unit the caller counts consistently
// (Unicode code points are recommended); RevealRate is in the same unit.
//
// tokens may be 0 for a chunk whose token credit lags its text. A call with
// chars <= 0 is not a visible arrival: its tokens (a late credit) are added to
// the latest arrival, or held for the first arrival if none happened yet. A
// call with neither tokens nor chars is ignored; negative counts are treated
// as 0. If at goes backwards (a clock fault) it is clamped to the latest
// arrival's time (a negative first at is clamped to 0) and Report.Clamped
// counts it. Observe never panics and never allocates.
func (t *Tracker) Observe(at time.Duration, tokens, chars int) {
	if !t.ready {
		t.Reset(Config{})
	}
	if tokens < 0 {
		tokens = 0
	}
	if chars <= 0 {
		t.credit(tokens)
		return
	}
	if at < 0 {
		at = 0
		t.clamped++
	}
	if t.arrivals > 0 && at < t.last {
		at = t.last
		t.clamped++
	}
	secs := at.Seconds()
	if t.arrivals == 0 {
		tokens += t.pending
		t.pending = 0
		t.first = at
		t.lastInFrame = false
		t.smooth.begin(secs, t.playout)
	} else {
		gap := at - t.last
		t.gaps.add(gap, t.cfg.StallThreshold, t.cfg.LongStallThreshold, t.cfg.JankThreshold)
		t.lastInFrame = gap < t.cfg.Frame
	}
	if at == t.first {
		t.firstChars += chars
	}
	t.tokensBefore = t.tokens
	t.burst += burstTokens(tokens, t.lastInFrame, t.tokensBefore > 0)
	t.arrivals++
	t.tokens += tokens
	t.chars += chars
	t.last = at
	t.lastTokens = tokens
	t.read.arrive(at, secs, tokens)
	if t.smoothEnabled {
		t.smooth.arrive(secs, chars, (at - t.first).Seconds(), float64(t.chars-t.firstChars))
	}
}

// credit adds n late-credited tokens to the latest arrival.
func (t *Tracker) credit(n int) {
	if n <= 0 {
		return
	}
	if t.arrivals == 0 {
		t.pending += n
		return
	}
	hasEarlier := t.tokensBefore > 0
	t.burst -= burstTokens(t.lastTokens, t.lastInFrame, hasEarlier)
	t.lastTokens += n
	t.burst += burstTokens(t.lastTokens, t.lastInFrame, hasEarlier)
	t.tokens += n
	t.read.credit(n)
}

// Report computes the report of the stream so far; end is when the stream
// finished (an end before the latest arrival is taken as the latest arrival).
// Report does not change the Tracker: it may be called any number of times,
// and Observe may continue afterwards. It never allocates.
func (t *Tracker) Report(end time.Duration) Report {
	cfg := t.Config()
	r := Report{
		Render:      cfg.Render,
		ReadingRate: cfg.ReadingRate(),
		Clamped:     t.clamped,
	}
	if t.arrivals == 0 {
		return r
	}
	if end < t.last {
		end = t.last
	}
	r.Arrivals = t.arrivals
	r.Tokens = t.tokens
	r.Chars = t.chars
	r.FirstArrival = t.first
	r.LastArrival = t.last
	r.DecodeTime = t.last - t.first
	r.TrailingSilence = end - t.last

	g := &t.gaps
	decode := r.DecodeTime.Seconds()
	r.Stalls = g.stalls
	r.LongStalls = g.longStalls
	r.LongestGap = g.longest
	if g.longest > cfg.StallThreshold {
		r.LongestStall = g.longest
	}
	r.StalledTime = g.stalled
	r.StalledShare = ratio(g.stalled.Seconds(), decode)
	r.JankRatio = ratio(g.jank.Seconds(), decode)
	r.GapCV = g.cv()
	r.BurstShare = ratio(float64(t.burst), float64(t.tokens-1))

	tokPerChar := ratio(float64(t.tokens), float64(t.chars))
	r.NaivePerceivedTPS = tokPerChar * ratio(float64(t.chars-t.firstChars), decode)
	r.NaiveVisibleStallTime = g.jank
	r.NaiveVisibleStallShare = r.JankRatio
	r.NaiveVisibleStalls = g.stalls

	if cfg.Render == Smooth {
		s := t.smooth // a copy: Report must not change the Tracker
		s.finish()
		window := s.last - s.start
		r.TimeToFirstVisible = t.first + seconds(t.playout)
		r.TimeToLastVisible = r.TimeToFirstVisible + seconds(window)
		r.PerceivedTPS = tokPerChar * ratio(s.received-s.firstChars, window)
		r.VisibleStallTime = seconds(s.pause)
		r.VisibleStallShare = ratio(s.pause, window)
		r.VisibleStalls = s.pauses
		r.RevealRate = s.rate
	} else {
		r.TimeToFirstVisible = t.first
		r.TimeToLastVisible = t.last
		r.PerceivedTPS = r.NaivePerceivedTPS
		r.VisibleStallTime = r.NaiveVisibleStallTime
		r.VisibleStallShare = r.NaiveVisibleStallShare
		r.VisibleStalls = r.NaiveVisibleStalls
	}

	r.OutpacedReaderShare = ratio(float64(t.read.outpaced), float64(t.tokens))
	if lag := t.read.done - t.last.Seconds(); lag > 0 {
		r.ReadingLag = seconds(lag)
	}
	return r
}

// ratio is a/b, or 0 when b <= 0 or the result is not finite.
func ratio(a, b float64) float64 {
	if b <= 0 {
		return 0
	}
	q := a / b
	if math.IsNaN(q) || math.IsInf(q, 0) || q < 0 {
		return 0
	}
	return q
}

// seconds converts seconds to a Duration, rounding to the nanosecond and
// saturating instead of overflowing.
func seconds(s float64) time.Duration {
	ns := math.Round(s * 1e9)
	switch {
	case ns >= math.MaxInt64:
		return math.MaxInt64
	case ns <= math.MinInt64:
		return math.MinInt64
	case math.IsNaN(ns):
		return 0
	}
	return time.Duration(ns)
}
