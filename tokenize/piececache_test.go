package tokenize_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tpsmeter/tpsmeter/tokenize"
)

// TestPieceCacheIsExact runs pieces through a Counter's piece cache and
// checks every answer against the encoding's own count: the pieces of the
// corpus, and random short byte strings of every length the cache takes,
// many of which share an entry (64 entries), so that collisions and
// same-length neighbours are exercised.
func TestPieceCacheIsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	var random []string
	for range 20000 {
		n := 2 + r.IntN(15)
		b := make([]byte, n)
		for i := range b {
			const alphabet = "aab e\x00\xff"
			b[i] = alphabet[r.IntN(len(alphabet))] // few distinct bytes: many near-equal pieces
		}
		random = append(random, string(b), string(b)) // and each one again, to hit
	}
	for _, enc := range []string{"cl100k_base", "o200k_base"} {
		pieces, err := tokenize.Pieces(enc, corpus(t)[:200_000])
		if err != nil {
			t.Fatal(err)
		}
		for name, set := range map[string][]string{"corpus": pieces, "random": random} {
			hits, wrong, err := tokenize.PieceCacheCheck(enc, set)
			if err != nil {
				t.Fatal(err)
			}
			if wrong != 0 {
				t.Errorf("%s, %s: %d of %d cached counts differ from the encoding's", enc, name, wrong, len(set))
			}
			if hits == 0 {
				t.Errorf("%s, %s: no cache hit in %d pieces: the test exercises nothing", enc, name, len(set))
			}
		}
	}
}

// TestPieceCacheHitRate measures how often the cache answers for answers
// of about 1,000 tokens (4 KB) of English prose and of Go source, each
// through a fresh cache (a Counter's cache also survives Reset, so a pooled
// Counter does better). docs/performance.md quotes these numbers.
func TestPieceCacheHitRate(t *testing.T) {
	c := corpus(t)
	for _, kind := range []struct{ name, marker string }{{"prose", " the "}, {"code", "func "}} {
		var hits, total int
		for seg := 0; seg < len(c)-4096 && total < 100_000; seg += 4096 {
			text := c[seg : seg+4096]
			if !strings.Contains(text, kind.marker) || strings.Count(text, kind.marker) < 3 {
				continue
			}
			pieces, err := tokenize.Pieces("o200k_base", strings.ToValidUTF8(text, ""))
			if err != nil {
				t.Fatal(err)
			}
			h, _, err := tokenize.PieceCacheCheck("o200k_base", pieces)
			if err != nil {
				t.Fatal(err)
			}
			hits += h
			total += len(pieces)
		}
		if total == 0 {
			t.Fatalf("%s: no segment found", kind.name)
		}
		t.Logf("%s: %d of %d pieces (%.0f%%) answered by the piece cache", kind.name, hits, total, 100*float64(hits)/float64(total))
	}
}
