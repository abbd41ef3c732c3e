package llmsim

import (
	"context"
	"runtime"
	"time"
)

// Clock is the server's source of time. Now must return times that carry a
// monotonic reading (or come from one consistent fake timeline), and
// SleepUntil blocks until Now() >= t or ctx is done, returning ctx.Err() in
// the latter case. A nil Clock in Config means the real clock. Implementations
// must be safe for concurrent use.
type Clock interface {
	Now() time.Time
	SleepUntil(ctx context.Context, t time.Time) error
}

// Go's timers wake through epoll with millisecond resolution when the
// runtime is idle, so a timer alone is up to ~1 ms late. When few streams are
// generating, the real clock sleeps on a timer until fineWindow before the
// deadline and then in a nanosleep(2) system call for the rest (about 50-100
// µs precise on Linux; it blocks one OS thread for at most fineWindow, which
// is why it is kept for light load: under load the busy runtime checks its
// timers often anyway).
//
// nanosleep itself oversleeps by up to the thread's timer slack (50 µs by
// default), so the fine sleep aims spinLead early and the last stretch is a
// short spin that yields the processor between checks.
const (
	fineWindow    = 1100 * time.Microsecond
	fineMaxActive = 4
	spinLead      = 60 * time.Microsecond
)

// realClock uses time.Now (monotonic) and timers, plus the fine final sleep
// while fine() reports light load.
type realClock struct {
	fine func() bool
}

func (c realClock) Now() time.Time { return time.Now() }

func (c realClock) SleepUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err()
	}
	fine := c.fine != nil && c.fine()
	if coarse := d; !fine || coarse > fineWindow {
		if fine {
			coarse -= fineWindow
		}
		tm := time.NewTimer(coarse)
		select {
		case <-tm.C:
		case <-ctx.Done():
			tm.Stop()
			return ctx.Err()
		}
	}
	if fine {
		for r := time.Until(t) - spinLead; r > 0; r = time.Until(t) - spinLead {
			fineSleep(r)
		}
		for time.Now().Before(t) {
			runtime.Gosched()
		}
	}
	return nil
}
