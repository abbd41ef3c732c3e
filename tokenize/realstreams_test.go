package tokenize_test

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/tpsmeter/tpsmeter/tokenize"
)

// indexRow is the part of ../shared/testdata/real-streams/index.tsv used
// here: the encoding and the reference count of each stream's text.
type indexRow struct {
	encoding string
	tokens   int
}

func readIndex(t *testing.T) map[string]indexRow {
	t.Helper()
	b, err := os.ReadFile(sharedPath(t, "testdata", "real-streams", "index.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	header := strings.Split(lines[0], "\t")
	col := map[string]int{}
	for i, h := range header {
		col[h] = i
	}
	for _, h := range []string{"file", "tiktoken_encoding", "tiktoken_content_tokens"} {
		if _, ok := col[h]; !ok {
			t.Fatalf("index.tsv has no column %q", h)
		}
	}
	rows := map[string]indexRow{}
	for _, l := range lines[1:] {
		f := strings.Split(l, "\t")
		n, err := strconv.Atoi(f[col["tiktoken_content_tokens"]])
		if err != nil {
			t.Fatalf("index.tsv: %q: %v", l, err)
		}
		rows[f[col["file"]]] = indexRow{encoding: f[col["tiktoken_encoding"]], tokens: n}
	}
	return rows
}

// TestRealStreams replays the text chunks of every recorded stream, as the
// servers delivered them, through a Counter and compares the count with the
// reference count recorded in index.tsv (pkoukk/tiktoken-go on the joined
// text, summed over choices).
func TestRealStreams(t *testing.T) {
	index := readIndex(t)
	streams := loadRealStreams(t)
	if len(streams) < 30 {
		t.Fatalf("only %d recorded streams", len(streams))
	}
	for _, s := range streams {
		row, ok := index[s.file]
		if !ok {
			t.Errorf("%s is not in index.tsv", s.file)
			continue
		}
		t.Run(s.file, func(t *testing.T) {
			total := 0
			for _, parts := range s.choices {
				c, err := tokenize.NewCounter(row.encoding)
				if err != nil {
					t.Fatal(err)
				}
				res := stream(c, parts)
				checkCredits(t, res)
				total += res.final
			}
			if total != row.tokens {
				t.Fatalf("Count = %d, index.tsv says %d (%s)", total, row.tokens, row.encoding)
			}
		})
	}
}

// TestCreditsFollowChunks replays real OpenAI streams whose chunks are one
// token each and checks that credits follow the chunks closely: most chunks
// are credited exactly one token, the credits never lag more than maxLag
// chunks, and they sum to the count. (Text without spaces, such as the
// Japanese of 022, is one long piece per clause and is credited per clause.)
func TestCreditsFollowChunks(t *testing.T) {
	index := readIndex(t)
	streams := map[string][]string{}
	for _, s := range loadRealStreams(t) {
		if len(s.choices) == 1 {
			streams[s.file] = s.choices[0]
		}
	}
	streams["040-openai-gpt-4o-mini-count100.timing.tsv"] = readTiming(t, "040-openai-gpt-4o-mini-count100.timing.tsv")
	tests := []struct {
		file    string
		minOnes float64 // share of chunks credited exactly 1
		maxLag  int     // chunks seen minus tokens credited
	}{
		{"040-openai-gpt-4o-mini-count100.timing.tsv", 1, 0},
		{"014-openai-gpt-4.1-nano-holiday.sse", 0.85, 1},
		{"017-openai-gpt-4-0613-long-nousage.sse", 0.85, 1},
		{"023-openai-responses-gpt-4.1-poem.sse", 0.85, 1},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			parts, row := streams[tt.file], index[tt.file]
			if len(parts) == 0 || len(parts) != row.tokens {
				t.Fatalf("%d chunks, index.tsv says %d tokens; want one token per chunk", len(parts), row.tokens)
			}
			c, err := tokenize.NewCounter(row.encoding)
			if err != nil {
				t.Fatal(err)
			}
			res := stream(c, parts)
			checkCredits(t, res)
			if res.final != row.tokens {
				t.Fatalf("Count = %d, want %d", res.final, row.tokens)
			}
			ones, sum := 0, 0
			for i, cr := range res.credits {
				if cr == 1 {
					ones++
				}
				sum += cr
				if lag := i + 1 - sum; lag > tt.maxLag {
					t.Fatalf("after chunk %d (%q) %d tokens credited: lag %d > %d", i, parts[i], sum, lag, tt.maxLag)
				}
			}
			if share := float64(ones) / float64(len(parts)); share < tt.minOnes {
				t.Errorf("%d of %d chunks credited exactly 1 (%.2f < %.2f)", ones, len(parts), share, tt.minOnes)
			}
			t.Logf("%d of %d chunks credited exactly 1; Flush credited %d", ones, len(parts), res.flush)
		})
	}
}

// readTiming returns the non-empty content chunks of a timing trace.
func readTiming(t *testing.T, name string) []string {
	t.Helper()
	b, err := os.ReadFile(sharedPath(t, "testdata", "real-streams", name))
	if err != nil {
		t.Fatal(err)
	}
	var parts []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n")[1:] {
		f := strings.Split(l, "\t")
		var s string
		if len(f) < 3 || json.Unmarshal([]byte(f[2]), &s) != nil {
			t.Fatalf("%s: bad line %q", name, l)
		}
		if s != "" {
			parts = append(parts, s)
		}
	}
	return parts
}
