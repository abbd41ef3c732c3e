package tokenize_test

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/tpsmeter/tpsmeter/tokenize"
)

func TestEncodings(t *testing.T) {
	want := []string{"cl100k_base", "o200k_base", "o200k_harmony", "p50k_base", "r50k_base"}
	got := tokenize.Encodings()
	if !slices.Equal(got, want) {
		t.Fatalf("Encodings() = %q, want %q", got, want)
	}
	got[0] = "changed"
	if tokenize.Encodings()[0] != want[0] {
		t.Fatal("Encodings returned a shared slice")
	}
}

func TestNewCounter(t *testing.T) {
	tests := []struct {
		name    string
		wantErr bool
	}{
		{"cl100k_base", false},
		{"o200k_base", false},
		{"o200k_harmony", false},
		{"p50k_base", false},
		{"r50k_base", false},
		{"", true},
		{"gpt2", true}, // a model name, not an encoding name
		{"O200K_BASE", true},
		{"p50k_edit", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := tokenize.NewCounter(tt.name)
			if !tt.wantErr {
				if err != nil {
					t.Fatalf("NewCounter(%q): %v", tt.name, err)
				}
				if c.Encoding() != tt.name {
					t.Fatalf("Encoding() = %q, want %q", c.Encoding(), tt.name)
				}
				if c.Count() != 0 {
					t.Fatalf("new Counter has Count %d", c.Count())
				}
				return
			}
			if c != nil || !errors.Is(err, tokenize.ErrUnknownEncoding) {
				t.Fatalf("NewCounter(%q) = %v, %v; want nil, ErrUnknownEncoding", tt.name, c, err)
			}
			for _, known := range tokenize.Encodings() {
				if !strings.Contains(err.Error(), known) {
					t.Errorf("error %q does not list %s", err, known)
				}
			}
		})
	}
}

// TestCounterCases checks texts where streaming is delicate, each cut at
// every byte offset into two chunks and also byte by byte.
func TestCounterCases(t *testing.T) {
	cases := []string{
		"it's", "it'll", "IT'LL", "we'RE", "x'", "'s", "''s",
		"today\n \n", "a\n \n  b", "\r\n\r\n  \n x", " \t\n",
		"ABC中DEF", "Ωmega ǅungla ʰello", "e\u0301\u0301x", "\u0301ABC",
		"12345 ١٢٣", "+\n/x", "!\n\n y", "<|endoftext|>",
		"€", "👍🏽 👨\u200d👩\u200d👧", "\xe2\x82", "a\xffb", "\xf0\x9f\x98", "\xed\xa0\x80",
	}
	for _, name := range tokenize.Encodings() {
		for _, text := range cases {
			t.Run(name+"/"+text, func(t *testing.T) {
				want := oracleCount(t, name, text)
				ways := [][]string{splitAt(text, []byte{1})}
				for k := 1; k < len(text); k++ {
					ways = append(ways, []string{text[:k], text[k:]})
				}
				for _, parts := range ways {
					c, err := tokenize.NewCounter(name)
					if err != nil {
						t.Fatal(err)
					}
					res := stream(c, parts)
					if res.final != want {
						t.Fatalf("Count of %q = %d, oracle %d", parts, res.final, want)
					}
					checkCredits(t, res)
				}
			})
		}
	}
}

// TestIncompleteUTF8 checks that an incomplete character at the end counts
// as the reference counts it (one U+FFFD per byte) and is completed by the
// next chunk.
func TestIncompleteUTF8(t *testing.T) {
	c, err := tokenize.NewCounter("cl100k_base")
	if err != nil {
		t.Fatal(err)
	}
	steps := []string{"price: 5", "\xe2", "\x82", "\xac", " \xf0\x9f", "\x98\x80", "!"}
	text := ""
	for _, s := range steps {
		c.Add(s)
		text += s
		if got, want := c.Count(), oracleCount(t, "cl100k_base", text); got != want {
			t.Fatalf("after %q: Count = %d, oracle %d", text, got, want)
		}
	}
	if text != "price: 5€ 😀!" {
		t.Fatalf("test text is %q", text)
	}
}

