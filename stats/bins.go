package stats

import "math"

// binStore holds the bin counts of one sign of a Sketch: a dense array of
// counts for consecutive bin indexes, offset, offset+1, and so on, which folds
// its lowest bins together once the counted bins would span more than the
// sketch's bin limit (a "collapsing lowest" dense store, as in DDSketch).
//
// Counts are uint32, half the memory of the float64 counts of sketches-go's
// stores (see the package documentation for the measurements). A count that
// would pass math.MaxUint32 widens the whole store, once, to uint64 counts:
// n32 becomes nil and n64 takes over, so counts stay exact. A sketch's
// total count is an int64, so uint64 bins cannot overflow.
//
// The array covers at most limit bins, so that the bins counted through the
// fast path (an index inside the array) can never span more than limit.
// Once collapsed, the array starts at the floor: the lowest bin kept, which
// also counts every value below it; indexes below the floor are clamped
// onto it, so they never land in the array by themselves.
//
// The result does not depend on the order of the values or merges: with M
// the highest bin index counted, bins below M-limit+1 are folded into bin
// M-limit+1, and none are folded while the counted bins span at most limit.
// So merging two stores gives exactly the store of all their values.
//
// The zero binStore is empty and allocates on its first count.
type binStore struct {
	n32       []uint32 // counts of bins offset..offset+len-1, until one overflows
	n64       []uint64 // the same after the first overflow; n32 is then nil
	offset    int      // bin index of element 0
	total     uint64   // sum of the counts
	collapsed bool     // bins were folded: offset is the floor
}

// minSlack is the least number of bins a growing store adds beyond those it
// needs; a store also adds an eighth of its span, so that growing stays
// amortized O(1) at fine accuracies, where the bin limit reaches 205k.
const minSlack = 32

// inc counts one value in bin i if that is quick: i lies inside a narrow
// array and its count does not overflow. It is the hot path of Sketch.Add,
// small enough to be inlined; when it returns false, add does the rest.
func (b *binStore) inc(i int) bool {
	j := uint(i - b.offset)
	if j >= uint(len(b.n32)) || b.n32[j] == math.MaxUint32 {
		return false
	}
	b.n32[j]++
	b.total++
	return true
}

// add counts n values in bin i, growing, shifting, folding or widening the
// store as needed.
func (b *binStore) add(i int, n uint64, limit int) {
	if n == 0 {
		return
	}
	if !b.collapsed || i >= b.offset {
		b.reserve(i, i, limit, true)
	}
	b.addAt(max(i-b.offset, 0), n) // below the floor: counted in the floor bin
}

// addAt adds n to the count of array element j, which must exist; it widens
// the store if the count would pass math.MaxUint32.
func (b *binStore) addAt(j int, n uint64) {
	if b.n64 == nil {
		if c := uint64(b.n32[j]) + n; c <= math.MaxUint32 && c >= n {
			b.n32[j] = uint32(c)
			b.total += n
			return
		}
		b.widen()
	}
	b.n64[j] += n
	b.total += n
}

// widen switches the store to uint64 counts.
func (b *binStore) widen() {
	if b.n64 != nil {
		return
	}
	w := allocBins[uint64](len(b.n32))[:len(b.n32)]
	for j, c := range b.n32 {
		w[j] = uint64(c)
	}
	b.n64, b.n32 = w, nil
}

// length returns the number of bins the array covers.
func (b *binStore) length() int {
	if b.n64 != nil {
		return len(b.n64)
	}
	return len(b.n32)
}

// at returns the count of array element j.
func (b *binStore) at(j int) uint64 {
	if b.n64 != nil {
		return b.n64[j]
	}
	return uint64(b.n32[j])
}

// span returns the lowest and highest bin indexes with a non-zero count; ok
// is false for an empty store.
func (b *binStore) span() (lo, hi int, ok bool) {
	if b.total == 0 {
		return 0, 0, false
	}
	var first, last int
	if b.n64 != nil {
		first, last = nonZeroSpan(b.n64)
	} else {
		first, last = nonZeroSpan(b.n32)
	}
	return b.offset + first, b.offset + last, true
}

func nonZeroSpan[T uint32 | uint64](c []T) (first, last int) {
	for first < len(c)-1 && c[first] == 0 {
		first++
	}
	last = len(c) - 1
	for last > first && c[last] == 0 {
		last--
	}
	return first, last
}

