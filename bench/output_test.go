package bench_test

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"

	"github.com/tpsmeter/tpsmeter/bench"
)

func TestCSVWriter(t *testing.T) {
	var buf bytes.Buffer
	w := bench.NewCSVWriter(&buf)
	var rec recorder
	tg := startSim(t, "a", preset(t, "instant"), 1)
	mustRun(t, bench.Config{Targets: []bench.Target{tg}, Requests: 5, Warmup: 1, Concurrency: 2, OnRecord: func(r bench.Record) {
		rec.add(r)
		if err := w.Write(r); err != nil {
			t.Error(err)
		}
	}})
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1+6 {
		t.Fatalf("%d rows, want a header and 6 records", len(rows))
	}
	if strings.Join(rows[0], ",") != strings.Join(bench.CSVHeader, ",") {
		t.Fatalf("header = %v", rows[0])
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	for _, r := range rows[1:] {
		if len(r) != len(bench.CSVHeader) {
			t.Fatalf("row of %d fields", len(r))
		}
		if r[col["status"]] != "ok" || r[col["target"]] != "a" || r[col["output_tokens"]] == "0" || r[col["token_basis"]] != "exact" {
			t.Errorf("row %v", r)
		}
	}
	var empty bytes.Buffer
	e := bench.NewCSVWriter(&empty)
	if err := e.Flush(); err != nil || !strings.HasPrefix(empty.String(), "run,target,") {
		t.Fatalf("empty CSV = %q, %v; want the header alone", empty.String(), err)
	}
}

func TestWriteTable(t *testing.T) {
	res := synthResults(t, "r1", 20, 1, 1)
	for _, c := range res.Cells {
		c.Requests += 2
		c.Errors = map[string]int64{"429": 2}
	}
	var buf bytes.Buffer
	if err := bench.WriteTable(&buf, res); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"TARGET", "TTFT p50", "model-a", "medium", "easy", "hard", "all", "2 (429: 2)", "Findings:", "4 of 44 requests failed"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}
