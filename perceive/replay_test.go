package perceive_test

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/tpsmeter/tpsmeter/perceive"
)

// moduleRoot walks up from the package directory to the directory holding
// go.mod.
func moduleRoot(t testing.TB) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatalf("cannot find the working directory: %v", err)
	}
	for root := wd; ; {
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
			return root
		}
		parent := filepath.Dir(root)
		if parent == root {
			t.Fatalf("no go.mod above %s", wd)
		}
		root = parent
	}
}

// realStreamsDir finds ../shared/testdata/real-streams next to the module
// root. It fails the test, naming the path, when the data is missing.
func realStreamsDir(t testing.TB) string {
	t.Helper()
	root := moduleRoot(t)
	dir := filepath.Join(filepath.Dir(root), "shared", "testdata", "real-streams")
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Fatalf("recorded streams missing: %s (expected ../shared/testdata/real-streams next to the module root %s): %v", dir, root, err)
	}
	return dir
}

func readTSV(t testing.TB, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("missing trace %s: %v", path, err)
	}
	defer f.Close()
	var rows [][]string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for first := true; sc.Scan(); first = false {
		if first {
			continue // header
		}
		if sc.Text() == "" {
			continue
		}
		rows = append(rows, strings.SplitN(sc.Text(), "\t", 3))
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	return rows
}

// trace040 is the OpenAI gpt-4o-mini "count to 100" stream: one token per
// content chunk, times in seconds at 10 ms resolution.
func trace040(t testing.TB) []arrival {
	t.Helper()
	var tl []arrival
	for _, row := range readTSV(t, filepath.Join(realStreamsDir(t), "040-openai-gpt-4o-mini-count100.timing.tsv")) {
		if len(row) != 3 {
			t.Fatalf("040: malformed row %q", row)
		}
		sec, err := strconv.ParseFloat(row[1], 64)
		if err != nil {
			t.Fatalf("040: bad time %q: %v", row[1], err)
		}
		var content *string
		if err := json.Unmarshal([]byte(row[2]), &content); err != nil {
			t.Fatalf("040: bad content %q: %v", row[2], err)
		}
		if content == nil || *content == "" {
			continue
		}
		tl = append(tl, arrival{ms(math.Round(sec * 1000)), 1, utf8.RuneCountInString(*content)})
	}
	return tl
}

// trace039 is the Ollama nemotron-3-nano stream: SSE lines with per-line
// arrival times in ms. Visible text is delta.content; with reasoning it is
// delta.content plus delta.reasoning (a UI that shows the thinking). Each
// chunk is taken as one token (Ollama sends one token per chunk).
func trace039(t testing.TB, withReasoning bool) []arrival {
	t.Helper()
	var tl []arrival
	for _, row := range readTSV(t, filepath.Join(realStreamsDir(t), "039-ollama-nemotron-3-nano-timed.timing.tsv")) {
		if len(row) < 3 || !strings.HasPrefix(row[2], "data: {") {
			continue
		}
		msec, err := strconv.ParseFloat(row[1], 64)
		if err != nil {
			t.Fatalf("039: bad time %q: %v", row[1], err)
		}
		var chunk struct {
			Choices []struct {
				Delta struct {
					Content   string `json:"content"`
					Reasoning string `json:"reasoning"`
				} `json:"delta"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(strings.TrimPrefix(row[2], "data: ")), &chunk); err != nil {
			t.Fatalf("039: bad chunk %q: %v", row[2], err)
		}
		chars := 0
		for _, c := range chunk.Choices {
			chars += utf8.RuneCountInString(c.Delta.Content)
			if withReasoning {
				chars += utf8.RuneCountInString(c.Delta.Reasoning)
			}
		}
		if chars > 0 {
			tl = append(tl, arrival{time.Duration(math.Round(msec*10)) * 100 * time.Microsecond, 1, chars})
		}
	}
	return tl
}

func TestReplayRealTraces(t *testing.T) {
	cases := []struct {
		name     string
		tl       func(testing.TB) []arrival
		arrivals int
		first    time.Duration
		last     time.Duration
	}{
		// Facts from the recordings (README.txt): 298 content chunks, TTFT 1.14 s.
		{"040-gpt-4o-mini", trace040, 298, ms(1140), ms(2820)},
		// Two content chunks ("5", "1") at 18991.5 and 19005.9 ms.
		{"039-ollama-content", func(t testing.TB) []arrival { return trace039(t, false) }, 2, ms(18991.5), ms(19005.9)},
		// 23 reasoning chunks from 18649.1 ms, then the 2 content chunks.
		{"039-ollama-with-reasoning", func(t testing.TB) []arrival { return trace039(t, true) }, 25, ms(18649.1), ms(19005.9)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tl := tc.tl(t)
			if len(tl) != tc.arrivals || tl[0].at != tc.first || last(tl) != tc.last {
				t.Fatalf("parsed %d arrivals from %v to %v, want %d from %v to %v", len(tl), tl[0].at, last(tl), tc.arrivals, tc.first, tc.last)
			}
			for _, cfg := range []perceive.Config{{}, {Render: perceive.Naive}, {RevealRate: 30}, {PlayoutBuffer: time.Second}} {
				r := checkAgainstReferences(t, tl, cfg, last(tl))
				if r.Arrivals != tc.arrivals || r.Tokens != tc.arrivals {
					t.Errorf("report counts %d arrivals / %d tokens, want %d", r.Arrivals, r.Tokens, tc.arrivals)
				}
			}
		})
	}
}
