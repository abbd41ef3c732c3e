package perceive_test

import (
	"reflect"
	"testing"
	"time"
	"unsafe"

	"github.com/tpsmeter/tpsmeter/perceive"
)

// BenchmarkObserve measures the per-chunk cost the meter adds to its hot path.
// The arrival pattern cycles through steady gaps, bursts and a stall so every
// branch runs. It also reports the Tracker's fixed size in bytes.
func BenchmarkObserve(b *testing.B) {
	pattern := []time.Duration{20 * time.Millisecond, 0, time.Millisecond, 150 * time.Millisecond, 30 * time.Millisecond, 1200 * time.Millisecond}
	for _, bc := range []struct {
		name string
		cfg  perceive.Config
	}{
		{"smooth", perceive.Config{}},
		{"smooth-fixed-rate", perceive.Config{RevealRate: 200}},
		{"naive", perceive.Config{Render: perceive.Naive}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var t perceive.Tracker
			t.Reset(bc.cfg)
			at := time.Duration(0)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				at += pattern[i%len(pattern)]
				t.Observe(at, 1+i%3, 4)
			}
			b.ReportMetric(float64(unsafe.Sizeof(t)), "B/tracker")
		})
	}
}

// BenchmarkReport measures the end-of-stream cost (once per request).
func BenchmarkReport(b *testing.B) {
	var t perceive.Tracker
	for i := range 1000 {
		t.Observe(time.Duration(i)*25*time.Millisecond, 1, 4)
	}
	b.ReportAllocs()
	var r perceive.Report
	for b.Loop() {
		r = t.Report(25 * time.Second)
	}
	_ = r
}

// TestTrackerIsFlat checks the memory promise: a Tracker holds no pointers,
// slices, maps or other references, so its memory is its fixed size however
// long the stream is, and copying it copies the whole state.
func TestTrackerIsFlat(t *testing.T) {
	var walk func(reflect.Type, string)
	walk = func(ty reflect.Type, path string) {
		switch ty.Kind() {
		case reflect.Struct:
			for i := range ty.NumField() {
				f := ty.Field(i)
				walk(f.Type, path+"."+f.Name)
			}
		case reflect.Array:
			walk(ty.Elem(), path+"[]")
		case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Chan, reflect.Func, reflect.Interface, reflect.String, reflect.UnsafePointer:
			t.Errorf("%s is a %s: the Tracker must hold no references", path, ty.Kind())
		}
	}
	walk(reflect.TypeOf(perceive.Tracker{}), "Tracker")
	if sz := unsafe.Sizeof(perceive.Tracker{}); sz > 512 {
		t.Errorf("Tracker is %d bytes, want at most 512", sz)
	}
}
