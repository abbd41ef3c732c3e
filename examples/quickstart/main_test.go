package main

import (
	"bytes"
	"context"
	"regexp"
	"testing"
)

// TestQuickstartRunsOffline runs the example against the in-process
// simulator and checks it printed a measurement whose count equals the
// server's usage.
func TestQuickstartRunsOffline(t *testing.T) {
	t.Setenv("OPENAI_BASE_URL", "")
	var out bytes.Buffer
	if err := run(context.Background(), &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	s := out.String()
	if !regexp.MustCompile(`TTFT \S+ \| [1-9]\d* tokens \(exact\)`).MatchString(s) {
		t.Errorf("no measurement line in output:\n%s", s)
	}
	if !regexp.MustCompile(`difference to our count: 0\)`).MatchString(s) {
		t.Errorf("count differs from the simulator's usage:\n%s", s)
	}
}
