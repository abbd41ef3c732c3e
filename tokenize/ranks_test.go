package tokenize_test

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tpsmeter/tpsmeter/tokenize"
)

// byteRanks returns a valid .tiktoken body with the 256 single bytes.
func byteRanks() string {
	var b strings.Builder
	for i := range 256 {
		fmt.Fprintf(&b, "%s %d\n", base64.StdEncoding.EncodeToString([]byte{byte(i)}), i)
	}
	return b.String()
}

func TestParseRanks(t *testing.T) {
	ab := base64.StdEncoding.EncodeToString([]byte("ab"))
	tests := []struct {
		name   string
		data   string
		tokens int // 0: want ErrEncodingData
	}{
		{"bytes only", byteRanks(), 256},
		{"one merge", byteRanks() + ab + " 256\n", 257},
		{"gap in ranks", byteRanks() + ab + " 300", 301},
		{"gap too large", byteRanks() + ab + " 100000", 0},
		{"empty", "", 0},
		{"no rank", byteRanks() + ab + "\n", 0},
		{"bad rank", byteRanks() + ab + " x1\n", 0},
		{"rank going back", byteRanks() + ab + " 12\n", 0},
		{"bad base64", byteRanks() + "!!!! 256\n", 0},
		{"duplicate token", byteRanks() + ab + " 256\n" + ab + " 257\n", 0},
		{"missing byte", strings.SplitN(byteRanks(), "\n", 2)[1], 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := tokenize.ParseRanks([]byte(tt.data))
			if tt.tokens == 0 {
				if !errors.Is(err, tokenize.ErrEncodingData) {
					t.Fatalf("ParseRanks = %d, %v; want ErrEncodingData", n, err)
				}
				return
			}
			if err != nil || n != tt.tokens {
				t.Fatalf("ParseRanks = %d, %v; want %d tokens", n, err, tt.tokens)
			}
		})
	}
}

// FuzzParseRanks checks that the rank-file parser never panics and reports
// bad data with ErrEncodingData.
func FuzzParseRanks(f *testing.F) {
	f.Add([]byte(byteRanks()))
	f.Add([]byte(byteRanks() + "YWI= 256\n"))
	f.Add([]byte("IQ== 0\nIg== 1\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, data []byte) {
		n, err := tokenize.ParseRanks(data)
		if err != nil && !errors.Is(err, tokenize.ErrEncodingData) {
			t.Fatalf("error %v does not wrap ErrEncodingData", err)
		}
		if err == nil && n < 256 {
			t.Fatalf("accepted %d tokens, fewer than the 256 bytes", n)
		}
	})
}
