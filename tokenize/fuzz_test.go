package tokenize_test

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tpsmeter/tpsmeter/tokenize"
)

// checkText verifies, for one encoding, everything the package promises
// about text split into parts:
//   - the pre-token pieces equal the regexp2 matches of the reference pattern;
//   - the one-shot count equals pkoukk's len(EncodeOrdinary) (the oracle);
//   - streamed, Count after every Add equals the one-shot count of the text
//     added so far (so Count is exact at every moment), and at the end the
//     oracle's count;
//   - the credits keep their contract (see checkCredits).
func checkText(t *testing.T, name, text string, parts []string) {
	t.Helper()
	if utf8.ValidString(text) {
		got, err := tokenize.Pieces(name, text)
		if err != nil {
			t.Fatal(err)
		}
		if want := oraclePieces(t, name, text); !slices.Equal(got, want) {
			t.Fatalf("%s: pieces of %q:\n got %q\nwant %q", name, text, got, want)
		}
	}
	want := oracleCount(t, name, text)
	if got, _ := tokenize.CountOneShot(name, text); got != want {
		t.Fatalf("%s: one-shot count of %q = %d, oracle %d", name, text, got, want)
	}
	c, err := tokenize.NewCounter(name)
	if err != nil {
		t.Fatal(err)
	}
	res := stream(c, parts)
	prefix := ""
	for i, p := range parts {
		prefix += p
		if one, _ := tokenize.CountOneShot(name, prefix); res.counts[i] != one {
			t.Fatalf("%s: after chunk %d of %q, Count = %d, one-shot count of the prefix %q = %d",
				name, i, parts, res.counts[i], prefix, one)
		}
	}
	if res.final != want {
		t.Fatalf("%s: streamed Count of %q in %q = %d, oracle %d", name, text, parts, res.final, want)
	}
	checkCredits(t, res)
	// Calling Count between chunks must not change anything.
	quiet, err := tokenize.NewCounter(name)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range parts {
		if cr := quiet.Add(p); cr != res.credits[i] {
			t.Fatalf("%s: chunk %d credited %d without Count calls, %d with", name, i, cr, res.credits[i])
		}
	}
	if quiet.Flush() != res.flush || quiet.Count() != want {
		t.Fatalf("%s: without Count calls: Count %d, want %d", name, quiet.Count(), want)
	}
}

// splitAt cuts text into chunks whose lengths come from cuts (each byte,
// modulo 17, is a chunk length; 0 means one byte), continuing with the last
// length when cuts run out.
func splitAt(text string, cuts []byte) []string {
	var parts []string
	n := 1
	for i := 0; len(text) > 0; i++ {
		if i < len(cuts) {
			n = max(int(cuts[i]%17), 1)
		}
		k := min(n, len(text))
		parts = append(parts, text[:k])
		text = text[k:]
	}
	return parts
}

// FuzzCounter checks streamed counting against the reference for all
// encodings, with the text split at arbitrary byte offsets (also inside
// characters). Run it with
//
//	go test -run '^$' -fuzz FuzzCounter -fuzztime 20s ./tokenize
func FuzzCounter(f *testing.F) {
	seeds := []struct {
		text string
		cuts string
	}{
		{"hello world", "\x01"},
		{"it's", "\x03\x01"},
		{"IT'S it'll we'RE", "\x03\x01\x02"},
		{"it'" + "s", "\x03"},
		{"today\n \n", "\x06\x01\x01"},
		{"a\n \n  b\r\n\r\n \n", "\x01"},
		{"   \n\n  \t x", "\x02"},
		{"12345678 ١٢٣٤ ½Ⅻ", "\x02\x05"},
		{strings.Repeat("中文字符", 40), "\x07\x0b"},
		{strings.Repeat("QUJDRA==", 30) + "\n", "\x10"},
		{strings.Repeat(" ", 100) + "x", "\x09"},
		{"ABC中DEF ʰello ǅungla e\u0301\u0301", "\x01\x02\x03"},
		{"+\n/\n// x /\n", "\x01"},
		{"<|endoftext|>hi<|im_start|>", "\x05"},
		{"👨\u200d👩\u200d👧 🇺🇸 👍🏽", "\x01\x02"},
		{"\xff\xe2\x82 x\xed\xa0\x80\xf0\x9f", "\x01"},
		{"Привет, мир! Как дела?", "\x03"},
	}
	for _, s := range seeds {
		f.Add(s.text, []byte(s.cuts))
	}
	f.Fuzz(func(t *testing.T, text string, cuts []byte) {
		if len(text) > 2<<10 {
			return // the oracle is O(n^2) inside a piece
		}
		parts := splitAt(text, cuts)
		for _, name := range baseEncodings {
			checkText(t, name, text, parts)
		}
	})
}

// TestStreamMatchesOracle runs checkText on generated documents made of the
// tricky fragments, split at random offsets, for every encoding.
func TestStreamMatchesOracle(t *testing.T) {
	docs := 150
	if testing.Short() || raceEnabled {
		docs = 30
	}
	for _, name := range append(baseEncodings, "o200k_harmony") {
		t.Run(name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(42, uint64(len(name))))
			for range docs {
				text := genText(r, 1+r.IntN(40))
				checkText(t, name, text, chunks(r, text, 1+r.IntN(16)))
			}
		})
	}
}
