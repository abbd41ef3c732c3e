package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/tpsmeter/tpsmeter/bench"
)

// loadResults reads a results file, or the results.json inside a directory.
func loadResults(path string) (*bench.Results, error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		path = filepath.Join(path, "results.json")
	}
	return bench.LoadResults(path)
}

// runCompare is the compare subcommand: exit 1 on a regression.
func runCompare(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tpsbench compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	alpha := fs.Float64("alpha", 0.01, "significance level of the Mann-Whitney U (and error-rate) tests")
	threshold := fs.Float64("threshold", 0.10, "relative change of the median that counts (0.10 = 10%)")
	errThreshold := fs.Float64("error-threshold", 0.02, "absolute increase of the error rate that counts (0.02 = 2 points)")
	metrics := fs.String("metrics", strings.Join(bench.DefaultCompareMetrics, ","), "metrics to compare")
	minSamples := fs.Int("min-samples", 8, "smallest sample per side for a verdict")
	asJSON := fs.Bool("json", false, "print the comparison as JSON")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: tpsbench compare [flags] BASELINE NEW\n\nBASELINE and NEW are results files (or directories holding results.json).\nExit status: 0 no regression, 1 a significant regression, 2 usage or input error.\n\nFlags:")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() != 2 {
		fmt.Fprintln(stderr, "tpsbench compare: want two results files, BASELINE and NEW")
		return exitUsage
	}
	if !(*alpha > 0 && *alpha < 1) || !(*threshold > 0) || !(*errThreshold > 0) || *minSamples < 2 {
		fmt.Fprintln(stderr, "tpsbench compare: -alpha must be in (0,1), -threshold and -error-threshold > 0, -min-samples >= 2")
		return exitUsage
	}
	base, err := loadResults(fs.Arg(0))
	if err != nil {
		fmt.Fprintln(stderr, "tpsbench compare:", err)
		return exitUsage
	}
	cur, err := loadResults(fs.Arg(1))
	if err != nil {
		fmt.Fprintln(stderr, "tpsbench compare:", err)
		return exitUsage
	}
	var ms []string
	for _, m := range strings.Split(*metrics, ",") {
		if m = strings.TrimSpace(m); m != "" {
			ms = append(ms, m)
		}
	}
	cmp, err := bench.Compare(base, cur, bench.CompareOptions{
		Alpha: *alpha, Threshold: *threshold, ErrorRateThreshold: *errThreshold, Metrics: ms, MinSamples: *minSamples,
	})
	if err != nil {
		fmt.Fprintln(stderr, "tpsbench compare:", err)
		return exitUsage
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", " ")
		if err := enc.Encode(struct {
			Regressed bool               `json:"regressed"`
			Rows      []bench.CompareRow `json:"rows"`
			Notes     []string           `json:"notes"`
		}{cmp.Regressed(), cmp.Rows, cmp.Notes}); err != nil {
			fmt.Fprintln(stderr, "tpsbench compare:", err)
			return exitFail
		}
	} else if err := cmp.WriteText(stdout); err != nil {
		fmt.Fprintln(stderr, "tpsbench compare:", err)
		return exitFail
	}
	if cmp.Regressed() {
		return exitFail
	}
	return exitOK
}
