package tokenize

import (
	"encoding/binary"
	"math/bits"
)

// pieceCache remembers the token counts of the short pieces (words, most
// of them) that a Counter counted recently. It is keyed by the piece's bytes
// themselves, so a hit is always exact, and two-way set associative (64 sets
// of 2 entries, the newest first): 2.3 KiB that stay in the core's cache.
// Direct-mapped, two frequent words that share an entry would evict each
// other every time.
//
// Why: in a metered stream the Counter runs between openai-go's JSON
// decoding of one chunk and the next, which leaves the encoding's tables (4
// MB of hash slots, 1-2 MB of token bytes for o200k_base) cold: a rank
// lookup there costs a few cache misses. LLM answers repeat their words
// (the, a, of, to, code identifiers): the cache answers 36-40% of the
// pieces of 4 KB answers of prose and code (TestPieceCacheHitRate), and took
// about 0.012-0.016 off the meter's CPU ratio on its overhead benchmark,
// whose 20-word stream always hits (docs/performance.md, "Meter overhead").
type pieceCache struct {
	key  [pieceCacheSets][2][2]uint64 // the pieces of each set's two ways, see pieceKey
	meta [pieceCacheSets][2]uint16    // len<<8 | tokens; 0 is empty
}

const (
	pieceCacheSets = 64 // a power of two
	pieceCacheMax  = 16 // longest piece cached, in bytes; its count fits in 8 bits
)

// pieceKey packs a piece of 2..16 bytes into two words that, together with
// its length, determine it: the first and last 8 bytes (overlapping when
// shorter than 16), or the first and last 4 when shorter than 8, or each
// byte when shorter than 4.
func pieceKey(b []byte) (k0, k1 uint64) {
	switch n := len(b); {
	case n >= 8:
		return binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[n-8:])
	case n >= 4:
		return uint64(binary.LittleEndian.Uint32(b)) | uint64(binary.LittleEndian.Uint32(b[n-4:]))<<32, 0
	default:
		return uint64(b[0]) | uint64(b[n>>1])<<8 | uint64(b[n-1])<<16, 0
	}
}

// set returns the set of a piece with key k0, k1 and length n.
func (pc *pieceCache) set(k0, k1 uint64, n int) uint64 {
	hi, lo := bits.Mul64(k0^k1*0xc2b2ae3d27d4eb4f^uint64(n), 0x9e3779b97f4a7c15)
	return (hi ^ lo) % pieceCacheSets
}

// lookup returns the cached count of a piece, or -1.
func (pc *pieceCache) lookup(k0, k1 uint64, n int) int {
	i := pc.set(k0, k1, n)
	for w := range 2 {
		if m := pc.meta[i][w]; int(m>>8) == n && pc.key[i][w] == [2]uint64{k0, k1} {
			return int(m & 0xff)
		}
	}
	return -1
}

// count returns the tokens of piece, from the cache when it is there.
func (pc *pieceCache) count(t *rankTable, piece []byte, sc *bpeScratch) int {
	n := len(piece)
	if n <= 1 || n > pieceCacheMax {
		return t.count(piece, sc)
	}
	k0, k1 := pieceKey(piece)
	if c := pc.lookup(k0, k1, n); c >= 0 {
		return c
	}
	c := t.count(piece, sc)
	i := pc.set(k0, k1, n)
	pc.key[i][1], pc.meta[i][1] = pc.key[i][0], pc.meta[i][0] // the older way goes
	pc.key[i][0], pc.meta[i][0] = [2]uint64{k0, k1}, uint16(n)<<8|uint16(c)
	return c
}
