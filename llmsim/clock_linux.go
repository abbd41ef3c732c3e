//go:build linux

package llmsim

import (
	"syscall"
	"time"
)

// fineSleep sleeps d in a nanosleep system call (it may return early on a
// signal; the caller loops).
func fineSleep(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	_ = syscall.Nanosleep(&ts, nil)
}
