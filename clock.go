package tpsmeter

import "time"

// Clock is the source of time for a [Meter]. The default is the system clock,
// whose readings carry Go's monotonic clock, so every duration the meter
// reports is immune to wall-clock steps. Tests inject a fake clock (see
// package tpsmetertest) to pin every metric definition deterministically.
//
// Implementations must be safe for concurrent use.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// AfterFunc calls f on its own goroutine after d, like time.AfterFunc.
	// The meter uses it only to announce a stall while it is happening.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is the part of *time.Timer the meter uses.
type Timer interface {
	Stop() bool
	Reset(d time.Duration) bool
}

// systemClock is the default Clock.
type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

func (systemClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }
