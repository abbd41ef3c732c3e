package tokenize_test

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/dlclark/regexp2"
	tiktoken "github.com/pkoukk/tiktoken-go"
	loader "github.com/pkoukk/tiktoken-go-loader"

	"github.com/tpsmeter/tpsmeter/tokenize"
)

// baseEncodings are the encodings with distinct data; o200k_harmony is
// o200k_base for ordinary text and is tested against the same oracle.
var baseEncodings = []string{"cl100k_base", "o200k_base", "p50k_base", "r50k_base"}

// oracleName maps an encoding name to the reference encoding.
func oracleName(name string) string {
	if name == "o200k_harmony" {
		return "o200k_base"
	}
	return name
}

var (
	oracleOnce sync.Once
	oracleMu   sync.Mutex
	oracles    = map[string]*tiktoken.Tiktoken{}
)

// oracle returns the reference implementation (pkoukk/tiktoken-go with its
// embedded offline loader) for name. Only tests may switch pkoukk's global
// loader; the package itself never does (see offline_test.go).
func oracle(t testing.TB, name string) *tiktoken.Tiktoken {
	t.Helper()
	oracleOnce.Do(func() { tiktoken.SetBpeLoader(loader.NewOfflineLoader()) })
	oracleMu.Lock()
	defer oracleMu.Unlock()
	name = oracleName(name)
	if tk, ok := oracles[name]; ok {
		return tk
	}
	tk, err := tiktoken.GetEncoding(name)
	if err != nil {
		t.Fatalf("oracle %s: %v", name, err)
	}
	oracles[name] = tk
	return tk
}

// oracleCount is len(EncodeOrdinary(text)) of the reference.
func oracleCount(t testing.TB, name, text string) int {
	t.Helper()
	return len(oracle(t, name).EncodeOrdinary(text))
}

// The pre-tokenizer patterns, as pkoukk/tiktoken-go v0.1.8 compiles them
// (its encoding.go).
var patterns = map[string]string{
	"cl100k_base": `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`,
	"o200k_base": `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?` +
		`|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?` +
		`|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`,
	"p50k_base": `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`,
	"r50k_base": `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`,
}

var (
	regexMu sync.Mutex
	regexes = map[string]*regexp2.Regexp{}
)

// oraclePieces splits text with the regexp2 engine the reference uses, on
// runes as the reference does (invalid bytes become U+FFFD).
func oraclePieces(t testing.TB, name, text string) []string {
	t.Helper()
	name = oracleName(name)
	regexMu.Lock()
	re, ok := regexes[name]
	if !ok {
		re = regexp2.MustCompile(patterns[name], regexp2.None)
		regexes[name] = re
	}
	regexMu.Unlock()
	runes := []rune(text)
	var out []string
	m, err := re.FindRunesMatch(runes)
	for ; m != nil && err == nil; m, err = re.FindNextMatch(m) {
		out = append(out, string(runes[m.Index:m.Index+m.Length]))
	}
	if err != nil {
		t.Fatalf("regexp2: %v", err)
	}
	return out
}

// repoRoot returns the module root, found by walking up to go.mod.
func repoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			t.Fatalf("no go.mod above %s", dir)
		}
	}
}

// sharedPath returns a path inside ../shared beside the checkout, failing
// the test (never skipping) if it is missing.
func sharedPath(t testing.TB, elem ...string) string {
	t.Helper()
	p := filepath.Join(append([]string{repoRoot(t), "..", "shared"}, elem...)...)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("missing shared test data %s (the tests need ../shared beside the checkout): %v", p, err)
	}
	return p
}

