package stats

import (
	"unsafe"

	"github.com/DataDog/sketches-go/ddsketch/mapping"
)

// Footprint returns the bytes a sketch allocates: its struct (rounded up to
// 16 bytes, which is the allocator's size class at this size), its index
// mapping unless it is the one shared by every sketch with
// DefaultRelativeAccuracy, and the capacity of both bin arrays. It is
// deterministic, unlike heap statistics.
func Footprint(s *Sketch) int {
	round := func(n uintptr) int { return int((n + 15) &^ 15) }
	n := round(unsafe.Sizeof(*s))
	if s.m != nil && s.m != defaultMapping {
		n += round(unsafe.Sizeof(mapping.CubicallyInterpolatedMapping{}))
	}
	return n + s.pos.bytes() + s.neg.bytes()
}
