package tokenize

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"math/bits"
)

// Layout of a rankTable slot (64 bits): rank+1 in the low rankBits (0 marks
// an empty slot), then the token length, then a payload: the token's bytes
// themselves if it has at most 4 (so short keys are matched without touching
// the token arena), else a tag from the hash (so most probes that miss are
// rejected without touching it).
const (
	rankBits    = 18
	rankMask    = 1<<rankBits - 1
	maxRanks    = rankMask - 1
	lenShift    = rankBits
	lenMask     = 0xff
	payShift    = lenShift + 8
	inlineBytes = 4

	// noRank is the rank of a byte string that is not a token.
	noRank = ^uint32(0)

	// maxRankGap bounds the ranks missing between two tokens of a rank file
	// (p50k_base lacks one).
	maxRankGap = 1024
)

// rankTable maps token byte strings to their BPE ranks. It is compact: one
// byte arena holding every token, an offset per rank, an open-addressing
// hash table of 64-bit slots, and a direct table for the 65536 byte pairs
// (about 7 MB for o200k_base). It is immutable once built and safe for
// concurrent use.
type rankTable struct {
	data   []byte   // all tokens, concatenated in rank order
	offs   []uint32 // token r is data[offs[r]:offs[r+1]]
	slots  []uint64 // see the slot layout; 0 is empty
	mask   uint32   // len(slots)-1
	pairs  []uint32 // rank of each 2-byte token, by b0<<8|b1, or noRank
	maxLen int      // longest token, in bytes
}

// hashBytes hashes a short byte string (a wyhash-style multiply-mix; the
// input words are an injective function of b for each length).
func hashBytes(b []byte) uint64 {
	const (
		k0 = 0xa0761d6478bd642f
		k1 = 0xe7037ed1a0b428db
	)
	h := uint64(len(b)) * k0
	for len(b) >= 8 {
		h = mix(h^binary.LittleEndian.Uint64(b), k1)
		b = b[8:]
	}
	var t uint64
	switch n := len(b); {
	case n >= 4:
		t = uint64(binary.LittleEndian.Uint32(b)) | uint64(binary.LittleEndian.Uint32(b[n-4:]))<<32
	case n > 0:
		t = uint64(b[0]) | uint64(b[n>>1])<<8 | uint64(b[n-1])<<16 | 1<<24
	}
	return mix(h^t, k1)
}

func mix(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

// slotKey returns what a slot for b must hold above the rank: its length
// and payload.
func slotKey(b []byte, h uint64) uint64 {
	k := uint64(len(b)) << lenShift
	if len(b) <= inlineBytes {
		var v uint64
		for i, c := range b {
			v |= uint64(c) << (8 * i)
		}
		return k | v<<payShift
	}
	return k | h>>payShift<<payShift
}

// rank returns the rank of token b, or noRank.
func (t *rankTable) rank(b []byte) uint32 {
	if len(b) == 2 {
		return t.pairs[uint32(b[0])<<8|uint32(b[1])]
	}
	h := hashBytes(b)
	key := slotKey(b, h)
	for i := uint32(h) & t.mask; ; i = (i + 1) & t.mask {
		s := t.slots[i]
		if s == 0 {
			return noRank
		}
		if s&^rankMask == key {
			r := uint32(s&rankMask) - 1
			if len(b) <= inlineBytes || string(t.data[t.offs[r]:t.offs[r+1]]) == string(b) {
				return r
			}
		}
	}
}

// parseRanks builds a rankTable from a .tiktoken file: one line per token,
// "<base64 bytes> <rank>", ranks ascending. Ranks may have gaps (p50k_base
// has one); a missing rank is an empty token that never matches.
func parseRanks(file []byte) (*rankTable, error) {
	t := &rankTable{
		data: make([]byte, 0, len(file)/2),
		offs: make([]uint32, 1, 1+len(file)/12),
	}
	line := 0
	for len(file) > 0 {
		line++
		var l []byte
		if i := bytes.IndexByte(file, '\n'); i >= 0 {
			l, file = file[:i], file[i+1:]
		} else {
			l, file = file, nil
		}
		if len(l) == 0 {
			continue
		}
		sp := bytes.IndexByte(l, ' ')
		if sp <= 0 || sp == len(l)-1 {
			return nil, fmt.Errorf("%w: line %d: want \"<base64> <rank>\"", ErrEncodingData, line)
		}
		rank, ok := atou(l[sp+1:])
		if next := len(t.offs) - 1; !ok || rank > maxRanks || int(rank) < next || int(rank) > next+maxRankGap {
			return nil, fmt.Errorf("%w: line %d: bad or out-of-order rank %q", ErrEncodingData, line, l[sp+1:])
		}
		for len(t.offs)-1 < int(rank) { // a gap: empty tokens
			t.offs = append(t.offs, uint32(len(t.data)))
		}
		n := len(t.data)
		t.data = append(t.data, make([]byte, base64.StdEncoding.DecodedLen(sp))...)
		m, err := base64.StdEncoding.Decode(t.data[n:], l[:sp])
		if err != nil || m == 0 {
			return nil, fmt.Errorf("%w: line %d: bad base64 token", ErrEncodingData, line)
		}
		t.data = t.data[:n+m]
		t.offs = append(t.offs, uint32(len(t.data)))
		t.maxLen = max(t.maxLen, m)
	}
	ntok := len(t.offs) - 1
	if ntok == 0 {
		return nil, fmt.Errorf("%w: no tokens", ErrEncodingData)
	}
	size := 1 << bits.Len(uint(ntok*2)) // load factor <= 1/2
	t.slots = make([]uint64, size)
	t.mask = uint32(size - 1)
	t.pairs = make([]uint32, 1<<16)
	for i := range t.pairs {
		t.pairs[i] = noRank
	}
	for r := 0; r < ntok; r++ {
		tok := t.data[t.offs[r]:t.offs[r+1]]
		if len(tok) == 0 {
			continue
		}
		h := hashBytes(tok)
		key := slotKey(tok, h)
		i := uint32(h) & t.mask
		for ; t.slots[i] != 0; i = (i + 1) & t.mask {
			if s := t.slots[i]; s&^rankMask == key {
				if o := uint32(s&rankMask) - 1; string(t.data[t.offs[o]:t.offs[o+1]]) == string(tok) {
					return nil, fmt.Errorf("%w: tokens of rank %d and %d are equal", ErrEncodingData, o, r)
				}
			}
		}
		t.slots[i] = key | uint64(r+1)
		if len(tok) == 2 {
			t.pairs[uint32(tok[0])<<8|uint32(tok[1])] = uint32(r)
		}
	}
	// Byte-level BPE needs every single byte to be a token.
	for b := 0; b < 256; b++ {
		if t.rank([]byte{byte(b)}) == noRank {
			return nil, fmt.Errorf("%w: byte %#02x is not a token", ErrEncodingData, b)
		}
	}
	return t, nil
}

// atou parses a non-empty decimal number.
func atou(b []byte) (uint32, bool) {
	if len(b) == 0 || len(b) > 9 {
		return 0, false
	}
	var v uint32
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + uint32(c-'0')
	}
	return v, true
}
