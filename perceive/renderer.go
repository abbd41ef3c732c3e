package perceive

// renderer simulates a smoothing text renderer analytically, in O(1) time
// and memory per arrival. Characters arrive into a buffer; from start on the
// renderer reveals them at rate characters per second while some are
// unrevealed; when the buffer is empty the text stands still (an underrun)
// until the next arrival. A rate of 0 means "no rate known yet": the renderer
// then shows what it holds at once. All times are seconds from request start.
type renderer struct {
	fixed    float64 // configured rate, 0 = running average
	start    float64 // first arrival + playout buffer
	cursor   float64 // time up to which the renderer has been advanced
	received float64 // characters received
	revealed float64 // characters revealed by cursor
	rate     float64 // current reveal rate, 0 = unknown (reveal at once)

	shown      bool    // some text has become visible
	firstChars float64 // characters that became visible at the first visible instant
	last       float64 // when the latest character became visible

	idle      bool    // buffer ran dry at idleSince and no arrival since
	idleSince float64 // start of the current underrun
	pause     float64 // seconds of underruns longer than jank
	pauses    int     // underruns longer than stall

	jank, stall float64 // thresholds in seconds
}

func (r *renderer) reset(fixed, jank, stall float64) {
	*r = renderer{fixed: fixed, rate: fixed, jank: jank, stall: stall}
}

// begin sets the reveal start for a stream whose first arrival is at first.
func (r *renderer) begin(first, playout float64) {
	r.start = first + playout
	r.cursor = r.start
}

// advance runs the renderer from its cursor to t with the current rate.
func (r *renderer) advance(t float64) {
	if t <= r.cursor {
		return
	}
	if r.revealed < r.received {
		if !r.shown {
			r.shown = true
			if r.rate == 0 {
				r.firstChars = r.received
			}
		}
		if r.rate == 0 {
			r.drainAt(r.cursor)
		} else if end := r.cursor + (r.received-r.revealed)/r.rate; end <= t {
			r.drainAt(end)
		} else {
			r.revealed += r.rate * (t - r.cursor)
			r.last = t
		}
	}
	r.cursor = t
}

func (r *renderer) drainAt(t float64) {
	r.revealed = r.received
	r.last = t
	r.idle = true
	r.idleSince = t
}

// arrive records chars characters arriving at time at; sinceFirst is the
// time since the first arrival's instant and afterFirst the characters
// received after that instant (both including this arrival), for the running
// average rate.
func (r *renderer) arrive(at float64, chars int, sinceFirst, afterFirst float64) {
	r.advance(at)
	if r.idle {
		if u := at - r.idleSince; u > r.jank {
			r.pause += u
			if u > r.stall {
				r.pauses++
			}
		}
		r.idle = false
	}
	r.received += float64(chars)
	if r.fixed == 0 && sinceFirst > 0 {
		r.rate = afterFirst / sinceFirst
	}
}

// finish returns when the last character becomes visible if nothing more
// arrives. It leaves r as it would be at that moment.
func (r *renderer) finish() {
	if r.revealed >= r.received {
		return
	}
	if r.rate == 0 {
		r.advance(r.cursor + 1) // reveals everything at the cursor
		return
	}
	r.advance(r.cursor + (r.received-r.revealed)/r.rate)
}
