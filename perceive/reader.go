package perceive

import "time"

// reader models a person who starts reading at the first visible arrival and
// reads rate tokens per second whenever unread text is on screen.
//
// Arrivals are grouped into display updates: an update begins with an
// arrival at least one frame after the previous update began and takes in
// every arrival less than one frame after that. A chunk outpaces the reader
// when it arrives before the reader has finished all earlier updates; all its
// tokens count as outpaced. So packing tokens into chunks, or chunks into one
// network read, does not by itself outpace the reader; a backlog does.
type reader struct {
	rate         float64       // tokens per second, > 0
	frame        time.Duration // display frame
	done         float64       // seconds: when the reader finishes everything delivered so far
	update       time.Duration // start of the current display update
	doneBefore   float64       // when the reader finishes everything before the current update
	started      bool
	outpaced     int  // tokens of chunks that arrived while the reader was behind
	lastOutpaced bool // whether the latest chunk was outpaced
}

// arrive records a chunk of n tokens arriving at time at (secs in seconds).
func (r *reader) arrive(at time.Duration, secs float64, n int) {
	if !r.started || at-r.update >= r.frame {
		r.started = true
		r.update = at
		r.doneBefore = r.done
	}
	r.lastOutpaced = r.doneBefore > secs
	if r.lastOutpaced {
		r.outpaced += n
	}
	if secs > r.done {
		r.done = secs
	}
	r.done += float64(n) / r.rate
}

// credit adds n tokens to the latest chunk (a token count that lagged behind
// its text).
func (r *reader) credit(n int) {
	if r.lastOutpaced {
		r.outpaced += n
	}
	r.done += float64(n) / r.rate
}
