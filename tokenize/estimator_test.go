package tokenize_test

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tpsmeter/tpsmeter/tokenize"
)

func TestEstimator(t *testing.T) {
	tests := []struct {
		name          string
		charsPerToken float64
		wantRatio     float64
		text          string
		want          int
	}{
		{"default", 0, tokenize.DefaultCharsPerToken, "Hello, world!", 4}, // 13 chars
		{"negative", -1, tokenize.DefaultCharsPerToken, "abcd", 1},
		{"NaN", math.NaN(), tokenize.DefaultCharsPerToken, "abcde", 2},
		{"Inf", math.Inf(1), tokenize.DefaultCharsPerToken, "abcdefgh", 2},
		{"one per char", 1, 1, "中文字符", 4},
		{"fractional", 2.5, 2.5, "Привет, мир", 5}, // 11 chars
		{"empty", 3, 3, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := tokenize.NewEstimator(tt.charsPerToken)
			if e.CharsPerToken() != tt.wantRatio {
				t.Fatalf("CharsPerToken() = %v, want %v", e.CharsPerToken(), tt.wantRatio)
			}
			r := rand.New(rand.NewPCG(1, 1))
			for _, parts := range [][]string{{tt.text}, splitAt(tt.text, []byte{1}), chunks(r, tt.text, 5)} {
				e.Reset()
				res := stream(e, parts)
				if res.final != tt.want {
					t.Fatalf("Count of %q = %d, want %d", parts, res.final, tt.want)
				}
				if res.flush != 0 {
					t.Fatalf("Flush = %d, want 0", res.flush)
				}
				checkCredits(t, res)
			}
		})
	}
}

// TestEstimatorRandom checks Count = ceil(chars/ratio) and the credit
// contract on random texts split inside characters.
func TestEstimatorRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	for range 200 {
		text := genText(r, 20)
		ratio := 0.5 + 5*r.Float64()
		e := tokenize.NewEstimator(ratio)
		res := stream(e, chunks(r, text, 7))
		chars := 0
		for i := 0; i < len(text); i++ {
			if utf8.RuneStart(text[i]) {
				chars++
			}
		}
		if want := int(math.Ceil(float64(chars) / ratio)); res.final != want {
			t.Fatalf("Count of %q at %v = %d, want %d", text, ratio, res.final, want)
		}
		checkCredits(t, res)
	}
}

// TestCharsPerTokenData reproduces the characters-per-token figures quoted
// in DefaultCharsPerToken's documentation and keeps them in range.
func TestCharsPerTokenData(t *testing.T) {
	ratio := func(enc, text string) float64 {
		n, err := tokenize.CountOneShot(enc, text)
		if err != nil || n == 0 {
			t.Fatalf("%s: %d tokens, %v", enc, n, err)
		}
		return float64(utf8.RuneCountInString(text)) / float64(n)
	}
	var english strings.Builder
	for _, s := range realStreamTexts(t) {
		if utf8.RuneCountInString(s) == len(s) && len(s) >= 100 { // ASCII-only outputs
			english.WriteString(s)
		}
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("testdata", "corpus", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	goroot, err := findGOROOT()
	if err != nil {
		t.Fatal(err)
	}
	goSource, err := os.ReadFile(filepath.Join(goroot, "src", "net", "http", "server.go"))
	if err != nil {
		t.Fatalf("Go source for the ratio: %v", err)
	}
	tests := []struct {
		name, text string
		enc        string
		lo, hi     float64
	}{
		{"recorded English output", english.String(), "o200k_base", 4.3, 5.2},
		{"recorded English output", english.String(), "cl100k_base", 4.2, 5.1},
		{"Go source", string(goSource), "o200k_base", 3.4, 4.2},
		{"Go source", string(goSource), "cl100k_base", 3.4, 4.2},
		{"Russian", read("ru.txt"), "o200k_base", 3.5, 4.3},
		{"Russian", read("ru.txt"), "cl100k_base", 2.0, 2.6},
		{"Markdown with emoji", read("chat.md"), "o200k_base", 2.8, 3.4},
		{"Chinese", read("zh.txt"), "o200k_base", 1.1, 1.5},
		{"Chinese", read("zh.txt"), "cl100k_base", 0.8, 1.1},
		{"Japanese", read("ja.txt"), "o200k_base", 1.1, 1.5},
		{"Japanese", read("ja.txt"), "cl100k_base", 0.8, 1.1},
	}
	for _, tt := range tests {
		t.Run(tt.name+"/"+tt.enc, func(t *testing.T) {
			r := ratio(tt.enc, tt.text)
			t.Logf("%.2f characters per token", r)
			if r < tt.lo || r > tt.hi {
				t.Errorf("%.2f characters per token, outside [%v, %v]: update DefaultCharsPerToken's documentation", r, tt.lo, tt.hi)
			}
		})
	}
}
