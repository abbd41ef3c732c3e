package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tpsmeter/tpsmeter/bench"
	"github.com/tpsmeter/tpsmeter/llmsim"
)

// The built-in simulated run (no target given): two providers side by
// side, models that go cold after 1.5 s idle and take 1.5 s to warm up, so
// that a 2 s cold-start probe shows in seconds what real providers do after
// minutes.
var (
	defaultSimTargets = []string{
		"sim:fast-steady,cold=1.5s,cold-after=1.5s",
		"sim:bursty-batched,cold=1.5s,cold-after=1.5s",
	}
	defaultSimProbes = []time.Duration{0, 2 * time.Second}
)

// Defaults that depend on whether every target is simulated.
const (
	simConcurrency  = 16
	simDuration     = 5 * time.Second
	realConcurrency = 4
	realDuration    = time.Minute
	defaultWarmup   = 2
)

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, " ") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// runBench is the run subcommand.
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tpsbench run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var targetFlags multiFlag
	fs.Var(&targetFlags, "target", "a target (repeatable): sim:PRESET, a base URL, or key=value pairs name=,url=,model=,api=chat|responses,key-env=,encoding=,max-tokens-field=,sim=,cold=,cold-after=")
	sims := fs.String("sim", "", "comma-separated simulator presets, one simulated target each ("+strings.Join(llmsim.Presets(), ", ")+")")
	url := fs.String("url", "", "base URL of one real target (default $OPENAI_BASE_URL, else "+defaultBaseURL+")")
	model := fs.String("model", "", "model of the real target given by -url (or $OPENAI_BASE_URL)")
	api := fs.String("api", "chat", "API of -url/-model: chat (Chat Completions) or responses")
	keyEnv := fs.String("key-env", "OPENAI_API_KEY", "environment variable holding the API key of -url/-model")
	prompts := fs.String("prompts", "", "prompt file (JSON Lines: prompt, bucket, class, max_tokens, ...); default: the built-in 20/60/20 mix")
	conc := fs.Int("concurrency", 0, fmt.Sprintf("closed-loop requests in flight per target (default %d for simulated targets, %d otherwise)", simConcurrency, realConcurrency))
	rate := fs.Float64("rate", 0, "open-loop Poisson arrival rate per target, requests/s (overrides -concurrency)")
	maxInFlight := fs.Int("max-in-flight", 0, fmt.Sprintf("open-loop cap on requests in flight per target (default %d)", bench.DefaultMaxInFlight))
	duration := fs.Duration("duration", 0, fmt.Sprintf("how long measured requests are started (default %s for simulated targets, %s otherwise, unless -requests is given)", simDuration, realDuration))
	requests := fs.Int("requests", 0, "measured requests per target (with -duration: whichever comes first)")
	warmup := fs.Int("warmup", defaultWarmup, "warm-up requests per target, excluded from the results")
	think := fs.Duration("think", 0, "pause of each closed-loop worker between requests")
	probes := fs.String("probes", "", "cold-start probes: idle gaps before one request each, e.g. 0s,30s,5m (default 0s,2s for the built-in simulated run, none otherwise)")
	probeRepeat := fs.Int("probe-repeat", 1, "probes per idle gap")
	seed := fs.Uint64("seed", 1, "seed of the prompt sequence (and of the simulators)")
	retries := fs.Int("retries", 0, "openai-go retries per request (0: every 429/5xx is counted as an error)")
	timeout := fs.Duration("timeout", bench.DefaultRequestTimeout, "timeout of one request")
	sampleCap := fs.Int("sample-cap", bench.DefaultSampleCap, "per-request values kept per metric and cell for compare's tests")
	outDir := fs.String("out", "", "output directory (default ./tpsbench-results/<timestamp>)")
	noFiles := fs.Bool("no-files", false, "write no files, only print the tables")
	progress := fs.String("progress", "auto", "progress bar on stderr: auto (when stderr is a terminal), on, off")
	quiet := fs.Bool("quiet", false, "do not print the tables")
	runID := fs.String("run-id", "", "ID of this run in merged results (default: start time and seed)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: tpsbench [run] [flags]\n\nWith no target flag, benchmarks two simulated providers side by side (no network).\n\nFlags:")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "tpsbench: unexpected argument %q (see tpsbench -h)\n", fs.Arg(0))
		return exitUsage
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	usage := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "tpsbench: "+format+"\n", a...)
		return exitUsage
	}

	// Targets.
	specs := append([]string(nil), targetFlags...)
	if *sims != "" {
		for _, s := range strings.Split(*sims, ",") {
			if s = strings.TrimSpace(s); s != "" {
				specs = append(specs, "sim:"+s)
			}
		}
	}
	if set["url"] || set["model"] {
		spec := "model=" + *model + ",api=" + *api + ",key-env=" + *keyEnv
		if *url != "" {
			spec += ",url=" + *url
		}
		specs = append(specs, spec)
	} else if set["api"] || set["key-env"] {
		return usage("-api and -key-env apply to the target given by -url/-model")
	}
	builtin := len(specs) == 0
	if builtin {
		specs = defaultSimTargets
	}
	var targets []targetSpec
	allSim := true
	for _, s := range specs {
		t, err := parseTarget(s)
		if err != nil {
			return usage("%v", err)
		}
		t.resolveKey(func(msg string) { fmt.Fprintln(stderr, "tpsbench: warning:", msg) })
		allSim = allSim && t.sim != ""
		targets = append(targets, t)
	}

	cfg := bench.Config{
		Concurrency: *conc, Rate: *rate, MaxInFlight: *maxInFlight, Duration: *duration, Requests: *requests,
		Warmup: *warmup, ThinkTime: *think, ProbeRepeat: *probeRepeat, Seed: *seed, Retries: *retries,
		RequestTimeout: *timeout, SampleCap: *sampleCap, RunID: *runID,
	}
	if cfg.Concurrency == 0 {
		cfg.Concurrency = realConcurrency
		if allSim {
			cfg.Concurrency = simConcurrency
		}
	}
	if cfg.Duration == 0 && cfg.Requests == 0 {
		cfg.Duration = realDuration
		if allSim {
			cfg.Duration = simDuration
		}
	}
	if set["probes"] {
		p, err := parseDurations(*probes)
		if err != nil {
			return usage("-probes: %v", err)
		}
		cfg.Probes = p
	} else if builtin {
		cfg.Probes = defaultSimProbes
	}
	if *prompts != "" {
		w, err := bench.LoadWorkload(*prompts, bench.DefaultWorkload().Buckets)
		if err != nil {
			return usage("%v", err)
		}
		cfg.Workload = w
	}
	switch *progress {
	case "auto", "on", "off":
	default:
		return usage("-progress must be auto, on or off")
	}

	// Simulated servers.
	var servers []*llmsim.Server
	defer func() {
		for _, s := range servers {
			sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			_ = s.Shutdown(sctx)
			cancel()
		}
	}()
	for i := range targets {
		t := &targets[i]
		if t.sim == "" {
			continue
		}
		srv, err := llmsim.Start(llmsim.Config{Profile: t.simProfile(), Seed: int64(*seed) + int64(i)})
		if err != nil {
			fmt.Fprintln(stderr, "tpsbench: starting the simulator:", err)
			return exitFail
		}
		servers = append(servers, srv)
		t.BaseURL, t.Hints, t.Simulated = srv.URL(), true, t.sim
	}
	for _, t := range targets {
		cfg.Targets = append(cfg.Targets, t.Target)
	}

	// The per-request CSV is streamed as requests finish; csvw is set
	// once the configuration is known to be valid.
	var csvw *bench.CSVWriter
	cfg.OnRecord = func(r bench.Record) {
		if csvw != nil {
			_ = csvw.Write(r)
		}
	}
	runner, err := bench.NewRunner(cfg)
	if err != nil {
		return usage("%v", err)
	}

	// Outputs.
	dir := ""
	if !*noFiles {
		dir = *outDir
		if dir == "" {
			dir = filepath.Join("tpsbench-results", time.Now().Format("20060102-150405"))
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			fmt.Fprintln(stderr, "tpsbench:", err)
			return exitFail
		}
		csvFile, err := os.Create(filepath.Join(dir, "requests.csv"))
		if err != nil {
			fmt.Fprintln(stderr, "tpsbench:", err)
			return exitFail
		}
		defer csvFile.Close()
		csvw = bench.NewCSVWriter(csvFile)
	}
	if showProgress(*progress, stderr) {
		stop := startProgress(runner, stderr)
		defer stop()
		res, runErr := runner.Run(ctx)
		stop()
		return finish(ctx, res, runErr, dir, csvw, *quiet, stdout, stderr)
	}
	res, runErr := runner.Run(ctx)
	return finish(ctx, res, runErr, dir, csvw, *quiet, stdout, stderr)
}

