//go:build !linux

package llmsim

import "time"

// fineSleep falls back to time.Sleep where nanosleep is not wired up.
func fineSleep(d time.Duration) { time.Sleep(d) }
