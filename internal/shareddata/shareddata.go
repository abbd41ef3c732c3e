// Package shareddata finds the project's shared test data (../shared beside
// the checkout) for tests. A test that needs it fails, with the path it
// looked for, when it is missing: it never skips silently.
package shareddata

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Dir returns the absolute path of the shared directory: the folder
// "shared" beside the module root (the directory holding go.mod).
func Dir(t testing.TB) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatalf("shareddata: %v", err)
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			p := filepath.Join(filepath.Dir(d), "shared")
			if _, err := os.Stat(filepath.Join(p, "testdata")); err != nil {
				t.Fatalf("shared test data missing: %s/testdata not found (tests need ../shared beside the checkout)", p)
			}
			return p
		}
		if filepath.Dir(d) == d {
			t.Fatalf("shareddata: no go.mod above %s", wd)
		}
	}
}

// RealStreams returns the path of shared/testdata/real-streams.
func RealStreams(t testing.TB) string {
	t.Helper()
	return filepath.Join(Dir(t), "testdata", "real-streams")
}

// Row is one line of real-streams/index.tsv, by column name.
type Row map[string]string

// Index reads real-streams/index.tsv.
func Index(t testing.TB) []Row {
	t.Helper()
	p := filepath.Join(RealStreams(t), "index.tsv")
	f, err := os.Open(p)
	if err != nil {
		t.Fatalf("shared test data missing: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var header []string
	var rows []Row
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		if header == nil {
			header = cols
			continue
		}
		r := Row{}
		for i, h := range header {
			if i < len(cols) {
				r[h] = cols[i]
			}
		}
		rows = append(rows, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("reading %s: %v", p, err)
	}
	if len(rows) == 0 {
		t.Fatalf("%s has no rows", p)
	}
	return rows
}
