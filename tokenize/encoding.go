package tokenize

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/pkoukk/tiktoken-go-loader/assets"
)

// encoding is a loaded tiktoken encoding: a pre-tokenizer pattern and the
// BPE rank table. It is immutable and shared by all Counters.
type encoding struct {
	pat   pattern
	ranks *rankTable
}

// encodingSource describes where an encoding's data comes from. Its table
// is built on first use, once per process, from the files embedded by
// github.com/pkoukk/tiktoken-go-loader (nothing is ever downloaded).
type encodingSource struct {
	file string // asset file name
	pat  pattern

	once sync.Once
	enc  *encoding
	err  error
}

// The sources; o200k_harmony uses the o200k_base ranks and pattern (it only
// adds special tokens, and special-token text is counted as ordinary text).
var (
	srcCL100K = &encodingSource{file: "cl100k_base.tiktoken", pat: patCL100K}
	srcO200K  = &encodingSource{file: "o200k_base.tiktoken", pat: patO200K}
	srcP50K   = &encodingSource{file: "p50k_base.tiktoken", pat: patGPT2}
	srcR50K   = &encodingSource{file: "r50k_base.tiktoken", pat: patGPT2}
)

// encodings maps each known encoding name to its source.
var encodings = map[string]*encodingSource{
	"cl100k_base":   srcCL100K,
	"o200k_base":    srcO200K,
	"o200k_harmony": srcO200K,
	"p50k_base":     srcP50K,
	"r50k_base":     srcR50K,
}

// Encodings returns the names of the known encodings, sorted. The caller
// owns the returned slice.
func Encodings() []string {
	names := make([]string, 0, len(encodings))
	for name := range encodings {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// loadEncoding returns the shared encoding called name, building it on first
// use.
func loadEncoding(name string) (*encoding, error) {
	src, ok := encodings[name]
	if !ok {
		return nil, fmt.Errorf("%w %q (known: %s)", ErrUnknownEncoding, name, strings.Join(Encodings(), ", "))
	}
	src.once.Do(func() { src.enc, src.err = src.build() })
	return src.enc, src.err
}

// build reads and parses the embedded rank file.
func (s *encodingSource) build() (*encoding, error) {
	data, err := assets.Assets.ReadFile(s.file)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrEncodingData, s.file, err)
	}
	ranks, err := parseRanks(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.file, err)
	}
	return &encoding{pat: s.pat, ranks: ranks}, nil
}

// count returns the number of tokens of valid UTF-8 text, encoded in one go.
func (e *encoding) count(text []byte, sc *bpeScratch) int {
	s := scanner{buf: text}
	n := 0
	for p := 0; p < len(text); {
		q := s.next(e.pat, p)
		n += e.ranks.count(text[p:q], sc)
		p = q
	}
	return n
}
