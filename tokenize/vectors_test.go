package tokenize_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/tpsmeter/tpsmeter/tokenize"
)

// vector is one published tokenization.
type vector struct {
	Text           string `json:"text"`
	Encoding       string `json:"encoding"`
	ExpectedIDs    []int  `json:"expected_ids"`
	ExpectedCount  int    `json:"expected_count"`
	AllowedSpecial string `json:"allowed_special"`
	SourceRepo     string `json:"source_repo"`
	SourcePath     string `json:"source_path"`
}

func readVectors(t *testing.T, path string) []vector {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("reading test vectors: %v", err)
	}
	defer f.Close()
	var out []vector
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var v vector
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("%s: no vectors", path)
	}
	return out
}

// TestVectors checks every public tiktoken vector in
// ../shared/testdata/tiktoken-vectors/vectors.jsonl (cl100k_base and
// o200k_base) and testdata/vectors-extra.jsonl (r50k_base, p50k_base): the
// token ids of a one-shot encode, and the count when the text is streamed
// whole, byte by byte, and cut in two at every byte offset.
func TestVectors(t *testing.T) {
	vectors := readVectors(t, sharedPath(t, "testdata", "tiktoken-vectors", "vectors.jsonl"))
	vectors = append(vectors, readVectors(t, filepath.Join("testdata", "vectors-extra.jsonl"))...)
	seen := map[string]int{}
	for i, v := range vectors {
		names := []string{v.Encoding}
		if v.Encoding == "o200k_base" {
			names = append(names, "o200k_harmony")
		}
		for _, name := range names {
			seen[name]++
			t.Run(fmt.Sprintf("%d/%s", i, name), func(t *testing.T) {
				want := v.ExpectedCount
				if v.AllowedSpecial != "" {
					// The source encoded <|endoftext|> as a special token;
					// model output is ordinary text, which takes more tokens.
					want = oracleCount(t, name, v.Text)
					if want <= v.ExpectedCount {
						t.Fatalf("ordinary count %d of %q should exceed the special-token count %d", want, v.Text, v.ExpectedCount)
					}
				} else if v.ExpectedIDs != nil {
					ids, err := tokenize.Encode(name, v.Text)
					if err != nil {
						t.Fatal(err)
					}
					if !slices.Equal(ids, v.ExpectedIDs) && !(len(ids) == 0 && len(v.ExpectedIDs) == 0) {
						t.Errorf("ids of %q = %v, want %v (%s %s)", v.Text, ids, v.ExpectedIDs, v.SourceRepo, v.SourcePath)
					}
				}
				ways := [][]string{{v.Text}, splitAt(v.Text, []byte{1})}
				for k := 1; k < len(v.Text); k++ {
					ways = append(ways, []string{v.Text[:k], v.Text[k:]})
				}
				for _, parts := range ways {
					c, err := tokenize.NewCounter(name)
					if err != nil {
						t.Fatal(err)
					}
					res := stream(c, parts)
					if res.final != want {
						t.Fatalf("Count of %q streamed as %q = %d, want %d (%s %s)", v.Text, parts, res.final, want, v.SourceRepo, v.SourcePath)
					}
					checkCredits(t, res)
				}
			})
		}
	}
	for _, name := range tokenize.Encodings() {
		if seen[name] == 0 {
			t.Errorf("no vectors for %s", name)
		}
	}
}
