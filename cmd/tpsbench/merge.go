package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/tpsmeter/tpsmeter/bench"
)

// runMerge is the merge subcommand.
func runMerge(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tpsbench merge", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "merged results file to write (required)")
	html := fs.String("html", "", "also write the merged HTML report here")
	quiet := fs.Bool("quiet", false, "do not print the tables")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: tpsbench merge -o OUT.json [flags] FILE...\n\nMerges results files (or directories holding results.json) of runs of the same\nbenchmark, e.g. from many machines: sketches merge exactly, samples combine.\n\nFlags:")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if *out == "" || fs.NArg() == 0 {
		fmt.Fprintln(stderr, "tpsbench merge: want -o OUT and at least one results file")
		return exitUsage
	}
	var rs []*bench.Results
	for _, p := range fs.Args() {
		r, err := loadResults(p)
		if err != nil {
			fmt.Fprintln(stderr, "tpsbench merge:", err)
			return exitUsage
		}
		rs = append(rs, r)
	}
	m, err := bench.Merge(rs...)
	if err != nil {
		fmt.Fprintln(stderr, "tpsbench merge:", err)
		return exitUsage
	}
	if err := m.Save(*out); err != nil {
		fmt.Fprintln(stderr, "tpsbench merge:", err)
		return exitFail
	}
	if *html != "" {
		if err := writeHTML(*html, m); err != nil {
			fmt.Fprintln(stderr, "tpsbench merge:", err)
			return exitFail
		}
	}
	if !*quiet {
		if err := bench.WriteTable(stdout, m); err != nil {
			fmt.Fprintln(stderr, "tpsbench merge:", err)
			return exitFail
		}
	}
	fmt.Fprintf(stdout, "\nmerged %d results files (%d runs) into %s\n", len(rs), len(m.Runs), *out)
	return exitOK
}

// runReport is the report subcommand.
func runReport(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tpsbench report", flag.ContinueOnError)
	fs.SetOutput(stderr)
	html := fs.String("html", "", "write the HTML report here")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: tpsbench report [-html OUT.html] FILE\n\nPrints the tables of a results file (or a directory holding results.json).\n\nFlags:")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "tpsbench report: want one results file")
		return exitUsage
	}
	r, err := loadResults(fs.Arg(0))
	if err != nil {
		fmt.Fprintln(stderr, "tpsbench report:", err)
		return exitUsage
	}
	if err := bench.WriteTable(stdout, r); err != nil {
		fmt.Fprintln(stderr, "tpsbench report:", err)
		return exitFail
	}
	if *html != "" {
		if err := writeHTML(*html, r); err != nil {
			fmt.Fprintln(stderr, "tpsbench report:", err)
			return exitFail
		}
		fmt.Fprintln(stdout, "\nreport:", *html)
	}
	return exitOK
}