func TestCounterReset(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	for _, name := range baseEncodings {
		c, err := tokenize.NewCounter(name)
		if err != nil {
			t.Fatal(err)
		}
		for range 20 {
			text := genText(r, 30)
			res := stream(c, chunks(r, text, 16))
			if want := oracleCount(t, name, text); res.final != want {
				t.Fatalf("%s: Count after Reset = %d, oracle %d", name, res.final, want)
			}
			checkCredits(t, res)
			c.Reset()
			if c.Count() != 0 || c.Flush() != 0 || c.Encoding() != name {
				t.Fatalf("%s: after Reset: Count %d, Encoding %q", name, c.Count(), c.Encoding())
			}
		}
	}
}

// TestCountIsPure checks that Count and Flush do not change what is counted.
func TestCountIsPure(t *testing.T) {
	c, err := tokenize.NewCounter("o200k_base")
	if err != nil {
		t.Fatal(err)
	}
	text := ""
	for _, s := range []string{"Hel", "lo wor", "ld, it'", "s \xe4\xb8", "\xad文 ", "x"} {
		c.Add(s)
		text += s
		a, b := c.Count(), c.Count()
		c.Flush()
		if a != b || c.Count() != a || a != oracleCount(t, "o200k_base", text) {
			t.Fatalf("after %q: Count %d, again %d, after Flush %d", text, a, b, c.Count())
		}
	}
}

// TestLongPieces streams single pieces longer than the quadratic merge
// handles, each as one chunk and in small chunks.
func TestLongPieces(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	size := 1200
	if raceEnabled {
		size = 300
	}
	for _, unit := range []string{"a", "中", "QUJD", " ", "\n", "ab1", "\u0301"} {
		text := strings.Repeat(unit, size/len(unit))
		for _, name := range baseEncodings {
			want := oracleCount(t, name, text)
			for _, parts := range [][]string{{text}, chunks(r, text, 16)} {
				c, err := tokenize.NewCounter(name)
				if err != nil {
					t.Fatal(err)
				}
				res := stream(c, parts)
				if res.final != want {
					t.Fatalf("%s: Count of %d×%q in %d chunks = %d, oracle %d", name, len(text)/len(unit), unit, len(parts), res.final, want)
				}
				checkCredits(t, res)
			}
		}
	}
}

// TestCorpusMatchesOracle streams the 1 MiB benchmark corpus (a quarter of
// it with -short or -race) in 1-16 byte chunks and compares the count with
// the reference.
func TestCorpusMatchesOracle(t *testing.T) {
	text := corpus(t)
	if testing.Short() || raceEnabled {
		text = text[:len(text)/4]
		for !utf8.ValidString(text) {
			text = text[:len(text)-1]
		}
	}
	parts := chunks(rand.New(rand.NewPCG(11, 11)), text, 16)
	for _, name := range baseEncodings {
		t.Run(name, func(t *testing.T) {
			c, err := tokenize.NewCounter(name)
			if err != nil {
				t.Fatal(err)
			}
			res := stream(c, parts)
			if want := oracleCount(t, name, text); res.final != want {
				t.Fatalf("Count = %d, oracle %d", res.final, want)
			}
			checkCredits(t, res)
		})
	}
}

// TestAddAllocations checks the hot path: no allocation per Add once the
// buffers have grown.
func TestAddAllocations(t *testing.T) {
	text := strings.Repeat("Streaming text, with words and 12345 numbers; 中文 too! ", 20)
	parts := chunks(rand.New(rand.NewPCG(1, 1)), text, 16)
	for _, name := range baseEncodings {
		c, err := tokenize.NewCounter(name)
		if err != nil {
			t.Fatal(err)
		}
		allocs := testing.AllocsPerRun(20, func() {
			c.Reset()
			for _, p := range parts {
				c.Add(p)
			}
			c.Count()
		})
		if perAdd := allocs / float64(len(parts)); perAdd > 0.01 {
			t.Errorf("%s: %.3f allocations per Add", name, perAdd)
		}
	}
}

