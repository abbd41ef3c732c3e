package stats

import (
	"fmt"
	"strconv"
)

// OtherBucket is what Bucket returns for a LengthBuckets whose Names do not
// match its Edges (a struct literal that NewLengthBuckets would reject).
const OtherBucket = "other"

// LengthBuckets sorts responses by their number of output tokens, so that
// short answers (dominated by time to first token) and long ones (dominated by
// decode speed) are reported apart. Bucket i holds counts in
// [Edges[i-1], Edges[i]): the first bucket everything below Edges[0]
// (negative counts included), the last everything from the last edge up.
// Edges are strictly increasing and len(Names) == len(Edges)+1.
//
// Build one with NewLengthBuckets or DefaultLengthBuckets. The zero value
// behaves like DefaultLengthBuckets. A LengthBuckets is read-only after
// construction and safe for concurrent use; do not modify its slices.
type LengthBuckets struct {
	Edges []int
	Names []string
}

var defaultLengthBuckets = LengthBuckets{
	Edges: []int{100, 500},
	Names: []string{"short", "medium", "long"},
}

// DefaultLengthBuckets returns the default buckets: "short" below 100 output
// tokens, "medium" from 100 to 499, "long" from 500.
func DefaultLengthBuckets() LengthBuckets {
	return LengthBuckets{
		Edges: append([]int(nil), defaultLengthBuckets.Edges...),
		Names: append([]string(nil), defaultLengthBuckets.Names...),
	}
}

// NewLengthBuckets validates and copies edges and names. A nil names
// generates them from the edges: edges [100, 500] give "<100", "100-499",
// ">=500" (a one-token bucket is named by its count alone, like "100"). It
// returns ErrInvalidBuckets if there are no edges, edges are not strictly
// increasing, or names has the wrong length or an empty or repeated name.
func NewLengthBuckets(edges []int, names []string) (LengthBuckets, error) {
	if len(edges) == 0 {
		return LengthBuckets{}, fmt.Errorf("%w: no edges", ErrInvalidBuckets)
	}
	for i := 1; i < len(edges); i++ {
		if edges[i] <= edges[i-1] {
			return LengthBuckets{}, fmt.Errorf("%w: edges not strictly increasing at %d", ErrInvalidBuckets, edges[i])
		}
	}
	if names == nil {
		names = make([]string, 0, len(edges)+1)
		names = append(names, "<"+strconv.Itoa(edges[0]))
		for i := 1; i < len(edges); i++ {
			lo, hi := edges[i-1], edges[i]-1
			if lo == hi {
				names = append(names, strconv.Itoa(lo))
			} else {
				names = append(names, strconv.Itoa(lo)+"-"+strconv.Itoa(hi))
			}
		}
		names = append(names, ">="+strconv.Itoa(edges[len(edges)-1]))
	}
	if len(names) != len(edges)+1 {
		return LengthBuckets{}, fmt.Errorf("%w: %d names for %d edges (want %d)", ErrInvalidBuckets, len(names), len(edges), len(edges)+1)
	}
	seen := make(map[string]bool, len(names))
	for _, n := range names {
		if n == "" || seen[n] {
			return LengthBuckets{}, fmt.Errorf("%w: empty or repeated name %q", ErrInvalidBuckets, n)
		}
		seen[n] = true
	}
	return LengthBuckets{
		Edges: append([]int(nil), edges...),
		Names: append([]string(nil), names...),
	}, nil
}

// Bucket returns the name of the bucket holding a response of tokens output
// tokens. It does not allocate.
func (b LengthBuckets) Bucket(tokens int) string {
	if b.Edges == nil && b.Names == nil {
		b = defaultLengthBuckets
	}
	if len(b.Names) != len(b.Edges)+1 {
		return OtherBucket
	}
	// Few edges: a linear scan beats a binary search.
	i := 0
	for i < len(b.Edges) && tokens >= b.Edges[i] {
		i++
	}
	return b.Names[i]
}
