package tokenize

// Counter counts the tokens of one streamed text exactly, as the chunks
// arrive, with a tiktoken encoding. Count is always exactly the length of
// the encoding's EncodeOrdinary of all text added so far; Add returns the
// tokens credited to each chunk.
//
// How it works: BPE never merges across a pre-token piece, so pieces that
// no future text can change are counted once and forgotten. A piece is final
// when the pre-tokenizer decided it without looking at the end of the text;
// only the trailing piece or two (plus an incomplete UTF-8 sequence) stay
// pending. The pending text is re-split on every Add while it is short, and
// otherwise only after it has grown by a quarter, so a long single piece (a
// run of CJK, base64 or spaces) costs linear time to stream. Long pieces are
// merged in O(n log n).
//
// Text is counted as Go reads it: invalid UTF-8 counts as one U+FFFD per
// invalid byte, as the reference github.com/pkoukk/tiktoken-go does (Python
// tiktoken cannot receive invalid UTF-8). Special-token text such as
// "<|endoftext|>" in model output is ordinary text.
//
// Create a Counter with NewCounter; the zero Counter counts with
// FallbackEncoding (o200k_base). A Counter is for one stream at a time and
// is not safe for concurrent use; the encoding tables it uses are loaded
// once per process and shared safely by all Counters, so a Counter is cheap
// to create (or to Reset and reuse, e.g. from a sync.Pool).
type Counter struct {
	enc  *encoding
	name string

	pending   []byte   // valid UTF-8 from the first piece that is not final
	tail      utf8Tail // incomplete UTF-8 sequence after pending
	final     int      // tokens of the final pieces before pending
	credited  int      // sum of the credits returned by Add and Flush
	lastSplit int      // len(pending) right after it was last split

	pendingTokens int // tokens of pending+tail, valid if pendingValid
	pendingValid  bool
	pendingWord   bool // pending is one word, see isWord

	scratch bpeScratch
	cache   pieceCache // counts of recent short pieces; exact for enc, kept by Reset
}

// rescanBelow is the pending length up to which every Add re-splits the
// pending text, so credits stay timely; above it the pending text is
// re-split once it has grown by a quarter since it was last split.
const rescanBelow = 12

// NewCounter returns a Counter for the named encoding: "cl100k_base",
// "o200k_base", "o200k_harmony", "p50k_base" or "r50k_base" (see Encodings
// and EncodingForModel). An unknown name returns an error wrapping
// ErrUnknownEncoding that lists the known ones. The first Counter of an
// encoding in a process builds its tables from data embedded in the binary
// (tens of milliseconds, a few MB, never a download); later ones share them.
// NewCounter is safe for concurrent use.
func NewCounter(encoding string) (*Counter, error) {
	enc, err := loadEncoding(encoding)
	if err != nil {
		return nil, err
	}
	return &Counter{enc: enc, name: encoding}, nil
}

// Encoding returns the name the Counter was created with.
func (c *Counter) Encoding() string {
	if c.name == "" {
		return FallbackEncoding
	}
	return c.name
}

// ready loads the encoding of a zero Counter; it reports false only if the
// embedded data is broken.
func (c *Counter) ready() bool {
	if c.enc != nil {
		return true
	}
	enc, err := loadEncoding(FallbackEncoding)
	if err != nil {
		return false
	}
	c.enc, c.name = enc, FallbackEncoding
	return true
}

