package tokenize_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

// corpusSize is the size of the benchmark corpus.
const corpusSize = 1 << 20

var (
	corpusOnce sync.Once
	corpusText string
	corpusErr  error
)

// corpus returns a deterministic ~1 MiB mixed text: English prose and Go
// code from the Go distribution (GOROOT/doc and GOROOT/src, present wherever
// Go tests run), Chinese, Japanese, Russian and an emoji-rich Markdown chat
// reply from testdata/corpus (written for this repository), and the text of
// the recorded LLM streams in ../shared, interleaved in blocks of a few KB.
// The Go version changes the Go-derived part slightly.
func corpus(t testing.TB) string {
	t.Helper()
	corpusOnce.Do(func() { corpusText, corpusErr = buildCorpus(t) })
	if corpusErr != nil {
		t.Fatal(corpusErr)
	}
	return corpusText
}

// findGOROOT returns the root of the Go distribution running the tests.
func findGOROOT() (string, error) {
	if goroot := os.Getenv("GOROOT"); goroot != "" {
		return goroot, nil
	}
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return "", fmt.Errorf("finding GOROOT: %v", err)
	}
	return strings.TrimSpace(string(out)), nil
}

func buildCorpus(t testing.TB) (string, error) {
	goroot, err := findGOROOT()
	if err != nil {
		return "", err
	}
	read := func(path string) (string, error) {
		b, err := os.ReadFile(path)
		if err != nil {
			return "", err
		}
		return string(b), nil
	}
	var prose, code strings.Builder
	tag := regexp.MustCompile(`<[^>]*>`)
	for _, f := range []string{"doc/go_spec.html", "doc/go_mem.html", "doc/asm.html", "doc/godebug.md"} {
		s, err := read(filepath.Join(goroot, f))
		if err != nil {
			return "", fmt.Errorf("corpus source from the Go distribution: %v", err)
		}
		s = tag.ReplaceAllString(s, "")
		s = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&", "&quot;", `"`, "&nbsp;", " ").Replace(s)
		prose.WriteString(s)
	}
	for _, f := range []string{
		"src/net/http/server.go", "src/strings/strings.go", "src/bufio/bufio.go", "src/fmt/print.go",
		"src/fmt/scan.go", "src/sort/sort.go", "src/encoding/json/decode.go", "src/encoding/json/encode.go",
	} {
		s, err := read(filepath.Join(goroot, f))
		if err != nil {
			return "", fmt.Errorf("corpus source from the Go distribution: %v", err)
		}
		code.WriteString(s)
	}
	lines := func(name string) ([]string, error) {
		s, err := read(filepath.Join("testdata", "corpus", name))
		if err != nil {
			return nil, err
		}
		return strings.SplitAfter(strings.TrimRight(s, "\n"), "\n"), nil
	}
	zh, err := lines("zh.txt")
	if err != nil {
		return "", err
	}
	ja, err := lines("ja.txt")
	if err != nil {
		return "", err
	}
	ru, err := lines("ru.txt")
	if err != nil {
		return "", err
	}
	chat, err := read(filepath.Join("testdata", "corpus", "chat.md"))
	if err != nil {
		return "", err
	}
	paragraphs := strings.SplitAfter(chat, "\n\n")
	streams := strings.Join(realStreamTexts(t), "\n\n")

	r := rand.New(rand.NewPCG(1, 2))
	sentences := func(b *strings.Builder, pool []string, size int) {
		for n := 0; n < size; {
			s := pool[r.IntN(len(pool))]
			b.WriteString(s)
			n += len(s)
		}
	}
	var b strings.Builder
	p, c, st := prose.String(), code.String(), streams
	take := func(src *string, n int) {
		if len(*src) < n {
			n = len(*src)
		}
		for n < len(*src) && !utf8.RuneStart((*src)[n]) {
			n++
		}
		b.WriteString((*src)[:n])
		*src = (*src)[n:]
	}
	for b.Len() < corpusSize {
		if len(p) == 0 {
			p = prose.String()
		}
		if len(c) == 0 {
			c = code.String()
		}
		if len(st) == 0 {
			st = streams
		}
		take(&p, 3000)
		take(&c, 2500)
		sentences(&b, zh, 1000)
		sentences(&b, ja, 1000)
		sentences(&b, ru, 1200)
		sentences(&b, paragraphs, 700)
		take(&st, 300)
	}
	s := b.String()[:corpusSize]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s, nil
}

// realStreamTexts returns the output text of each recorded stream in
// ../shared/testdata/real-streams (chat delta.content and Responses
// output_text deltas), one string per stream and choice.
func realStreamTexts(t testing.TB) []string {
	var out []string
	for _, s := range loadRealStreams(t) {
		for _, parts := range s.choices {
			out = append(out, strings.Join(parts, ""))
		}
	}
	return out
}

// realStream is the text of one recorded stream, as delivered.
type realStream struct {
	file    string
	choices [][]string // the text chunks of each choice, in order
}

// loadRealStreams parses the recorded SSE bodies.
func loadRealStreams(t testing.TB) []realStream {
	t.Helper()
	dir := sharedPath(t, "testdata", "real-streams")
	files, err := filepath.Glob(filepath.Join(dir, "*.sse"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no .sse files in %s: %v", dir, err)
	}
	var out []realStream
	for _, f := range files {
		body, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		s := realStream{file: filepath.Base(f)}
		for _, line := range strings.Split(string(body), "\n") {
			data, ok := strings.CutPrefix(line, "data:")
			if !ok {
				continue
			}
			var ev struct {
				Type    string `json:"type"`
				Delta   any    `json:"delta"`
				Choices []struct {
					Index int `json:"index"`
					Delta struct {
						Content string `json:"content"`
					} `json:"delta"`
				} `json:"choices"`
			}
			if json.Unmarshal([]byte(strings.TrimSpace(data)), &ev) != nil {
				continue
			}
			add := func(i int, text string) {
				for len(s.choices) <= i {
					s.choices = append(s.choices, nil)
				}
				s.choices[i] = append(s.choices[i], text)
			}
			if ev.Type == "response.output_text.delta" {
				if d, ok := ev.Delta.(string); ok {
					add(0, d)
				}
			}
			for _, c := range ev.Choices {
				if c.Delta.Content != "" {
					add(c.Index, c.Delta.Content)
				}
			}
		}
		out = append(out, s)
	}
	return out
}
