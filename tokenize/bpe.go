package tokenize

// Byte pair encoding of one pre-token piece, as tiktoken does it: start from
// single bytes and repeatedly merge the adjacent pair whose concatenation has
// the lowest rank (the leftmost one on ties) until no adjacent pair is a
// token. Only the number of resulting tokens is needed for counting; the
// boundaries are kept so tests can compare token ids with the reference.

// smallPiece is the longest piece merged by the simple quadratic loop; longer
// pieces use a heap (O(n log n)).
const smallPiece = 16

// bpeScratch holds reusable buffers for merging long pieces.
type bpeScratch struct {
	next, prev, pos []int32
	rank            []uint32
	heap            []uint64
}

// maxKeptScratch bounds the scratch a Counter keeps across Reset, in bytes
// of merged text.
const maxKeptScratch = 64 << 10

// count returns the number of tokens of piece.
func (t *rankTable) count(piece []byte, sc *bpeScratch) int {
	switch {
	case len(piece) <= 1:
		return len(piece)
	case len(piece) <= t.maxLen && t.rank(piece) != noRank:
		return 1
	case len(piece) <= smallPiece:
		return t.mergeSmall(piece, nil)
	default:
		return t.mergeLarge(piece, sc, nil)
	}
}

// appendTokens appends the ranks of the tokens of piece to dst.
func (t *rankTable) appendTokens(dst []int, piece []byte) []int {
	if len(piece) == 0 {
		return dst
	}
	if r := t.rank(piece); r != noRank {
		return append(dst, int(r))
	}
	var starts []int32
	if len(piece) <= smallPiece {
		t.mergeSmall(piece, &starts)
	} else {
		t.mergeLarge(piece, new(bpeScratch), &starts)
	}
	for i, s := range starts {
		e := int32(len(piece))
		if i+1 < len(starts) {
			e = starts[i+1]
		}
		dst = append(dst, int(t.rank(piece[s:e])))
	}
	return dst
}

// mergeSmall merges a piece of at most smallPiece bytes and returns the
// number of tokens; if starts is not nil it receives their start offsets.
func (t *rankTable) mergeSmall(piece []byte, starts *[]int32) int {
	var (
		start [smallPiece + 1]int32 // start[i] is where part i begins; start[m] = len(piece)
		rank  [smallPiece]uint32    // rank[i] is the rank of part i + part i+1
	)
	n := len(piece)
	for i := 0; i <= n; i++ {
		start[i] = int32(i)
	}
	for i := 0; i < n-1; i++ {
		rank[i] = t.rank(piece[i : i+2])
	}
	m := n // number of parts
	for m > 1 {
		best, bi := noRank, -1
		for i, r := range rank[:m-1] {
			if r < best {
				best, bi = r, i
			}
		}
		if bi < 0 {
			break
		}
		// Merge parts bi and bi+1.
		copy(start[bi+1:m], start[bi+2:m+1])
		if bi+2 < m {
			copy(rank[bi+1:m-2], rank[bi+2:m-1])
		}
		m--
		if bi+1 < m {
			rank[bi] = t.rank(piece[start[bi]:start[bi+2]])
		} else {
			rank[bi] = noRank
		}
		if bi > 0 {
			rank[bi-1] = t.rank(piece[start[bi-1]:start[bi+1]])
		}
	}
	if starts != nil {
		*starts = append((*starts)[:0], start[:m]...)
	}
	return m
}

// mergeLarge merges a piece of any length in O(n log n). Each part whose
// pair with the next part is a token sits in an indexed min-heap keyed by
// (rank, position), which yields exactly the pair the simple loop would
// pick: the lowest rank, leftmost first. It uses 24 bytes of scratch per
// byte of piece.
func (t *rankTable) mergeLarge(piece []byte, sc *bpeScratch, starts *[]int32) int {
	n := len(piece)
	if cap(sc.next) < n {
		sc.next = make([]int32, n)
		sc.prev = make([]int32, n)
		sc.rank = make([]uint32, n)
		sc.heap = make([]uint64, 0, n)
		sc.pos = make([]int32, n)
	}
	h := heap{keys: sc.heap[:0], pos: sc.pos[:n]}
	next, prev, rank := sc.next[:n], sc.prev[:n], sc.rank[:n]
	for i := range n {
		next[i] = int32(i + 1)
		prev[i] = int32(i - 1)
		rank[i] = noRank
		h.pos[i] = -1
	}
	for i := 0; i < n-1; i++ {
		if r := t.rank(piece[i : i+2]); r != noRank {
			rank[i] = r
			h.pos[i] = int32(len(h.keys))
			h.keys = append(h.keys, uint64(r)<<32|uint64(i))
		}
	}
	for i := len(h.keys)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
	m := n
	for len(h.keys) > 0 {
		i := int32(uint32(h.keys[0]))
		j := next[i] // the part absorbed by i
		k := next[j] // the part after them, or n
		next[i] = k
		if int(k) < n {
			prev[k] = i
		}
		if h.pos[j] >= 0 {
			h.remove(h.pos[j])
		}
		m--
		r := noRank
		if int(k) < n {
			r = t.rank(piece[i:next[k]])
		}
		rank[i] = r
		h.set(i, r)
		if p := prev[i]; p >= 0 {
			rank[p] = t.rank(piece[p:k])
			h.set(p, rank[p])
		}
	}
	sc.heap = h.keys
	if starts != nil {
		s := (*starts)[:0]
		for i := int32(0); int(i) < n; i = next[i] {
			s = append(s, i)
		}
		*starts = s
	}
	return m
}

// heap is an indexed min-heap of parts keyed by rank<<32 | part, so the
// order is by rank, then position.
type heap struct {
	keys []uint64 // the heap
	pos  []int32  // index of each part in keys, or -1
}

func (h *heap) swap(a, b int) {
	h.keys[a], h.keys[b] = h.keys[b], h.keys[a]
	h.pos[uint32(h.keys[a])] = int32(a)
	h.pos[uint32(h.keys[b])] = int32(b)
}

func (h *heap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if h.keys[p] <= h.keys[i] {
			return
		}
		h.swap(i, p)
		i = p
	}
}

func (h *heap) down(i int) {
	n := len(h.keys)
	for {
		c := 2*i + 1
		if c >= n {
			return
		}
		if r := c + 1; r < n && h.keys[r] < h.keys[c] {
			c = r
		}
		if h.keys[i] <= h.keys[c] {
			return
		}
		h.swap(i, c)
		i = c
	}
}

// remove deletes the element at heap index i.
func (h *heap) remove(i int32) {
	last := len(h.keys) - 1
	part := uint32(h.keys[i])
	if int(i) != last {
		h.swap(int(i), last)
	}
	h.keys = h.keys[:last]
	h.pos[part] = -1
	if int(i) < last {
		h.down(int(i))
		h.up(int(i))
	}
}

// set changes the rank of part to r, adding it to or removing it from the
// heap.
func (h *heap) set(part int32, r uint32) {
	i := h.pos[part]
	switch {
	case i < 0 && r != noRank:
		h.pos[part] = int32(len(h.keys))
		h.keys = append(h.keys, uint64(r)<<32|uint64(part))
		h.up(len(h.keys) - 1)
	case i >= 0 && r == noRank:
		h.remove(i)
	case i >= 0:
		h.keys[i] = uint64(r)<<32 | uint64(part)
		h.down(int(i))
		h.up(int(i))
	}
}
