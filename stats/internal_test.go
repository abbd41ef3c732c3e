package stats

import (
	"testing"
	"unsafe"
)

// The shard padding in aggregate.go assumes this size.
func TestSketchSizeConstant(t *testing.T) {
	if got := unsafe.Sizeof(Sketch{}); got != sketchSize && unsafe.Sizeof(uintptr(0)) == 8 {
		t.Fatalf("unsafe.Sizeof(Sketch{}) = %d, sketchSize = %d: update the constant", got, sketchSize)
	}
	if got := unsafe.Sizeof(shard{}); got%64 != 0 {
		t.Fatalf("shard is %d bytes, not a whole number of cache lines", got)
	}
}

func TestMaxBinsFor(t *testing.T) {
	for _, tc := range []struct {
		acc      float64
		min, max int
	}{
		{0.5, MaxBins, MaxBins},
		{0.02, MaxBins, MaxBins},
		{DefaultRelativeAccuracy, MaxBins, MaxBins},
		{0.001, 20000, 21000}, // ten times finer: about ten times the bins
		{MinRelativeAccuracy, 200000, 210000},
	} {
		if got := maxBinsFor(tc.acc); got < tc.min || got > tc.max {
			t.Errorf("maxBinsFor(%v) = %d, want in [%d, %d]", tc.acc, got, tc.min, tc.max)
		}
	}
}
