package tokenize

import "unicode/utf8"

// Streamed text is made valid UTF-8 the way Go converts a string to []rune,
// which is what the reference implementation does before matching: every
// byte that does not start a valid encoding becomes U+FFFD. An incomplete
// sequence at the end of a chunk is held back until the next chunk shows
// whether it completes.

// replacement is the UTF-8 encoding of U+FFFD.
const replacement = "\uFFFD"

// utf8Tail holds up to three bytes of an incomplete UTF-8 sequence.
type utf8Tail struct {
	b [utf8.UTFMax - 1]byte
	n int
}

// appendValid appends chunk to dst as valid UTF-8, completing the sequence
// held in tail first and holding back an incomplete sequence at its end.
func appendValid(dst []byte, tail *utf8Tail, chunk string) []byte {
	if tail.n > 0 {
		dst, chunk = completeTail(dst, tail, chunk)
	}
	if utf8.ValidString(chunk) {
		return append(dst, chunk...)
	}
	for i := 0; i < len(chunk); {
		if chunk[i] < utf8.RuneSelf {
			j := i + 1
			for j < len(chunk) && chunk[j] < utf8.RuneSelf {
				j++
			}
			dst = append(dst, chunk[i:j]...)
			i = j
			continue
		}
		if !utf8.FullRuneInString(chunk[i:]) {
			tail.n = copy(tail.b[:], chunk[i:])
			return dst
		}
		r, size := utf8.DecodeRuneInString(chunk[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, replacement...)
		} else {
			dst = append(dst, chunk[i:i+size]...)
		}
		i += size
	}
	return dst
}

// completeTail decodes the held bytes followed by the start of chunk, and
// returns the rest of chunk.
func completeTail(dst []byte, tail *utf8Tail, chunk string) ([]byte, string) {
	var tmp [2 * utf8.UTFMax]byte
	n := copy(tmp[:], tail.b[:tail.n])
	t := tmp[:n+copy(tmp[n:], chunk)]
	pos := 0
	for pos < n {
		if !utf8.FullRune(t[pos:]) {
			// Fewer than UTFMax bytes are left, so all of chunk is in t.
			tail.n = copy(tail.b[:], t[pos:])
			return dst, ""
		}
		r, size := utf8.DecodeRune(t[pos:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, replacement...)
		} else {
			dst = append(dst, t[pos:pos+size]...)
		}
		pos += size
	}
	tail.n = 0
	return dst, chunk[pos-n:]
}

// appendHeldAsInvalid appends the held bytes as they would be decoded if the
// text ended now: one U+FFFD per byte.
func appendHeldAsInvalid(dst []byte, tail *utf8Tail) []byte {
	for range tail.n {
		dst = append(dst, replacement...)
	}
	return dst
}
