// Package tpsmetertest provides a fake clock for deterministic tests of code
// that uses a tpsmeter.Meter.
package tpsmetertest

import (
	"sort"
	"sync"
	"time"

	"github.com/tpsmeter/tpsmeter"
)

var _ tpsmeter.Clock = (*Clock)(nil)

// Clock is a manually advanced clock that implements tpsmeter.Clock. Its zero
// value is not usable; create one with NewClock. It is safe for concurrent use.
// Timers fire synchronously, on the goroutine that calls Advance or Set, in
// the order of their deadlines.
type Clock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
	seq    int
}

// NewClock returns a Clock that reads start until advanced.
func NewClock(start time.Time) *Clock { return &Clock{now: start} }

// Now returns the clock's current time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d (a negative d moves it back, to test
// code against clocks that step backwards) and fires the timers that are due.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	t := c.now.Add(d)
	c.mu.Unlock()
	c.Set(t)
}

// Set moves the clock to t and fires, in deadline order, every timer whose
// deadline is not after t.
func (c *Clock) Set(t time.Time) {
	for {
		c.mu.Lock()
		c.now = t
		var due *fakeTimer
		for _, ft := range c.timers {
			if ft.active && !ft.when.After(t) && (due == nil || ft.when.Before(due.when) || (ft.when.Equal(due.when) && ft.seq < due.seq)) {
				due = ft
			}
		}
		if due == nil {
			c.mu.Unlock()
			return
		}
		due.active = false
		f := due.f
		c.mu.Unlock()
		f()
	}
}

// Pending reports the deadlines of the timers that have not fired yet, earliest first.
func (c *Clock) Pending() []time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []time.Time
	for _, ft := range c.timers {
		if ft.active {
			out = append(out, ft.when)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Before(out[j]) })
	return out
}

// AfterFunc arranges for f to be called once the clock reaches now+d.
func (c *Clock) AfterFunc(d time.Duration, f func()) tpsmeter.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	ft := &fakeTimer{c: c, f: f, when: c.now.Add(d), active: true, seq: c.seq}
	c.timers = append(c.timers, ft)
	return ft
}

type fakeTimer struct {
	c      *Clock
	f      func()
	when   time.Time
	active bool
	seq    int
}

func (t *fakeTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := t.active
	t.active = false
	return was
}

func (t *fakeTimer) Reset(d time.Duration) bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := t.active
	t.active = true
	t.when = t.c.now.Add(d)
	t.c.seq++
	t.seq = t.c.seq
	return was
}
