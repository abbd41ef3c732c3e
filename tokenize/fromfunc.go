package tokenize

// FromFunc adapts a one-shot token counter, such as the length of a Hugging
// Face tokenizer's Encode(text) without special tokens, into a StreamCounter.
// count must be deterministic and must not retain or modify its argument.
//
// Cost: count is not run on the whole text at every chunk, which would take
// quadratic time. The text is cut into lines, at each "\n" that is followed
// by an ASCII letter or digit, and in lines longer than 4 KiB also before a
// space between two ASCII letters or digits (or anywhere after 64 KiB); a
// finished line is counted once, and only the open line, a bounded tail, is
// re-counted. Count runs count on the open line (cached until the next Add).
// Add runs it on the open line up to its last completed word, and only when
// that has grown by a quarter (or 16 bytes) since the last time, so without
// calls to Count the text goes through count a few times in all (the tests
// bound it at 8).
//
// Accuracy: Count equals count(all text) when the tokenizer never merges
// across those cuts, which holds for regex pre-tokenized BPEs (tiktoken,
// GPT-2, Llama 3, Qwen, DeepSeek); SentencePiece tokenizers may differ by
// about a token per cut. Add credits the finished lines and the open line's
// completed words, so credits lag by the word being streamed and up to a
// quarter of the open line; they follow the StreamCounter contract as long
// as a prefix of the open line that ends before a space never counts more
// than it contributes to the final count (true for the same tokenizers).
// Flush credits the rest.
//
// The returned StreamCounter also implements Flusher and is not safe for
// concurrent use. A nil count counts nothing.
func FromFunc(count func(text string) int) StreamCounter {
	if count == nil {
		count = func(string) int { return 0 }
	}
	return &funcCounter{count: count}
}

// Cut rules of funcCounter.
const (
	maxOpenLine = 4 << 10 // longer open lines are also cut between words
	maxOpenText = 64 << 10
	minRecount  = 16
)

// funcCounter is the StreamCounter returned by FromFunc.
type funcCounter struct {
	count    func(string) int
	done     int    // tokens of the finished lines
	open     []byte // the open line
	credited int

	lastWord int // last word start found in open (a space), 0 if none
	scanned  int // open[:scanned] has been searched for word starts

	wordsLen    int // count(open[:wordsLen]) is wordsTokens
	wordsTokens int

	openTokens int // count(open), valid if openValid
	openValid  bool
}

func (f *funcCounter) Add(chunk string) int {
	if len(chunk) == 0 {
		return 0
	}
	from := len(f.open)
	f.open = append(f.open, chunk...)
	f.openValid = false
	if cut := lastLineStart(f.open, max(from-1, 0)); cut > 0 {
		f.finish(cut)
	}
	for i := max(f.scanned, 1); i < len(f.open)-1; i++ {
		if f.open[i] == ' ' && isAlnum(f.open[i-1]) && isAlnum(f.open[i+1]) {
			f.lastWord = i
		}
	}
	f.scanned = max(f.scanned, len(f.open)-1)
	if len(f.open) > maxOpenLine {
		if f.lastWord > 0 {
			f.finish(f.lastWord)
		} else if len(f.open) > maxOpenText {
			f.finish(lastRuneStart(f.open))
		}
	}
	if f.lastWord-f.wordsLen >= max(minRecount, f.wordsLen/4) {
		f.wordsLen, f.wordsTokens = f.lastWord, f.count(string(f.open[:f.lastWord]))
	}
	level := f.done + f.wordsTokens
	if level <= f.credited {
		return 0
	}
	d := level - f.credited
	f.credited = level
	return d
}

// finish counts open[:cut] as finished and keeps the rest open.
func (f *funcCounter) finish(cut int) {
	if cut <= 0 {
		return
	}
	f.done += f.count(string(f.open[:cut]))
	f.open = f.open[:copy(f.open, f.open[cut:])]
	f.lastWord = max(f.lastWord-cut, 0)
	f.scanned = max(f.scanned-cut, 0)
	f.wordsLen, f.wordsTokens = 0, 0
}

func (f *funcCounter) Count() int {
	if !f.openValid {
		f.openTokens = 0
		if len(f.open) > 0 {
			f.openTokens = f.count(string(f.open))
		}
		f.openValid = true
	}
	return f.done + f.openTokens
}

func (f *funcCounter) Flush() int {
	d := f.Count() - f.credited
	if d <= 0 {
		return 0
	}
	f.credited += d
	return d
}

func (f *funcCounter) Reset() {
	*f = funcCounter{count: f.count, open: f.open[:0]}
}

func isAlnum(b byte) bool {
	return b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

// lastLineStart returns the last offset i > from with b[i-1] == '\n' and
// b[i] an ASCII letter or digit, or 0.
func lastLineStart(b []byte, from int) int {
	for i := len(b) - 1; i > from; i-- {
		if b[i-1] == '\n' && isAlnum(b[i]) {
			return i
		}
	}
	return 0
}

// lastRuneStart returns the offset of the last UTF-8 sequence start in b.
func lastRuneStart(b []byte) int {
	i := len(b) - 1
	for i > 0 && b[i]&0xC0 == 0x80 {
		i--
	}
	return i
}
