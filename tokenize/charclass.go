package tokenize

import (
	"sync/atomic"
	"unicode"
	"unicode/utf8"
)

// Character classes used by the pre-tokenizers. A class is a bit set; every
// real rune has at least one of clsL, clsN, clsS or clsP set, so the zero
// class means "end of text".
//
// The definitions follow github.com/dlclark/regexp2, the engine that the
// reference implementation (pkoukk/tiktoken-go) runs the patterns with:
// \s is unicode.IsSpace, \p{..} are the Go unicode tables (Unicode 15.0 in
// Go 1.26).
const (
	clsL  uint8 = 1 << iota // \p{L}
	clsN                    // \p{N}
	clsS                    // \s
	clsNL                   // [\r\n]
	clsU                    // [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}] (o200k "upper")
	clsW                    // [\p{Ll}\p{Lm}\p{Lo}\p{M}] (o200k "lower")
	clsX                    // [^\r\n\p{L}\p{N}]: the optional prefix of a word
	clsP                    // [^\s\p{L}\p{N}]: punctuation, symbols, marks, ...
)

// computeClass classifies one rune from the Unicode tables.
func computeClass(r rune) uint8 {
	var c uint8
	isL := unicode.IsLetter(r)
	isN := unicode.IsNumber(r)
	isS := unicode.IsSpace(r)
	isM := unicode.IsMark(r)
	if isL {
		c |= clsL
	}
	if isN {
		c |= clsN
	}
	if isS {
		c |= clsS
	}
	if r == '\r' || r == '\n' {
		c |= clsNL
	}
	lm := unicode.Is(unicode.Lm, r)
	lo := unicode.Is(unicode.Lo, r)
	if unicode.Is(unicode.Lu, r) || unicode.Is(unicode.Lt, r) || lm || lo || isM {
		c |= clsU
	}
	if unicode.Is(unicode.Ll, r) || lm || lo || isM {
		c |= clsW
	}
	if !isL && !isN && r != '\r' && r != '\n' {
		c |= clsX
	}
	if !isS && !isL && !isN {
		c |= clsP
	}
	return c
}

// asciiClass holds the classes of the ASCII runes.
var asciiClass = func() (t [utf8.RuneSelf]uint8) {
	for r := range t {
		t[r] = computeClass(rune(r))
	}
	return t
}()

// classBlock is the classes of 256 consecutive runes.
type classBlock [256]uint8

// classBlocks caches the classes of non-ASCII runes, one lazily built block
// of 256 runes at a time. Building is idempotent, so racing builders store
// equal blocks and readers never see a partial one.
var classBlocks [(unicode.MaxRune + 1) >> 8]atomic.Pointer[classBlock]

// runeClass returns the class of r, which must be a valid rune.
func runeClass(r rune) uint8 {
	if r < utf8.RuneSelf {
		return asciiClass[r]
	}
	if uint32(r) > unicode.MaxRune {
		r = utf8.RuneError
	}
	b := classBlocks[r>>8].Load()
	if b == nil {
		b = buildClassBlock(r >> 8)
	}
	return b[r&0xff]
}

// buildClassBlock computes and publishes block hi.
func buildClassBlock(hi rune) *classBlock {
	b := new(classBlock)
	for lo := range b {
		b[lo] = computeClass(hi<<8 | rune(lo))
	}
	classBlocks[hi].Store(b)
	return b
}
