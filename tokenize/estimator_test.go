package tokenize_test

import (
	"math"
	"math/rand/v2"
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
