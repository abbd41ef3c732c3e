package stats

import (
	"math"
	"sync"
	"time"
)

// DefaultWindowWidth and DefaultWindowSlices are what NewWindow uses for a
// width <= 0 or a slice count <= 0.
const (
	DefaultWindowWidth  = time.Minute
	DefaultWindowSlices = 6
)

// MaxWindowSlices caps the number of slices of a Window (each is a Sketch).
const MaxWindowSlices = 1024

// Window is a sketch of the values recorded during roughly the last width of
// time, for live dashboards ("P95 over the last 5 minutes"). Time is split
// into slices of width/slices, aligned on the moment the Window was created;
// the Window keeps a ring of one Sketch per slice and forgets a slice when
// its ring position is reused.
//
// Granularity: a Snapshot holds the current, partial slice and the slices-1
// before it, so a value stays visible for at least width-width/slices and at
// most width after it was recorded; never longer. More slices give a smoother
// window at the cost of one Sketch each.
//
// Time comes from the injected clock and is measured with time.Time.Sub, so
// the monotonic reading of time.Now is used when present. Add reads the clock
// on every call; a caller that already holds a timestamp (a meter stamps
// every chunk) saves that read with AddAt.
//
// All methods are safe for concurrent use; they share one mutex, held for
// one Sketch.Add (or, in Snapshot, for merging the slices). The zero Window is
// not usable; create one with NewWindow.
type Window struct {
	now   func() time.Time
	start time.Time
	slice time.Duration

	mu     sync.Mutex
	latest int64 // highest slice number seen
	ring   []windowSlot
}

type windowSlot struct {
	epoch int64 // slice number the sketch holds; math.MinInt64 when unused
	s     Sketch
}

// NewWindow returns an empty window over the last width, split into slices
// sub-windows, reading time from now (nil means time.Now). width <= 0 means
// DefaultWindowWidth, slices <= 0 means DefaultWindowSlices, and slices is
// capped at MaxWindowSlices and at width in nanoseconds. Its sketches have
// DefaultRelativeAccuracy.
func NewWindow(width time.Duration, slices int, now func() time.Time) *Window {
	if now == nil {
		now = time.Now
	}
	if width <= 0 {
		width = DefaultWindowWidth
	}
	if slices <= 0 {
		slices = DefaultWindowSlices
	}
	slices = min(slices, MaxWindowSlices)
	if int64(slices) > int64(width) {
		slices = int(width)
	}
	w := &Window{
		now:    now,
		start:  now(),
		slice:  width / time.Duration(slices),
		latest: math.MinInt64,
		ring:   make([]windowSlot, slices),
	}
	for i := range w.ring {
		w.ring[i].epoch = math.MinInt64
		w.ring[i].s.init(DefaultRelativeAccuracy)
	}
	return w
}

// Width returns the span of time the window covers (slices times the slice
// length, which may be a few nanoseconds less than the width asked for).
func (w *Window) Width() time.Duration { return w.slice * time.Duration(len(w.ring)) }

// epoch returns the slice number of t (floor division; negative before the
// window's creation).
func (w *Window) epoch(t time.Time) int64 {
	d := t.Sub(w.start)
	e := int64(d / w.slice)
	if d < 0 && d%w.slice != 0 {
		e--
	}
	return max(e, math.MinInt64+1) // MinInt64 marks unused slots
}

func (w *Window) slot(e int64) *windowSlot {
	n := int64(len(w.ring))
	return &w.ring[((e%n)+n)%n]
}

// Add records v at the current time of the window's clock.
func (w *Window) Add(v float64) { w.AddAt(w.now(), v) }

// AddAt records v as if at time t. A t older than the window as of the
// latest time seen is ignored (no later Snapshot would show it); a t in an
// earlier slice that is still inside the window goes to that slice, so a
// clock that steps back a little loses nothing.
func (w *Window) AddAt(t time.Time, v float64) {
	e := w.epoch(t)
	w.mu.Lock()
	defer w.mu.Unlock()
	if e > w.latest {
		w.latest = e
	} else if uint64(w.latest-e) >= uint64(len(w.ring)) { // exact: latest >= e
		return
	}
	sl := w.slot(e)
	if sl.epoch != e {
		if sl.epoch > e {
			return // the slot already holds a newer slice
		}
		sl.s.Reset()
		sl.epoch = e
	}
	sl.s.Add(v)
}

// Snapshot returns a new Sketch of the values recorded within the window
// ending now, per the window's clock (see Window for the granularity).
func (w *Window) Snapshot() *Sketch { return w.SnapshotAt(w.now()) }

// SnapshotAt returns a new Sketch of the values whose slices lie within the
// window ending at t: the slice containing t and the slices-1 before it.
func (w *Window) SnapshotAt(t time.Time) *Sketch {
	e := w.epoch(t)
	n := uint64(len(w.ring))
	out := NewSketch()
	w.mu.Lock()
	defer w.mu.Unlock()
	for i := range w.ring {
		sl := &w.ring[i]
		if sl.epoch != math.MinInt64 && sl.epoch <= e && uint64(e-sl.epoch) < n {
			_ = out.Merge(&sl.s) // same accuracy by construction
		}
	}
	return out
}

// Reset forgets every value recorded so far.
func (w *Window) Reset() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i := range w.ring {
		w.ring[i].epoch = math.MinInt64
		w.ring[i].s.Reset()
	}
	w.latest = math.MinInt64
}
