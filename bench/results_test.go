package bench_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tpsmeter/tpsmeter/bench"
)

func TestResultsJSONRoundTrip(t *testing.T) {
	res := synthResults(t, "run-1", 30, 1, 1)
	res.Partial = true
	res.Aborted = "because"
	var buf bytes.Buffer
	if err := res.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var head map[string]any
	if err := json.Unmarshal(buf.Bytes(), &head); err != nil {
		t.Fatal(err)
	}
	if head["schema"] != bench.Schema || head["version"] != float64(bench.SchemaVersion) || head["partial"] != true {
		t.Fatalf("header = %v %v %v", head["schema"], head["version"], head["partial"])
	}
	back, err := bench.ReadResults(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Cells) != len(res.Cells) || !back.Partial || back.Aborted != "because" || back.Runs[0].ID != "run-1" {
		t.Fatalf("round trip lost data: %d cells, partial %v, aborted %q", len(back.Cells), back.Partial, back.Aborted)
	}
	for i, c := range res.Cells {
		bc := back.Cells[i]
		if bc.CellKey != c.CellKey || bc.Requests != c.Requests || bc.Completed != c.Completed {
			t.Fatalf("cell %d: %+v != %+v", i, bc.CellKey, c.CellKey)
		}
		for name, d := range c.Metrics {
			if got := bc.Metric(name); got.Count() != d.Count() || got.Quantile(0.95) != d.Quantile(0.95) {
				t.Errorf("cell %s metric %s changed", c.CellKey, name)
			}
		}
	}
}

func TestReadResultsErrors(t *testing.T) {
	tests := []struct{ name, in string }{
		{"not json", "hello"},
		{"other schema", `{"schema":"something","version":1}`},
		{"future version", `{"schema":"tpsbench/results","version":99}`},
		{"bad cell counts", `{"schema":"tpsbench/results","version":1,"cells":[{"target":"a","requests":1,"completed":2,"metrics":{}}]}`},
		{"null cell", `{"schema":"tpsbench/results","version":1,"cells":[null]}`},
		{"bad buckets", `{"schema":"tpsbench/results","version":1,"buckets":{"edges":[5,1],"names":["a","b","c"]}}`},
		{"bad sketch", `{"schema":"tpsbench/results","version":1,"cells":[{"target":"a","metrics":{"ttft_s":{"sketch":{"version":7}}}}]}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := bench.ReadResults(strings.NewReader(tc.in))
			if err == nil {
				t.Fatal("no error")
			}
			if tc.name != "bad sketch" && !errors.Is(err, bench.ErrSchema) {
				t.Errorf("error %v does not match ErrSchema", err)
			}
		})
	}
}

func TestSaveAndLoad(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "results.json")
	res := synthResults(t, "run-1", 10, 1, 1)
	if err := res.Save(p); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil || fi.Mode().Perm()&0o044 == 0 {
		t.Fatalf("saved file not readable by others: %v %v", fi.Mode(), err)
	}
	back, err := bench.LoadResults(p)
	if err != nil || len(back.Cells) != len(res.Cells) {
		t.Fatalf("LoadResults: %v", err)
	}
	if _, err := bench.LoadResults(filepath.Join(dir, "missing.json")); err == nil {
		t.Fatal("loaded a missing file")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("Save left temporary files: %v", entries)
	}
}

func FuzzReadResults(f *testing.F) {
	var buf bytes.Buffer
	_ = synthResults(f, "seed", 5, 1, 1).WriteJSON(&buf)
	f.Add(buf.String())
	f.Add(`{"schema":"tpsbench/results","version":1,"cells":[{"target":"a","requests":3,"completed":1,"errors":{"429":2},"metrics":{"ttft_s":{"seen":1,"samples":[0.5]}}}]}`)
	f.Fuzz(func(t *testing.T, in string) {
		r, err := bench.ReadResults(strings.NewReader(in))
		if err != nil {
			return
		}
		// Whatever was accepted can be reported, compared and merged.
		var out bytes.Buffer
		if err := bench.WriteTable(&out, r); err != nil {
			t.Fatal(err)
		}
		if err := bench.WriteHTML(&out, r); err != nil {
			t.Fatal(err)
		}
		if _, err := bench.Compare(r, r, bench.CompareOptions{}); err != nil {
			t.Fatal(err)
		}
		_, _ = bench.Merge(r)
	})
}