// TestConcurrentCounters creates and uses Counters from many goroutines,
// for the race detector: the shared tables are loaded once and read safely.
func TestConcurrentCounters(t *testing.T) {
	var wg sync.WaitGroup
	for i := range 8 {
		name := tokenize.Encodings()[i%5]
		wg.Go(func() {
			c, err := tokenize.NewCounter(name)
			if err != nil {
				t.Error(err)
				return
			}
			for _, s := range []string{"Hello", ", wor", "ld! 中", "文 \xf0\x9f", "\x98\x80"} {
				c.Add(s)
			}
			if got, want := c.Count(), oracleCountLocked(t, name, "Hello, world! 中文 😀"); got != want {
				t.Errorf("%s: Count = %d, oracle %d", name, got, want)
			}
		})
	}
	wg.Wait()
}

var oracleLock sync.Mutex

// oracleCountLocked serialises calls into the reference, which is not
// documented as safe for concurrent use.
func oracleCountLocked(t testing.TB, name, text string) int {
	oracleLock.Lock()
	defer oracleLock.Unlock()
	return oracleCount(t, name, text)
}

// TestContractionFolding backs an assumption of the scanner: matching the
// case-insensitive contractions with ASCII case folding is exact, because
// no non-ASCII rune lowers (as regexp2 compares) to one of their letters.
func TestContractionFolding(t *testing.T) {
	for r := rune(0x80); r <= unicode.MaxRune; r++ {
		if l := unicode.ToLower(r); l < 0x80 && strings.ContainsRune("strevmld", l) {
			t.Errorf("%U lowers to %q", r, l)
		}
	}
}

func TestZeroValues(t *testing.T) {
	var c tokenize.Counter
	res := stream(&c, []string{"Hello", ", wor", "ld"})
	if c.Encoding() != tokenize.FallbackEncoding || res.final != oracleCount(t, "o200k_base", "Hello, world") {
		t.Fatalf("zero Counter: Encoding %q, Count %d", c.Encoding(), res.final)
	}
	checkCredits(t, res)
	var e tokenize.Estimator
	if e.Add("abcdefgh") != 2 || e.Count() != 2 || e.CharsPerToken() != tokenize.DefaultCharsPerToken {
		t.Fatalf("zero Estimator: Count %d, ratio %v", e.Count(), e.CharsPerToken())
	}
}

// TestWordChunks streams texts the way OpenAI's servers do, one word per
// chunk (split before every space), which takes the Counter's fast path for
// a word that follows a word, and checks every prefix's Count against the
// reference tokenizer, for every encoding: capitals, mixed case
// (" McDonald", which o200k_base splits), contractions, digits, newlines,
// runs of spaces and non-ASCII letters around the words.
func TestWordChunks(t *testing.T) {
	texts := []string{
		" the quick brown fox jumps over a lazy dog",
		"Hello world and The Quick Brown Fox said NASA McDonald iPhone eBay YouTube JavaScript is great",
		" don't you've we'll it's a b c I A Zz zZ",
		" one  two   three\\n four\\n\\n five\\tsix 7 eight9 ten",
		" café naïve über straße 日本 語 the end",
		" x y z" + strings.Repeat(" abcdefghijklmnopqrstuvwxyz", 3) + " Supercalifragilisticexpialidocious end",
	}
	c := corpus(t)
	handmade := len(texts)
	for seg := 0; seg+2000 < len(c) && len(texts) < handmade+12; seg += 80_000 {
		texts = append(texts, strings.ToValidUTF8(c[seg:seg+2000], ""))
	}
	for _, enc := range tokenize.Encodings() {
		for i, text := range texts {
			text = strings.ReplaceAll(text, `\n`, "\n")
			text = strings.ReplaceAll(text, `\t`, "\t")
			var parts []string
			for rest := text; rest != ""; {
				j := strings.IndexByte(rest[1:], ' ')
				if j < 0 {
					parts = append(parts, rest)
					break
				}
				parts = append(parts, rest[:j+1])
				rest = rest[j+1:]
			}
			ctr, err := tokenize.NewCounter(enc)
			if err != nil {
				t.Fatal(err)
			}
			res := stream(ctr, parts)
			checkCredits(t, res)
			prefix := ""
			for k, p := range parts {
				prefix += p
				if i >= handmade && k%8 != 7 && k != len(parts)-1 {
					continue // corpus texts: every 8th prefix and the whole
				}
				if want := oracleCount(t, enc, prefix); res.counts[k] != want {
					t.Fatalf("%s, text %d, after chunk %d (%q): Count %d, want %d", enc, i, k, p, res.counts[k], want)
				}
			}
		}
	}
}