// reserve makes the array cover bins lo..hi (lo <= hi), except those below
// the floor, together with the bins already counted. If they would span more
// than limit bins, it folds the lowest ones into the floor. It allocates only
// if they do not fit in the array it has; grow adds slack when it does (for
// Add), none when the store was empty (merges and decodes into an empty store
// allocate exactly their span, rounded up to the allocator's size class).
func (b *binStore) reserve(lo, hi, limit int, grow bool) {
	if b.collapsed {
		lo = max(lo, b.offset)
		hi = max(hi, lo)
	}
	old := b.length()
	if lo >= b.offset && hi-b.offset < old {
		return
	}
	empty := true
	if mn, mx, ok := b.span(); ok {
		lo, hi, empty = min(lo, mn), max(hi, mx), false
	}
	floor := lo
	var folded uint64 // the counts of the bins that fold into the floor
	if hi-lo >= limit {
		floor = hi - limit + 1
		b.collapsed = true
		for j := range min(max(floor-b.offset, 0), old) {
			folded += b.at(j)
			if b.n64 != nil {
				b.n64[j] = 0
			} else {
				b.n32[j] = 0
			}
		}
	}
	need := hi - floor + 1
	size := old
	if need > old {
		size = need
		if grow {
			size += minSlack
			if !empty {
				size += need / 8
			}
		}
		size = min(size, limit)
	}
	off := floor // collapsed: the array starts at the floor
	if !b.collapsed {
		off -= (size - need) / 2 // room on both sides
	}
	if size == old {
		if b.n64 != nil {
			shiftBins(b.n64, b.offset-off)
		} else {
			shiftBins(b.n32, b.offset-off)
		}
	} else if b.n64 != nil {
		n := allocBins[uint64](size)
		moveBins(n, b.n64, b.offset-off)
		b.n64 = n[:min(cap(n), limit)]
	} else {
		n := allocBins[uint32](size)
		moveBins(n, b.n32, b.offset-off)
		b.n32 = n[:min(cap(n), limit)]
	}
	b.offset = off
	if folded > 0 {
		b.total -= folded
		b.addAt(floor-off, folded)
	}
}

// allocBins returns a zeroed slice of at least n counts whose capacity fills
// the allocator's size class (append rounds it up), so that the slack the
// allocator would waste anyway is usable and the capacity is what the heap
// holds.
func allocBins[T uint32 | uint64](n int) []T {
	return append([]T(nil), make([]T, n)...)
}

// moveBins copies src[p] to dst[p+d] for every p whose target exists; dst
// must be zero and must have room for every non-zero count.
func moveBins[T uint32 | uint64](dst, src []T, d int) {
	from, to := max(0, -d), min(len(src), len(dst)-d)
	if from < to {
		copy(dst[from+d:], src[from:to])
	}
}

// shiftBins moves c[p] to c[p+d] in place and zeroes the rest; the counts
// shifted out must be zero.
func shiftBins[T uint32 | uint64](c []T, d int) {
	switch {
	case d == 0:
	case d >= len(c) || -d >= len(c):
		clear(c)
	case d > 0:
		copy(c[d:], c)
		clear(c[:d])
	default:
		copy(c, c[-d:])
		clear(c[len(c)+d:])
	}
}

// merge adds the counts of o to b, folding as add would.
func (b *binStore) merge(o *binStore, limit int) {
	lo, hi, ok := o.span()
	if !ok {
		return
	}
	b.reserve(lo, hi, limit, b.total > 0)
	// Element j of o is bin o.offset+j, element j+d of b. Those below b's
	// floor (j+d < 0) fold into it.
	first, last, d := lo-o.offset, hi-o.offset, o.offset-b.offset
	var folded uint64
	for ; first <= last && first+d < 0; first++ {
		folded += o.at(first)
	}
	if folded > 0 {
		b.addAt(0, folded)
	}
	if first <= last && b.n64 == nil && o.n64 == nil {
		n, sum := addNarrow(b.n32[first+d:last+d+1], o.n32[first:last+1])
		b.total += sum
		first += n
	}
	for j := first; j <= last; j++ { // a store is wide, or a count overflows
		if c := o.at(j); c > 0 {
			b.addAt(j+d, c)
		}
	}
}

// addNarrow adds src to dst, element by element, up to the first count that
// would overflow; it returns how many elements it added and their sum.
func addNarrow(dst, src []uint32) (n int, sum uint64) {
	dst = dst[:len(src)]
	for k, c := range src {
		x := dst[k] + c
		if x < c {
			return k, sum
		}
		dst[k] = x
		sum += uint64(c)
	}
	return len(src), sum
}

// reset empties the store, keeping its array for reuse.
func (b *binStore) reset() {
	clear(b.n32)
	clear(b.n64)
	b.total = 0
	b.collapsed = false
}

// clone returns a copy of b that shares nothing with it, its array fitted to
// the counted bins.
func (b *binStore) clone(limit int) binStore {
	var c binStore
	c.merge(b, limit)
	c.collapsed = b.collapsed
	return c
}

// keyAtRank returns the bin index of the value of rank r (0-based, in
// increasing bin order); the highest counted bin for r >= total.
func (b *binStore) keyAtRank(r uint64) int {
	var j int
	if b.n64 != nil {
		j = rankIndex(b.n64, r)
	} else {
		j = rankIndex(b.n32, r)
	}
	return b.offset + j
}

func rankIndex[T uint32 | uint64](c []T, r uint64) int {
	var n uint64
	last := 0
	for j, x := range c {
		if x == 0 {
			continue
		}
		n += uint64(x)
		if n > r {
			return j
		}
		last = j
	}
	return last
}

// forEach calls f for every non-empty bin in increasing index order.
func (b *binStore) forEach(f func(index int, count uint64)) {
	if b.total == 0 {
		return
	}
	lo, hi, _ := b.span()
	for i := lo; i <= hi; i++ {
		if c := b.at(i - b.offset); c > 0 {
			f(i, c)
		}
	}
}

// bytes returns the capacity of the store's array in bytes.
func (b *binStore) bytes() int { return 4*cap(b.n32) + 8*cap(b.n64) }
