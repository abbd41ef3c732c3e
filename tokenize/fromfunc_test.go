package tokenize_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tpsmeter/tpsmeter/tokenize"
)

// countingFunc wraps a one-shot count and records how many bytes it was
// given in total.
type countingFunc struct {
	count func(string) int
	bytes int
	calls int
}

func (c *countingFunc) fn(s string) int {
	c.bytes += len(s)
	c.calls++
	return c.count(s)
}

// prose builds English-like text: words, punctuation, line breaks, and
// sometimes a long line.
func prose(r *rand.Rand, words int) string {
	vocab := []string{"the", "stream", "token", "Counter", "is", "fast", "and", "exact", "42", "it's", "中文", "naïve", "x"}
	var b strings.Builder
	for i := range words {
		if i > 0 {
			switch r.IntN(30) {
			case 0:
				b.WriteString(".\n")
			case 1:
				b.WriteString("\n\n")
			case 2:
				b.WriteString(", ")
			default:
				b.WriteByte(' ')
			}
		}
		b.WriteString(vocab[r.IntN(len(vocab))])
	}
	return b.String()
}

// TestFromFuncExact plugs the exact cl100k_base one-shot count in through
// FromFunc: as that tokenizer never merges across FromFunc's cuts, Count
// must equal the count of the whole text, at every moment.
func TestFromFuncExact(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	oneShot := func(s string) int {
		n, err := tokenize.CountOneShot("cl100k_base", s)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	docs := 60
	if testing.Short() || raceEnabled {
		docs = 15
	}
	for i := range docs {
		text := prose(r, 20+r.IntN(400))
		if i%10 == 0 {
			text = strings.Repeat("word ", 1200) + text // a line longer than 4 KiB
		}
		f := &countingFunc{count: oneShot}
		sc := tokenize.FromFunc(f.fn)
		parts := chunks(r, text, 16)
		res := stream(sc, parts)
		prefix := ""
		for j, p := range parts {
			prefix += p
			if want := oneShot(prefix); res.counts[j] != want {
				t.Fatalf("after %q: Count = %d, want %d", prefix, res.counts[j], want)
			}
		}
		checkCredits(t, res)
		if res.final != oracleCount(t, "cl100k_base", text) {
			t.Fatalf("final Count %d, oracle %d", res.final, oracleCount(t, "cl100k_base", text))
		}
	}
}

// TestFromFuncCost checks the documented cost: without calls to Count, the
// one-shot function sees each byte of a long stream only a few times, even
// in 1-byte chunks, and even when a line never ends.
func TestFromFuncCost(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	for _, text := range []string{
		prose(r, 20000),
		strings.Repeat("word ", 20000),
		strings.Repeat("中文字符", 30000), // no cut points: cut at 64 KiB
	} {
		f := &countingFunc{count: func(s string) int { return len(strings.Fields(s)) }}
		sc := tokenize.FromFunc(f.fn)
		for _, p := range splitAt(text, []byte{1}) {
			sc.Add(p)
		}
		if ratio := float64(f.bytes) / float64(len(text)); ratio > 8 {
			t.Errorf("count saw %.1f bytes per byte of a %d-byte text (%d calls)", ratio, len(text), f.calls)
		}
		if sc.Count() < 1 {
			t.Fatal("Count is 0")
		}
	}
}

func TestFromFuncNilAndReset(t *testing.T) {
	sc := tokenize.FromFunc(nil)
	if sc.Add("hello world") != 0 || sc.Count() != 0 {
		t.Fatalf("FromFunc(nil) counted %d", sc.Count())
	}
	words := tokenize.FromFunc(func(s string) int { return len(strings.Fields(s)) })
	res := stream(words, []string{"one tw", "o\nthree", " four"})
	if res.final != 4 {
		t.Fatalf("Count = %d, want 4", res.final)
	}
	checkCredits(t, res)
	words.Reset()
	if words.Count() != 0 {
		t.Fatalf("Count after Reset = %d", words.Count())
	}
	res = stream(words, []string{"five six"})
	if res.final != 2 {
		t.Fatalf("Count after Reset = %d, want 2", res.final)
	}
	checkCredits(t, res)
}
