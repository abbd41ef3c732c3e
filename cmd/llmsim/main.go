// Command llmsim runs the simulated OpenAI-compatible server of package
// llmsim on a local address, for trying tpsmeter, its examples and benchmark
// setups without an API key or a GPU.
//
//	go run ./cmd/llmsim -addr 127.0.0.1:8080 -preset bursty-batched
//
// Flags:
//
//	-addr ADDR       listen address (default 127.0.0.1:8080)
//	-preset NAME     built-in profile (default fast-steady); -list-presets prints them
//	-profile FILE    JSON profile (see docs/llmsim.md); may start from a preset with "preset"
//	-seed N          seed of all random choices (default 0)
//	-api-key KEY     require "Authorization: Bearer KEY" (default: no auth)
//	-max-body BYTES  request body limit (default 1 MiB)
//	-models LIST     comma-separated model names to accept and list (default: any accepted)
//
// It logs its base URL (http://ADDR/v1) and shuts down gracefully on SIGINT
// or SIGTERM, letting in-flight streams finish for up to 10 seconds.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/tpsmeter/tpsmeter/llmsim"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "llmsim:", err)
		}
		os.Exit(2)
	}
}

// shutdownGrace is how long in-flight streams may run after a signal.
const shutdownGrace = 10 * time.Second

// run parses args, serves until ctx is done, then shuts down gracefully.
// It writes "llmsim listening on URL" to stdout once the server accepts
// connections.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("llmsim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8080", "listen address")
	preset := fs.String("preset", "fast-steady", "built-in profile: "+strings.Join(llmsim.Presets(), ", "))
	profileFile := fs.String("profile", "", "JSON profile file (overrides -preset)")
	seed := fs.Int64("seed", 0, "seed of all random choices")
	apiKey := fs.String("api-key", "", "require this bearer API key (empty: no auth)")
	maxBody := fs.Int64("max-body", llmsim.DefaultMaxBodyBytes, "request body limit in bytes")
	models := fs.String("models", "", "comma-separated model names to accept (empty: any)")
	list := fs.Bool("list-presets", false, "print the presets as JSON and exit")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	if *list {
		for _, name := range llmsim.Presets() {
			p, _ := llmsim.Preset(name)
			b, err := p.MarshalJSON()
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "%s\n", b)
		}
		return nil
	}

	var profile llmsim.Profile
	if *profileFile != "" {
		f, err := os.Open(*profileFile)
		if err != nil {
			return err
		}
		profile, err = llmsim.ParseProfile(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", *profileFile, err)
		}
	} else {
		var ok bool
		if profile, ok = llmsim.Preset(*preset); !ok {
			return fmt.Errorf("unknown preset %q (have %s)", *preset, strings.Join(llmsim.Presets(), ", "))
		}
	}
	cfg := llmsim.Config{
		Profile: profile, Seed: *seed, APIKey: *apiKey, MaxBodyBytes: *maxBody, Addr: *addr,
		ErrorLog: func(msg string) { fmt.Fprintln(stderr, "llmsim: http:", msg) },
	}
	if *models != "" {
		for _, m := range strings.Split(*models, ",") {
			if m = strings.TrimSpace(m); m != "" {
				cfg.Models = append(cfg.Models, m)
			}
		}
	}
	srv, err := llmsim.Start(cfg)
	if err != nil {
		return err
	}
	name := profile.Name
	if name == "" {
		name = "custom"
	}
	fmt.Fprintf(stdout, "llmsim listening on %s (profile %s, seed %d)\n", srv.URL(), name, *seed)

	<-ctx.Done()
	fmt.Fprintln(stdout, "llmsim shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	err = srv.Shutdown(sctx)
	l := srv.Lateness()
	st := srv.Stats()
	fmt.Fprintf(stdout, "llmsim served %d generations (%d completed); event lateness p50 %v p99 %v max %v over %d events\n",
		st.Generations, st.Completed, l.P50, l.P99, l.Max, l.Count)
	if errors.Is(err, context.DeadlineExceeded) {
		return nil // streams still running after the grace period were cut
	}
	return err
}
