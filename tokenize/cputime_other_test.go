//go:build !unix

package tokenize_test

import "time"

// cpuTime is not measured on this platform.
func cpuTime() time.Duration { return 0 }