// Add appends the next chunk of streamed text, which may end or start in
// the middle of a multi-byte character, and returns the number of tokens
// credited to it.
//
// Credits are never negative, and their running sum never exceeds Count,
// now or after any later Add; Flush credits the remainder, after which the
// credits sum to Count exactly. Because appending text can change the tokens
// of the piece being streamed, and even lower their number (BPE counts are
// not monotonic), a piece is credited in full only once a later chunk shows
// it is complete; until then the open piece (usually the current word) is
// credited with a lower bound: one token per 128 bytes, at least one. So a
// credit lags by a chunk when a word's tokens arrive in several chunks: when
// every chunk is one token, as OpenAI streams send them, the first chunk of
// a word is credited 1, the chunks continuing it 0, and the chunk after the
// word the rest. On the recorded OpenAI streams of English text 90-95% of
// chunks are credited exactly 1 and no credit lags more than one chunk. Text
// without spaces (CJK) forms one piece per clause, so there credits come
// per clause; a piece longer than 24 bytes is credited once the text has
// also grown by a quarter of the pending length.
//
// Add costs amortised time linear in the chunk and allocates only to grow
// its buffers.
func (c *Counter) Add(chunk string) int {
	if len(chunk) == 0 || !c.ready() {
		return 0
	}
	c.pendingValid = false
	if c.pendingWord && isWord(chunk) {
		// The fast path for the chunks of most streams, one word each: a
		// word ends every encoding's piece before it, so the pending word
		// is final, and the chunk is the new pending piece. The same
		// result as appending and splitting, without running the
		// pre-tokenizer twice over both words.
		c.final += c.cache.count(c.enc.ranks, c.pending, &c.scratch)
		c.pending = append(c.pending[:0], chunk...)
		c.lastSplit = len(c.pending)
	} else {
		c.pending = appendValid(c.pending, &c.tail, chunk)
		if n := len(c.pending); n <= rescanBelow || n-c.lastSplit >= c.lastSplit/4 {
			c.commit()
		}
		// pending starts at a piece boundary, so a pending text that is
		// one word is one piece whatever came before it.
		c.pendingWord = c.tail.n == 0 && isWord(c.pending)
	}
	level := c.final
	if n := len(c.pending) + c.tail.n; n > 0 {
		if m := c.enc.ranks.maxLen; n <= m {
			level++ // the common case, without a division (tens of cycles)
		} else {
			level += (n + m - 1) / m
		}
	}
	if level <= c.credited {
		return 0
	}
	d := level - c.credited
	c.credited = level
	return d
}

// isWord reports whether text is a space followed by an ASCII word of
// lower-case letters, or of one capital and lower-case letters (" the",
// " Hello"). Every encoding's pre-tokenizer makes such a text one piece (a
// letter run with its leading space), and ends the piece before it: a letter
// run stops at the space, and only an apostrophe (a contraction) could
// continue it. Mixed case such as " McDonald" is excluded: o200k_base splits
// it.
func isWord[S string | []byte](text S) bool {
	if len(text) < 2 || text[0] != ' ' {
		return false
	}
	i := 1
	if 'A' <= text[i] && text[i] <= 'Z' {
		i++
		if i == len(text) {
			return false
		}
	}
	for ; i < len(text); i++ {
		if text[i] < 'a' || text[i] > 'z' {
			return false
		}
	}
	return true
}

// commit splits the pending text, counts the pieces that are final and
// drops them from the pending text.
func (c *Counter) commit() {
	s := scanner{buf: c.pending}
	p := 0
	for p < len(c.pending) {
		s.touched = false
		q := s.next(c.enc.pat, p)
		if s.touched {
			break
		}
		c.final += c.cache.count(c.enc.ranks, c.pending[p:q], &c.scratch)
		p = q
	}
	if p > 0 {
		c.pending = c.pending[:copy(c.pending, c.pending[p:])]
	}
	c.lastSplit = len(c.pending)
}

// Count returns the exact number of tokens of all text added so far, as
// EncodeOrdinary would return for it; an incomplete UTF-8 sequence at the
// end counts as if the text ended there (one U+FFFD per byte). It splits and
// merges the pending text, usually the last word, so its cost grows with
// that (O(n log n) for a long single piece); the result is cached until the
// next Add.
func (c *Counter) Count() int {
	if !c.ready() {
		return 0
	}
	if !c.pendingValid {
		n := len(c.pending)
		buf := appendHeldAsInvalid(c.pending, &c.tail)
		c.pendingTokens = c.enc.count(buf, &c.scratch)
		c.pending = buf[:n]
		c.pendingValid = true
	}
	return c.final + c.pendingTokens
}

// Flush credits the tokens that Add has held back, Count minus the sum of
// all credits so far, and returns them; call it when the stream is over.
// Text added after a Flush is credited as usual, but as the last piece may
// then lose tokens that were already credited, the credits can exceed Count
// by those.
func (c *Counter) Flush() int {
	d := c.Count() - c.credited
	if d <= 0 {
		return 0
	}
	c.credited += d
	return d
}

// Reset empties the Counter for a new stream with the same encoding,
// keeping its buffers unless they grew large.
func (c *Counter) Reset() {
	if cap(c.pending) > maxKeptScratch {
		c.pending = nil
	}
	if cap(c.scratch.next) > maxKeptScratch {
		c.scratch = bpeScratch{}
	}
	// The piece cache stays: its entries are exact for the same encoding.
	*c = Counter{enc: c.enc, name: c.name, pending: c.pending[:0], scratch: c.scratch, cache: c.cache}
}
