package tokenize

import "unicode/utf8"

// pattern identifies one of the pre-tokenizer regular expressions of the
// tiktoken encodings. Each is implemented by a hand-written scanner that
// reproduces the leftmost-first, backtracking semantics of the regular
// expression as run by regexp2 (the engine of the reference implementation).
type pattern uint8

const (
	// patGPT2 (r50k_base, p50k_base):
	//	's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
	patGPT2 pattern = iota
	// patCL100K (cl100k_base):
	//	(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
	patCL100K
	// patO200K (o200k_base, o200k_harmony):
	//	[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
	//	|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
	//	|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
	patO200K
)

// scanner splits valid UTF-8 text into pre-token pieces.
//
// Every read goes through at, which records in touched whether the scan of
// the current piece looked at the end of the text. A piece whose scan did
// not touch the end depends only on bytes that are already there, so no
// appended text can change it (nor, therefore, where the next piece starts):
// that is what makes exact incremental counting possible.
type scanner struct {
	buf     []byte
	touched bool
}

// at returns the class and byte length of the rune at offset i, or (0, 0)
// at the end of the text.
func (s *scanner) at(i int) (uint8, int) {
	if i >= len(s.buf) {
		s.touched = true
		return 0, 0
	}
	if b := s.buf[i]; b < utf8.RuneSelf {
		return asciiClass[b], 1
	}
	r, n := utf8.DecodeRune(s.buf[i:])
	return runeClass(r), n
}

// byteAt returns the byte at offset i, or 0 (with touched set) at the end.
func (s *scanner) byteAt(i int) byte {
	if i >= len(s.buf) {
		s.touched = true
		return 0
	}
	return s.buf[i]
}

// next returns the end offset of the piece that starts at p < len(s.buf).
func (s *scanner) next(pat pattern, p int) int {
	switch pat {
	case patCL100K:
		return s.nextCL100K(p)
	case patO200K:
		return s.nextO200K(p)
	default:
		return s.nextGPT2(p)
	}
}

// run returns the end of the run of runes whose class intersects mask,
// starting at i.
func (s *scanner) run(i int, mask uint8) int {
	for {
		for i < len(s.buf) && s.buf[i] < utf8.RuneSelf { // ASCII fast path
			if asciiClass[s.buf[i]]&mask == 0 {
				return i
			}
			i++
		}
		c, n := s.at(i)
		if c&mask == 0 {
			return i
		}
		i += n
	}
}

// digits3 implements \p{N}{1,3} at p, whose rune is known to be a number
// of n bytes.
func (s *scanner) digits3(p, n int) int {
	i := p + n
	for k := 1; k < 3; k++ {
		c, m := s.at(i)
		if c&clsN == 0 {
			break
		}
		i += m
	}
	return i
}

// contraction matches 's|'t|'re|'ve|'m|'ll|'d after an apostrophe; i is the
// offset just past the apostrophe. fold makes it case-insensitive, which is
// exact with ASCII folding: no non-ASCII rune lowers to one of these letters
// (checked by a test). It returns the end of the match or -1.
func (s *scanner) contraction(i int, fold bool) int {
	var f byte
	if fold {
		f = 0x20
	}
	switch s.byteAt(i) | f {
	case 's', 't', 'm', 'd':
		return i + 1
	case 'r', 'v':
		if s.byteAt(i+1)|f == 'e' {
			return i + 2
		}
	case 'l':
		if s.byteAt(i+1)|f == 'l' {
			return i + 2
		}
	}
	return -1
}

// optContraction implements an optional, case-insensitive contraction
// suffix at e.
func (s *scanner) optContraction(e int) int {
	if s.byteAt(e) == '\'' {
		if c := s.contraction(e+1, true); c > 0 {
			return c
		}
	}
	return e
}

// punct implements ` ?[^\s\p{L}\p{N}]+` followed by [\r\n]* (or [\r\n/]*
// when slash is set) at p, whose rune has class c0. It returns -1 when the
// alternative does not match.
func (s *scanner) punct(p int, c0 uint8, slash bool) int {
	start := -1
	if s.buf[p] == ' ' {
		if c1, _ := s.at(p + 1); c1&clsP != 0 {
			start = p + 1
		}
	}
	if start < 0 {
		if c0&clsP == 0 {
			return -1
		}
		start = p
	}
	e := s.run(start, clsP)
	if slash {
		for b := s.byteAt(e); b == '\r' || b == '\n' || b == '/'; b = s.byteAt(e) {
			e++
		}
	} else {
		for b := s.byteAt(e); b == '\r' || b == '\n'; b = s.byteAt(e) {
			e++
		}
	}
	return e
}

