package perceive_test

import (
	"math"
	"testing"
	"time"

	"github.com/tpsmeter/tpsmeter/perceive"
)

// arrival is one visible chunk of a hand-built or recorded timeline.
type arrival struct {
	at     time.Duration
	tokens int
	chars  int
}

func ms(x float64) time.Duration { return time.Duration(math.Round(x * float64(time.Millisecond))) }

// steady returns n chunks, one every interval from start, each with tok
// tokens of cpt characters.
func steady(start, interval time.Duration, n, tok, cpt int) []arrival {
	out := make([]arrival, n)
	for i := range out {
		out[i] = arrival{start + time.Duration(i)*interval, tok, tok * cpt}
	}
	return out
}

// bursts returns nb bursts, one every period from start, each of k chunks
// spaced by within, each chunk with tok tokens of cpt characters.
func bursts(start, period time.Duration, nb, k int, within time.Duration, tok, cpt int) []arrival {
	var out []arrival
	for b := range nb {
		for j := range k {
			out = append(out, arrival{start + time.Duration(b)*period + time.Duration(j)*within, tok, tok * cpt})
		}
	}
	return out
}

// shift returns tl with every arrival moved by d (for concatenating phases).
func shift(tl []arrival, d time.Duration) []arrival {
	out := make([]arrival, len(tl))
	for i, a := range tl {
		a.at += d
		out[i] = a
	}
	return out
}

func feed(cfg perceive.Config, tl []arrival) *perceive.Tracker {
	var t perceive.Tracker
	t.Reset(cfg)
	for _, a := range tl {
		t.Observe(a.at, a.tokens, a.chars)
	}
	return &t
}

func last(tl []arrival) time.Duration { return tl[len(tl)-1].at }

func approx(t *testing.T, name string, got, want, tol float64) {
	t.Helper()
	if math.IsNaN(got) || math.Abs(got-want) > tol {
		t.Errorf("%s = %.9g, want %.9g (±%g)", name, got, want, tol)
	}
}

func approxDur(t *testing.T, name string, got, want, tol time.Duration) {
	t.Helper()
	d := got - want
	if d < 0 {
		d = -d
	}
	if d > tol {
		t.Errorf("%s = %v, want %v (±%v)", name, got, want, tol)
	}
}

// ---- Independent reference implementations (deliberately naive, O(n^2) or
// step-by-step), used to check the O(1) Tracker on any timeline. ----

type refGaps struct {
	stalls, longStalls     int
	longest, stalled, jank time.Duration
	cv, burstShare         float64
	decode                 time.Duration
}

// referenceGaps scans the timeline directly: gaps, two-pass mean and
// variance, and burst tokens by listing every token with its chunk.
func referenceGaps(tl []arrival, cfg perceive.Config) refGaps {
	c := cfg.Normalized()
	var r refGaps
	var gaps []float64
	for i := 1; i < len(tl); i++ {
		g := tl[i].at - tl[i-1].at
		gaps = append(gaps, g.Seconds())
		r.longest = max(r.longest, g)
		if g > c.JankThreshold {
			r.jank += g
		}
		if g > c.StallThreshold {
			r.stalls++
			r.stalled += g
		}
		if g > c.LongStallThreshold {
			r.longStalls++
		}
	}
	r.decode = tl[len(tl)-1].at - tl[0].at
	if len(gaps) >= 2 {
		var sum float64
		for _, g := range gaps {
			sum += g
		}
		mean := sum / float64(len(gaps))
		var ss float64
		for _, g := range gaps {
			ss += (g - mean) * (g - mean)
		}
		if mean > 0 {
			r.cv = math.Sqrt(ss/float64(len(gaps))) / mean
		}
	}
	type tok struct{ chunk int }
	var toks []tok
	for i, a := range tl {
		for range a.tokens {
			toks = append(toks, tok{i})
		}
	}
	burst := 0
	for k := 1; k < len(toks); k++ {
		ci := toks[k].chunk
		if ci == toks[k-1].chunk || (ci > 0 && tl[ci].at-tl[ci-1].at < c.Frame) {
			burst++
		}
	}
	if len(toks) > 1 {
		r.burstShare = float64(burst) / float64(len(toks)-1)
	}
	return r
}

