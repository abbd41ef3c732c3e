package bench_test

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/tpsmeter/tpsmeter/bench"
)

func TestNewRunnerValidates(t *testing.T) {
	ok := bench.Target{BaseURL: "http://127.0.0.1:1/v1", Model: "m"}
	tests := []struct {
		name string
		cfg  bench.Config
		want error
	}{
		{"no target", bench.Config{}, bench.ErrConfig},
		{"no url", bench.Config{Targets: []bench.Target{{Model: "m"}}}, bench.ErrConfig},
		{"bad url", bench.Config{Targets: []bench.Target{{BaseURL: "ftp://x", Model: "m"}}}, bench.ErrConfig},
		{"no model", bench.Config{Targets: []bench.Target{{BaseURL: "http://x/v1"}}}, bench.ErrConfig},
		{"bad api", bench.Config{Targets: []bench.Target{{BaseURL: "http://x/v1", Model: "m", API: "completions"}}}, bench.ErrConfig},
		{"bad max-tokens field", bench.Config{Targets: []bench.Target{{BaseURL: "http://x/v1", Model: "m", MaxTokensField: "max"}}}, bench.ErrConfig},
		{"negative concurrency", bench.Config{Targets: []bench.Target{ok}, Concurrency: -1}, bench.ErrConfig},
		{"NaN rate", bench.Config{Targets: []bench.Target{ok}, Rate: math.NaN()}, bench.ErrConfig},
		{"negative duration", bench.Config{Targets: []bench.Target{ok}, Duration: -time.Second}, bench.ErrConfig},
		{"negative probe", bench.Config{Targets: []bench.Target{ok}, Probes: []time.Duration{-1}}, bench.ErrConfig},
		{"bad workload", bench.Config{Targets: []bench.Target{ok}, Workload: bench.Workload{Prompts: []bench.Prompt{{Prompt: ""}}}}, bench.ErrWorkload},
		{"valid", bench.Config{Targets: []bench.Target{ok, ok}}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := bench.NewRunner(tc.cfg)
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestTargetNamesUnique(t *testing.T) {
	tg := startSim(t, "", preset(t, "instant"), 1)
	tg.Name = ""
	res := mustRun(t, bench.Config{Targets: []bench.Target{tg, tg}, Requests: 2, Concurrency: 1})
	names := res.TargetNames()
	if len(names) != 2 || names[0] != "gpt-4o-mini" || names[1] != "gpt-4o-mini#2" {
		t.Fatalf("names = %v, want the model name made unique", names)
	}
}

func TestRunTwice(t *testing.T) {
	r, err := bench.NewRunner(bench.Config{Targets: []bench.Target{startSim(t, "a", preset(t, "instant"), 1)}, Requests: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Run(context.Background()); !errors.Is(err, bench.ErrConfig) {
		t.Fatalf("second Run: err = %v, want ErrConfig", err)
	}
	if p := r.Progress(); p.Phase != "done" || p.Total != 1 {
		t.Fatalf("progress after the run = %+v", p)
	}
}

func TestPoissonSchedule(t *testing.T) {
	a, b := bench.NewPoisson(10, 42), bench.NewPoisson(10, 42)
	var last time.Duration
	const n = 5000
	for i := 0; i < n; i++ {
		x, y := a.Next(), b.Next()
		if x != y {
			t.Fatalf("arrival %d differs for one seed: %v vs %v", i, x, y)
		}
		if x < last {
			t.Fatalf("arrival %d at %v before the previous one %v", i, x, last)
		}
		last = x
	}
	if rate := n / last.Seconds(); rate < 9.5 || rate > 10.5 {
		t.Fatalf("mean rate %.2f/s, want about 10/s", rate)
	}
}