// whitespace implements, at p where a run of \s starts, the alternatives
// \s*[\r\n]+ (when newline is set), \s+(?!\S) and \s+.
func (s *scanner) whitespace(p int, newline bool) int {
	i, lastNLEnd, lastStart := p, -1, p
	for {
		c, n := s.at(i)
		if c&clsS == 0 {
			break
		}
		if c&clsNL != 0 {
			lastNLEnd = i + n
		}
		lastStart = i
		i += n
	}
	// \s*[\r\n]+: \s* backtracks to the last newline of the run.
	if newline && lastNLEnd >= 0 {
		return lastNLEnd
	}
	// \s+(?!\S): the whole run at the end of the text, else all but its
	// last rune, if that leaves one.
	if i >= len(s.buf) {
		return i
	}
	if lastStart > p {
		return lastStart
	}
	// \s+
	return i
}

// nextGPT2 scans one piece of patGPT2.
func (s *scanner) nextGPT2(p int) int {
	c0, _ := s.at(p)
	b0 := s.buf[p]
	if b0 == '\'' {
		if e := s.contraction(p+1, false); e > 0 {
			return e
		}
	}
	if b0 == ' ' {
		c1, _ := s.at(p + 1)
		switch {
		case c1&clsL != 0:
			return s.run(p+1, clsL)
		case c1&clsN != 0:
			return s.run(p+1, clsN)
		case c1&clsP != 0:
			return s.run(p+1, clsP)
		}
	}
	switch {
	case c0&clsL != 0:
		return s.run(p, clsL)
	case c0&clsN != 0:
		return s.run(p, clsN)
	case c0&clsP != 0:
		return s.run(p, clsP)
	}
	return s.whitespace(p, false)
}

// nextCL100K scans one piece of patCL100K.
func (s *scanner) nextCL100K(p int) int {
	c0, n0 := s.at(p)
	if s.buf[p] == '\'' {
		if e := s.contraction(p+1, true); e > 0 {
			return e
		}
	}
	// [^\r\n\p{L}\p{N}]?\p{L}+
	if c0&clsX != 0 {
		if c1, _ := s.at(p + n0); c1&clsL != 0 {
			return s.run(p+n0, clsL)
		}
	} else if c0&clsL != 0 {
		return s.run(p, clsL)
	}
	if c0&clsN != 0 {
		return s.digits3(p, n0)
	}
	if e := s.punct(p, c0, false); e >= 0 {
		return e
	}
	return s.whitespace(p, true)
}

// nextO200K scans one piece of patO200K.
func (s *scanner) nextO200K(p int) int {
	c0, n0 := s.at(p)
	// First alternative: X? U* W+ contraction?, trying the optional prefix
	// first, as the backtracking engine does.
	if c0&clsX != 0 {
		if e := s.o200kLower(p + n0); e >= 0 {
			return e
		}
	}
	if c0&(clsU|clsW) != 0 {
		if e := s.o200kLower(p); e >= 0 {
			return e
		}
	}
	// Second alternative: X? U+ W* contraction?
	if c0&clsX != 0 {
		if c1, _ := s.at(p + n0); c1&clsU != 0 {
			return s.o200kUpper(p + n0)
		}
	}
	if c0&clsU != 0 {
		return s.o200kUpper(p)
	}
	if c0&clsN != 0 {
		return s.digits3(p, n0)
	}
	if e := s.punct(p, c0, true); e >= 0 {
		return e
	}
	return s.whitespace(p, true)
}

// o200kLower matches U* W+ contraction? at i, or returns -1.
func (s *scanner) o200kLower(i int) int {
	lastWEnd := -1
	var c uint8
	for {
		var n int
		c, n = s.at(i)
		if c&clsU == 0 {
			break
		}
		if c&clsW != 0 {
			lastWEnd = i + n
		}
		i += n
	}
	if c&clsW != 0 {
		// U* stopped at a rune that is W but not U: W+ runs from here.
		return s.optContraction(s.run(i, clsW))
	}
	// U* backtracks to the last W rune inside the U run; W+ is that rune
	// alone, since the rune after it is not W.
	if lastWEnd < 0 {
		return -1
	}
	return s.optContraction(lastWEnd)
}

// o200kUpper matches U+ W* contraction? at i, whose rune is U.
func (s *scanner) o200kUpper(i int) int {
	return s.optContraction(s.run(s.run(i, clsU), clsW))
}
