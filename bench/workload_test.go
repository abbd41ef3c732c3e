package bench_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/tpsmeter/tpsmeter/bench"
	"github.com/tpsmeter/tpsmeter/stats"
)

func TestParseWorkload(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		prompts int
		line    int    // expected error line, 0 = no error
		msg     string // substring of the error
	}{
		{name: "minimal", in: `{"prompt":"hi"}`, prompts: 1},
		{name: "full", in: `{"id":"a","prompt":"hi","system":"be brief","bucket":"long","class":"hard","max_tokens":900,"output_tokens":600,"output_tokens_max":700,"predictability":0.3,"weight":2}`, prompts: 1},
		{name: "comments and blanks", in: "# a comment\n\n{\"prompt\":\"a\"}\n   \n{\"prompt\":\"b\"}\n", prompts: 2},
		{name: "missing prompt", in: "{\"prompt\":\"a\"}\n{\"bucket\":\"short\"}", line: 2, msg: "prompt"},
		{name: "unknown field", in: `{"promt":"typo"}`, line: 1, msg: "unknown field"},
		{name: "not json", in: "{\"prompt\":\"a\"}\nhello", line: 2, msg: "not a JSON object"},
		{name: "broken json", in: `{"prompt":"a"`, line: 1, msg: "invalid JSON"},
		{name: "two objects", in: `{"prompt":"a"} {"prompt":"b"}`, line: 1, msg: "extra data"},
		{name: "unknown bucket", in: `{"prompt":"a","bucket":"huge"}`, line: 1, msg: "unknown \"bucket\""},
		{name: "negative max", in: `{"prompt":"a","max_tokens":-1}`, line: 1, msg: "max_tokens"},
		{name: "bad range", in: `{"prompt":"a","output_tokens":50,"output_tokens_max":10}`, line: 1, msg: "output_tokens_max"},
		{name: "range without low end", in: `{"prompt":"a","output_tokens_max":10}`, line: 1, msg: "output_tokens_max"},
		{name: "predictability out of range", in: `{"prompt":"a","predictability":1.5}`, line: 1, msg: "predictability"},
		{name: "negative weight", in: `{"prompt":"a","weight":-1}`, line: 1, msg: "weight"},
		{name: "bad class", in: `{"prompt":"a","class":"very hard"}`, line: 1, msg: "class"},
		{name: "wrong type", in: `{"prompt":42}`, line: 1, msg: "invalid JSON"},
		{name: "array line", in: `["prompt"]`, line: 1, msg: "not a JSON object"},
		{name: "empty file", in: "\n# nothing\n", msg: "no prompts"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w, err := bench.ParseWorkload(strings.NewReader(tc.in), "prompts.jsonl", stats.LengthBuckets{})
			if tc.msg == "" {
				if err != nil {
					t.Fatalf("ParseWorkload: %v", err)
				}
				if len(w.Prompts) != tc.prompts {
					t.Fatalf("got %d prompts, want %d", len(w.Prompts), tc.prompts)
				}
				if err := w.Validate(); err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error, want one mentioning %q", tc.msg)
			}
			if !errors.Is(err, bench.ErrWorkload) {
				t.Errorf("error %v does not match ErrWorkload", err)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %q does not mention %q", err, tc.msg)
			}
			var le *bench.LineError
			if tc.line > 0 {
				if !errors.As(err, &le) || le.Line != tc.line {
					t.Fatalf("error %v: want a LineError on line %d", err, tc.line)
				}
				if !strings.HasPrefix(err.Error(), "prompts.jsonl:") {
					t.Errorf("error %q does not name the file", err)
				}
			}
		})
	}
}

func TestParseWorkloadIDs(t *testing.T) {
	w, err := bench.ParseWorkload(strings.NewReader("\n{\"prompt\":\"a\"}\n{\"id\":\"mine\",\"prompt\":\"b\"}"), "f", stats.LengthBuckets{})
	if err != nil {
		t.Fatal(err)
	}
	if w.Prompts[0].ID != "line-2" || w.Prompts[1].ID != "mine" {
		t.Fatalf("IDs = %q, %q; want line-2, mine", w.Prompts[0].ID, w.Prompts[1].ID)
	}
}

func TestParseWorkloadLongLine(t *testing.T) {
	in := `{"prompt":"ok"}` + "\n" + `{"prompt":"` + strings.Repeat("x", 5<<20) + `"}`
	_, err := bench.ParseWorkload(strings.NewReader(in), "big", stats.LengthBuckets{})
	var le *bench.LineError
	if !errors.As(err, &le) || le.Line != 2 {
		t.Fatalf("err = %v, want a LineError on line 2", err)
	}
}

func TestDefaultWorkload(t *testing.T) {
	w := bench.DefaultWorkload()
	if err := w.Validate(); err != nil {
		t.Fatal(err)
	}
	buckets := map[string]float64{}
	classes := map[string]float64{}
	total := 0.0
	for _, p := range w.Prompts {
		buckets[p.Bucket] += p.Weight
		classes[p.Class] += p.Weight
		total += p.Weight
		if p.MaxTokens == 0 || p.OutputTokens == 0 {
			t.Errorf("prompt %s has no max_tokens or intended length", p.ID)
		}
		if b := w.Buckets.Bucket(p.OutputTokens); b != p.Bucket {
			t.Errorf("prompt %s: intended length %d is in bucket %s, not %s", p.ID, p.OutputTokens, b, p.Bucket)
		}
		if b := w.Buckets.Bucket(p.OutputTokensMax); b != p.Bucket {
			t.Errorf("prompt %s: intended max length %d is in bucket %s, not %s", p.ID, p.OutputTokensMax, b, p.Bucket)
		}
	}
	for b, want := range map[string]float64{"short": 0.2, "medium": 0.6, "long": 0.2} {
		if got := buckets[b] / total; got < want-1e-9 || got > want+1e-9 {
			t.Errorf("bucket %s has weight %.3f, want %.2f", b, got, want)
		}
	}
	if classes["easy"] != classes["hard"] {
		t.Errorf("easy weight %v != hard weight %v", classes["easy"], classes["hard"])
	}
	w.Prompts[0].Prompt = "changed"
	if bench.DefaultWorkload().Prompts[0].Prompt == "changed" {
		t.Error("DefaultWorkload returns shared prompts")
	}
}

func FuzzParseWorkload(f *testing.F) {
	f.Add(`{"prompt":"hi","bucket":"short","class":"easy","max_tokens":50}`)
	f.Add("# c\n{\"prompt\":\"a\",\"output_tokens\":3,\"output_tokens_max\":9}\n")
	f.Add(`{"prompt":"a","weight":1e308}` + "\n" + `{"prompt":"b","weight":1e308}`)
	f.Add(`{"prompt":"a","predictability":-0}`)
	f.Fuzz(func(t *testing.T, in string) {
		w, err := bench.ParseWorkload(strings.NewReader(in), "fuzz", stats.LengthBuckets{})
		if err != nil {
			if !errors.Is(err, bench.ErrWorkload) {
				t.Fatalf("error %v does not match ErrWorkload", err)
			}
			return
		}
		if len(w.Prompts) == 0 {
			t.Fatal("no error and no prompts")
		}
		for _, p := range w.Prompts {
			if p.Prompt == "" || p.ID == "" || p.MaxTokens < 0 || p.Weight < 0 {
				t.Fatalf("accepted invalid prompt %+v", p)
			}
		}
		// Validate may still refuse weights that overflow when added up,
		// but never panics.
		_ = w.Validate()
	})
}
