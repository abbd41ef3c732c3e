package stats

import (
	"reflect"
	"unsafe"

	"github.com/DataDog/sketches-go/ddsketch"
	"github.com/DataDog/sketches-go/ddsketch/mapping"
	"github.com/DataDog/sketches-go/ddsketch/store"
)

// Footprint returns the bytes a sketch allocates: its structs (rounded up to
// 16 bytes, roughly the allocator's size classes at these sizes) and the
// capacity of both bin arrays. It is deterministic, unlike heap statistics.
func Footprint(s *Sketch) int {
	round := func(n uintptr) int { return int((n + 15) &^ 15) }
	n := round(unsafe.Sizeof(*s))
	if s.dd == nil {
		return n
	}
	n += round(unsafe.Sizeof(ddsketch.DDSketch{}))
	n += round(unsafe.Sizeof(mapping.CubicallyInterpolatedMapping{}))
	for _, st := range []*store.CollapsingLowestDenseStore{s.pos, s.neg} {
		n += round(unsafe.Sizeof(*st))
		bins := reflect.ValueOf(st).Elem().FieldByName("bins")
		if !bins.IsValid() || bins.Kind() != reflect.Slice {
			panic("stats.Footprint: sketches-go's dense store no longer has a bins slice; update export_test.go")
		}
		n += 8 * bins.Cap()
	}
	return n
}