// fragments are the building blocks of generated test texts: every case the
// pre-tokenizers treat specially, in several scripts.
var fragments = []string{
	// words, case, contractions
	"hello", " world", "Hello", "HELLO", "HELLOworld", "helloWORLD", "it", "it'", "'s", "s", "it's", "IT'S",
	"we'RE", "they'll", "I'd", "'ll", "'l", "'", "''", "'t", "don't", "Ve", "'ve", " 's", "x'",
	"ǅungla", "ʰello", "ABC中DEF", "Ωmega", "Straße", "İstanbul", "K",
	// digits and numbers
	"1", "12", "123", "12345", "3.14159", "١٢٣٤", "½", "Ⅻ", "²", "0x1F",
	// whitespace
	" ", "  ", "   ", "\t", "\n", "\n\n", "\r\n", "\r", " \n", "\n ", " \n \n  ", "\u00a0", "\u3000", "\u2028", "\u0085", "\v", "\f",
	// punctuation and symbols
	".", "!", "?!", "...", ",", "//", "/*", "*/", "\n/", "+\n/", "/\n", "->", "<|endoftext|>", "<|im_start|>", "{\"a\":1}", "```go\n", "#", "@", "$",
	// marks
	"\u0301", "e\u0301", "\u0301\u0301", "क्षि", "ñ", "a\u0308",
	// scripts
	"中文", "日本語のテキスト", "こんにちは", "한국어", "Привет", " мир", "مرحبا", "שלום", "γειά", "ภาษาไทย", "हिन्दी",
	// emoji
	"👍", "👍🏽", "👨\u200d👩\u200d👧", "🇺🇸", "❤️", "☺",
	// invalid UTF-8
	"\xff", "\xe2\x82", "\xed\xa0\x80", "\xc0\xaf", "\xf0\x9f",
}

// genText builds a random text from fragments, sometimes with a long run.
func genText(r *rand.Rand, n int) string {
	var b strings.Builder
	for range n {
		if r.IntN(40) == 0 {
			unit := []string{"a", "中", "Z", "9", " ", "\n", "=", "aB", "QUJD", "é", "\u0301", " \n"}[r.IntN(12)]
			b.WriteString(strings.Repeat(unit, 20+r.IntN(200)))
			continue
		}
		b.WriteString(fragments[r.IntN(len(fragments))])
	}
	return b.String()
}

// chunks splits text at random byte offsets (1 to max bytes per chunk),
// often in the middle of a character.
func chunks(r *rand.Rand, text string, max int) []string {
	var out []string
	for len(text) > 0 {
		n := min(1+r.IntN(max), len(text))
		out = append(out, text[:n])
		text = text[n:]
	}
	return out
}

// streamResult is what a stream through a StreamCounter produced.
type streamResult struct {
	counts  []int // Count() after each Add
	credits []int // credit of each Add
	flush   int
	final   int
}

// stream feeds chunks to c and records counts and credits.
func stream(c tokenize.StreamCounter, parts []string) streamResult {
	var res streamResult
	for _, p := range parts {
		res.credits = append(res.credits, c.Add(p))
		res.counts = append(res.counts, c.Count())
	}
	if f, ok := c.(tokenize.Flusher); ok {
		res.flush = f.Flush()
	}
	res.final = c.Count()
	return res
}

// checkCredits verifies the credit contract: credits are never negative,
// their running sum never exceeds Count at that time or any later time, and
// with Flush they sum to the final Count.
func checkCredits(t testing.TB, res streamResult) {
	t.Helper()
	sum := 0
	minLater := make([]int, len(res.counts)+1)
	minLater[len(res.counts)] = res.final
	for i := len(res.counts) - 1; i >= 0; i-- {
		minLater[i] = min(res.counts[i], minLater[i+1])
	}
	for i, c := range res.credits {
		if c < 0 {
			t.Fatalf("chunk %d: negative credit %d", i, c)
		}
		sum += c
		if sum > minLater[i] {
			t.Fatalf("chunk %d: credits so far %d exceed a later Count %d", i, sum, minLater[i])
		}
	}
	if res.flush < 0 {
		t.Fatalf("negative Flush %d", res.flush)
	}
	if sum+res.flush != res.final {
		t.Fatalf("credits %d + Flush %d != Count %d", sum, res.flush, res.final)
	}
}
