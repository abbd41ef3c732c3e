package tpsmeter

import (
	"testing"
	"unsafe"
)

// TestRecorderSize backs the per-stream memory figure in
// docs/performance.md: the Recorder, with its Result and the
// perceived-responsiveness tracker, stays under 2 KiB.
func TestRecorderSize(t *testing.T) {
	n := unsafe.Sizeof(Recorder{})
	t.Logf("unsafe.Sizeof(Recorder{}) = %d bytes", n)
	if n > 2048 {
		t.Errorf("Recorder is %d bytes; docs/performance.md promises under 2 KiB", n)
	}
}