// referenceReader uses the closed form of a single-server queue: the reader
// finishes chunks 0..i-1 at max over j<i of (a_j + tokens of chunks j..i-1 /
// rate). A chunk is outpaced when the reader has not finished the chunks of
// earlier display updates (an update starts at an arrival at least one Frame
// after the previous update's start) by the time it arrives.
func referenceReader(tl []arrival, cfg perceive.Config) (share float64, lag time.Duration) {
	rate := cfg.ReadingRate()
	frame := cfg.Normalized().Frame
	finish := func(i int) float64 { // time the reader finishes chunks 0..i-1
		best := math.Inf(-1)
		for j := 0; j < i; j++ {
			n := 0
			for k := j; k < i; k++ {
				n += tl[k].tokens
			}
			best = math.Max(best, tl[j].at.Seconds()+float64(n)/rate)
		}
		return best
	}
	// updateStart[i] is the index of the first chunk of chunk i's update.
	updateStart := make([]int, len(tl))
	for i := range tl {
		if i > 0 && tl[i].at-tl[updateStart[i-1]].at < frame {
			updateStart[i] = updateStart[i-1]
		} else {
			updateStart[i] = i
		}
	}
	out, total := 0, 0
	for i, a := range tl {
		total += a.tokens
		if s := updateStart[i]; s > 0 && finish(s) > a.at.Seconds() {
			out += a.tokens
		}
	}
	if total > 0 {
		share = float64(out) / float64(total)
	}
	if l := finish(len(tl)) - tl[len(tl)-1].at.Seconds(); l > 0 {
		lag = time.Duration(math.Round(l * 1e9))
	}
	return share, lag
}

type refRender struct {
	ttfv, ttlv float64 // seconds
	pause      float64
	pauses     int
	tps        float64
	rate       float64
}

// referenceSmooth simulates the smoothing renderer forward in small time
// steps (split at arrivals), revealing rate*h characters per step, instead of
// jumping from event to event as the Tracker does.
func referenceSmooth(tl []arrival, cfg perceive.Config, dt float64) refRender {
	c := cfg.Normalized()
	P := max(c.PlayoutBuffer.Seconds(), 0)
	J, ST := c.JankThreshold.Seconds(), c.StallThreshold.Seconds()
	a0 := tl[0].at.Seconds()
	S := a0 + P
	var received, revealed, firstInstant, rate float64
	var tokens, chars int
	for _, a := range tl {
		tokens += a.tokens
		chars += a.chars
		if a.at == tl[0].at {
			firstInstant += float64(a.chars)
		}
	}
	var out refRender
	out.ttfv = S
	shown := false
	var firstChars, lastVisible float64
	next := 0
	t := a0
	for {
		// deliver arrivals due at t, re-estimating the rate after each
		for next < len(tl) && tl[next].at.Seconds() <= t {
			a := tl[next]
			if shown && revealed >= received && a.at.Seconds() > S {
				// text has been still since lastVisible
				if still := t - lastVisible; still > J {
					out.pause += still
					if still > ST {
						out.pauses++
					}
				}
			}
			received += float64(a.chars)
			since := a.at.Seconds() - a0
			if c.RevealRate > 0 {
				rate = c.RevealRate
			} else if since > 0 {
				after := 0.0
				for _, b := range tl[:next+1] {
					if b.at != tl[0].at {
						after += float64(b.chars)
					}
				}
				rate = after / since
			}
			next++
		}
		if next == len(tl) && revealed >= received {
			break
		}
		h := dt
		if next < len(tl) {
			h = math.Min(h, tl[next].at.Seconds()-t)
		}
		if t < S {
			h = math.Min(h, S-t)
		}
		if t >= S && revealed < received {
			if rate == 0 {
				if !shown {
					firstChars = received
				}
				revealed = received
				lastVisible = t
			} else {
				need := (received - revealed) / rate
				if need <= h {
					revealed = received
					lastVisible = t + need
				} else {
					revealed += rate * h
					lastVisible = t + h
				}
			}
			shown = true
		}
		if h <= 0 {
			h = dt
		}
		t += h
	}
	out.ttlv = lastVisible
	out.rate = rate
	if w := out.ttlv - out.ttfv; w > 0 && chars > 0 {
		out.tps = float64(tokens) / float64(chars) * (received - firstChars) / w
	}
	return out
}