// finish writes the outputs and picks the exit code.
func finish(ctx context.Context, res *bench.Results, runErr error, dir string, csvw *bench.CSVWriter, quiet bool, stdout, stderr io.Writer) int {
	if res == nil {
		fmt.Fprintln(stderr, "tpsbench:", runErr)
		return exitFail
	}
	code := exitOK
	if csvw != nil {
		if err := csvw.Flush(); err != nil {
			fmt.Fprintln(stderr, "tpsbench: writing requests.csv:", err)
			code = exitFail
		}
	}
	if !quiet {
		if err := bench.WriteTable(stdout, res); err != nil {
			fmt.Fprintln(stderr, "tpsbench:", err)
			code = exitFail
		}
	}
	if dir != "" {
		if err := res.Save(filepath.Join(dir, "results.json")); err != nil {
			fmt.Fprintln(stderr, "tpsbench: writing results.json:", err)
			code = exitFail
		}
		if err := writeHTML(filepath.Join(dir, "report.html"), res); err != nil {
			fmt.Fprintln(stderr, "tpsbench: writing report.html:", err)
			code = exitFail
		}
		fmt.Fprintf(stdout, "\nresults: %s\nrequests: %s\nreport: %s\n",
			filepath.Join(dir, "results.json"), filepath.Join(dir, "requests.csv"), filepath.Join(dir, "report.html"))
	}
	switch {
	case errors.Is(runErr, bench.ErrInterrupted) || ctx.Err() != nil:
		fmt.Fprintln(stderr, "tpsbench: interrupted: the results written are partial (marked \"partial\": true)")
		return exitInterrupted
	case runErr != nil:
		fmt.Fprintln(stderr, "tpsbench:", runErr)
		return exitFail
	}
	return code
}

// writeHTML writes the HTML report at path.
func writeHTML(path string, res *bench.Results) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := bench.WriteHTML(f, res); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
