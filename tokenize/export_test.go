package tokenize

// Test-only access to internals, for the black-box tests in tokenize_test.

// Pieces returns the pre-token pieces of valid UTF-8 text.
func Pieces(encodingName, text string) ([]string, error) {
	enc, err := loadEncoding(encodingName)
	if err != nil {
		return nil, err
	}
	var out []string
	s := scanner{buf: []byte(text)}
	for p := 0; p < len(text); {
		q := s.next(enc.pat, p)
		out = append(out, text[p:q])
		p = q
	}
	return out, nil
}

// Encode returns the token ids of text, encoded in one go, with invalid
// UTF-8 replaced as Counter does.
func Encode(encodingName, text string) ([]int, error) {
	enc, err := loadEncoding(encodingName)
	if err != nil {
		return nil, err
	}
	var tail utf8Tail
	buf := appendHeldAsInvalid(appendValid(nil, &tail, text), &tail)
	var ids []int
	s := scanner{buf: buf}
	for p := 0; p < len(buf); {
		q := s.next(enc.pat, p)
		ids = enc.ranks.appendTokens(ids, buf[p:q])
		p = q
	}
	return ids, nil
}

// CountOneShot counts text in one go, without the streaming machinery.
func CountOneShot(encodingName, text string) (int, error) {
	enc, err := loadEncoding(encodingName)
	if err != nil {
		return 0, err
	}
	var tail utf8Tail
	buf := appendHeldAsInvalid(appendValid(nil, &tail, text), &tail)
	return enc.count(buf, new(bpeScratch)), nil
}

// BuildUncached builds the named encoding's tables from the embedded data,
// bypassing the per-process cache, and returns them (to keep alive).
func BuildUncached(encodingName string) (any, error) {
	src, ok := encodings[encodingName]
	if !ok {
		return nil, ErrUnknownEncoding
	}
	return src.build()
}

// ParseRanks parses .tiktoken data and returns its number of tokens.
func ParseRanks(data []byte) (int, error) {
	t, err := parseRanks(data)
	if err != nil {
		return 0, err
	}
	return len(t.offs) - 1, nil
}

// PieceCacheCheck counts pieces through one fresh piece cache, as a Counter
// does, and returns how many were answered from the cache and how many of
// all the answers differ from the encoding's own count of the piece.
func PieceCacheCheck(encodingName string, pieces []string) (hits, wrong int, err error) {
	enc, err := loadEncoding(encodingName)
	if err != nil {
		return 0, 0, err
	}
	var pc pieceCache
	var sc bpeScratch
	for _, p := range pieces {
		b := []byte(p)
		want := enc.ranks.count(b, &sc)
		if n := len(b); n > 1 && n <= pieceCacheMax {
			k0, k1 := pieceKey(b)
			if pc.lookup(k0, k1, n) >= 0 {
				hits++
			}
		}
		if got := pc.count(enc.ranks, b, &sc); got != want {
			wrong++
		}
	}
	return hits, wrong, nil
}
