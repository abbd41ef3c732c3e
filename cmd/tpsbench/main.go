// Command tpsbench benchmarks OpenAI-compatible streaming endpoints the way
// their users feel them: time to first token, decode and end-to-end tokens
// per second, perceived speed, stalls and tokens per chunk, per target,
// output-length bucket and prompt class, at P50 to P99, with cold-start
// probes and a regression gate for CI. It is built on package bench (and
// so on tpsmeter's measurement).
//
// With no flags it benchmarks two simulated providers side by side (the
// in-process llmsim server, presets fast-steady and bursty-batched) with the
// default 20/60/20 short/medium/long mix, and writes its results to
// ./tpsbench-results/<timestamp>/: results.json, requests.csv, report.html.
//
//	go run ./cmd/tpsbench                                    # simulated demo, ~20 s, no network
//	tpsbench -model gpt-4o-mini                              # $OPENAI_BASE_URL (or api.openai.com) with $OPENAI_API_KEY
//	tpsbench -target name=a,url=http://10.0.0.5:8000/v1,model=llama -target name=b,url=...,model=...
//	tpsbench compare BASELINE.json NEW.json                  # exit 1 on a significant regression
//	tpsbench merge -o all.json run-*/results.json            # combine runs from many machines
//	tpsbench report -html report.html results.json           # tables and HTML from a results file
//
// Exit codes: 0 success, 1 failure (a regression for compare; a run that
// was aborted or in which a target completed nothing), 2 usage or input
// errors, 130 interrupted (partial results are written). docs/tpsbench.md
// is the manual.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop() // a second Ctrl-C kills at once
	}()
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// Exit codes.
const (
	exitOK          = 0
	exitFail        = 1
	exitUsage       = 2
	exitInterrupted = 130
)

// run dispatches to a subcommand and returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "run":
			return runBench(ctx, args[1:], stdout, stderr)
		case "compare":
			return runCompare(args[1:], stdout, stderr)
		case "merge":
			return runMerge(args[1:], stdout, stderr)
		case "report":
			return runReport(args[1:], stdout, stderr)
		case "help", "-h", "-help", "--help":
			fmt.Fprint(stdout, usageText)
			return exitOK
		}
	}
	return runBench(ctx, args, stdout, stderr)
}

const usageText = `tpsbench: benchmark OpenAI-compatible streaming endpoints (TTFT, TPS, stalls, P50-P99).

Usage:
  tpsbench [run] [flags]                 run a benchmark (no flags: a simulated demo, no network)
  tpsbench compare [flags] BASE NEW      compare two results files; exit 1 on a significant regression
  tpsbench merge -o OUT [flags] FILE...  merge results files of runs on several machines
  tpsbench report [flags] FILE           print the tables of a results file, write its HTML report

Run "tpsbench run -h", "tpsbench compare -h", ... for the flags. Manual: docs/tpsbench.md.
`

// parseFlags parses a subcommand's flags. When parsing ends the command
// (-h, or a bad flag that fs already reported) ok is false and code is the
// exit status: 0 for -h, 2 for a usage error.
func parseFlags(fs *flag.FlagSet, args []string) (code int, ok bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK, false
		}
		return exitUsage, false
	}
	return 0, true
}