// checkAgainstReferences compares a Report with the reference implementations.
func checkAgainstReferences(t *testing.T, tl []arrival, cfg perceive.Config, end time.Duration) perceive.Report {
	t.Helper()
	rep := feed(cfg, tl).Report(end)
	g := referenceGaps(tl, cfg)
	if rep.Stalls != g.stalls || rep.LongStalls != g.longStalls {
		t.Errorf("stalls = %d/%d long, want %d/%d", rep.Stalls, rep.LongStalls, g.stalls, g.longStalls)
	}
	approxDur(t, "LongestGap", rep.LongestGap, g.longest, 0)
	approxDur(t, "StalledTime", rep.StalledTime, g.stalled, 0)
	approxDur(t, "DecodeTime", rep.DecodeTime, g.decode, 0)
	if g.decode > 0 {
		approx(t, "StalledShare", rep.StalledShare, g.stalled.Seconds()/g.decode.Seconds(), 1e-12)
		approx(t, "JankRatio", rep.JankRatio, g.jank.Seconds()/g.decode.Seconds(), 1e-12)
	}
	approx(t, "GapCV", rep.GapCV, g.cv, 1e-9)
	approx(t, "BurstShare", rep.BurstShare, g.burstShare, 1e-12)
	approxDur(t, "NaiveVisibleStallTime", rep.NaiveVisibleStallTime, g.jank, 0)

	share, lag := referenceReader(tl, cfg)
	approx(t, "OutpacedReaderShare", rep.OutpacedReaderShare, share, 1e-12)
	approxDur(t, "ReadingLag", rep.ReadingLag, lag, time.Microsecond)

	if cfg.Normalized().Render == perceive.Smooth {
		ref := referenceSmooth(tl, cfg, 0.01)
		approxDur(t, "TimeToFirstVisible", rep.TimeToFirstVisible, time.Duration(math.Round(ref.ttfv*1e9)), time.Microsecond)
		approxDur(t, "TimeToLastVisible", rep.TimeToLastVisible, time.Duration(math.Round(ref.ttlv*1e9)), time.Microsecond)
		approxDur(t, "VisibleStallTime", rep.VisibleStallTime, time.Duration(math.Round(ref.pause*1e9)), time.Microsecond)
		if rep.VisibleStalls != ref.pauses {
			t.Errorf("VisibleStalls = %d, want %d", rep.VisibleStalls, ref.pauses)
		}
		approx(t, "PerceivedTPS", rep.PerceivedTPS, ref.tps, 1e-6*math.Max(1, ref.tps))
		approx(t, "RevealRate", rep.RevealRate, ref.rate, 1e-9*math.Max(1, ref.rate))
	}
	checkInvariants(t, rep)
	return rep
}

// checkInvariants holds for every Report, whatever the input.
func checkInvariants(t *testing.T, r perceive.Report) {
	t.Helper()
	for name, v := range map[string]float64{
		"StalledShare": r.StalledShare, "JankRatio": r.JankRatio, "BurstShare": r.BurstShare,
		"VisibleStallShare": r.VisibleStallShare, "NaiveVisibleStallShare": r.NaiveVisibleStallShare,
		"OutpacedReaderShare": r.OutpacedReaderShare,
	} {
		if math.IsNaN(v) || v < 0 || v > 1+1e-9 {
			t.Errorf("%s = %v, want within [0, 1]", name, v)
		}
	}
	for name, v := range map[string]float64{
		"GapCV": r.GapCV, "PerceivedTPS": r.PerceivedTPS, "NaivePerceivedTPS": r.NaivePerceivedTPS,
		"RevealRate": r.RevealRate, "ReadingRate": r.ReadingRate,
	} {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			t.Errorf("%s = %v, want finite and >= 0", name, v)
		}
	}
	if r.LongStalls > r.Stalls {
		t.Errorf("LongStalls %d > Stalls %d", r.LongStalls, r.Stalls)
	}
	if r.JankRatio+1e-12 < r.StalledShare {
		t.Errorf("JankRatio %v < StalledShare %v", r.JankRatio, r.StalledShare)
	}
	if r.StalledTime > r.DecodeTime || r.NaiveVisibleStallTime > r.DecodeTime {
		t.Errorf("stalled %v / jank %v exceed decode time %v", r.StalledTime, r.NaiveVisibleStallTime, r.DecodeTime)
	}
	if r.Arrivals > 0 {
		if r.TimeToFirstVisible < r.FirstArrival || r.TimeToLastVisible < r.TimeToFirstVisible {
			t.Errorf("visible window [%v, %v] vs first arrival %v", r.TimeToFirstVisible, r.TimeToLastVisible, r.FirstArrival)
		}
		if r.VisibleStallTime > r.TimeToLastVisible-r.TimeToFirstVisible+time.Microsecond {
			t.Errorf("VisibleStallTime %v exceeds the visible window", r.VisibleStallTime)
		}
		if r.LastArrival < r.FirstArrival || r.DecodeTime != r.LastArrival-r.FirstArrival {
			t.Errorf("arrivals [%v, %v], decode %v", r.FirstArrival, r.LastArrival, r.DecodeTime)
		}
	}
}

func secs(s float64) time.Duration { return time.Duration(math.Round(s * 1e9)) }
