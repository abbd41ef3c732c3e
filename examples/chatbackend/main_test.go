package main

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tpsmeter/tpsmeter"
	"github.com/tpsmeter/tpsmeter/llmsim"
)

// TestChatBackendStreamsAndMeters runs the backend against the in-process
// simulator: the browser side receives the whole answer over SSE, and the
// meter recorded it with the same token count the simulator billed.
func TestChatBackendStreamsAndMeters(t *testing.T) {
	profile, _ := llmsim.Preset("fast-steady")
	// OnStream runs on the simulator's handler goroutine after its last
	// write, possibly after the client has finished reading: wait for it.
	billedc := make(chan int, 1)
	sim, err := llmsim.Start(llmsim.Config{Profile: profile, OnStream: func(r llmsim.StreamReport) { billedc <- r.CompletionTokens }})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	var logs []string
	b := NewBackend(sim.URL(), "offline", "gpt-4o-mini", func(f string, a ...any) { logs = append(logs, f) })
	srv := httptest.NewServer(b.Handler())
	defer srv.Close()

	res, err := http.Get(srv.URL + "/chat?q=hello+there")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type = %q", ct)
	}
	var text strings.Builder
	var done string
	sc := bufio.NewScanner(res.Body)
	event := ""
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: ") && event == "":
			var s string
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &s); err != nil {
				t.Fatalf("bad data line %q: %v", line, err)
			}
			text.WriteString(s)
		case strings.HasPrefix(line, "data: ") && event == "done":
			done = strings.TrimPrefix(line, "data: ")
		case line == "":
			event = ""
		}
	}
	if text.Len() == 0 || done == "" {
		t.Fatalf("answer %q, done %q", text.String(), done)
	}
	var m struct {
		Tokens int            `json:"tokens"`
		Basis  tpsmeter.Basis `json:"basis"`
	}
	if err := json.Unmarshal([]byte(done), &m); err != nil {
		t.Fatal(err)
	}
	var billed int
	select {
	case billed = <-billedc:
	case <-time.After(10 * time.Second):
		t.Fatal("the simulator never reported the stream")
	}
	if m.Tokens != billed || m.Basis != tpsmeter.BasisExact {
		t.Errorf("metered %d tokens (%s), simulator billed %d", m.Tokens, m.Basis, billed)
	}
	snap := b.Meter.Snapshot()
	if len(snap) != 1 || snap[0].Requests != 1 || snap[0].TTFT.Count != 1 {
		t.Errorf("aggregates: %+v", snap)
	}
	if len(logs) != 1 {
		t.Errorf("Finish hook logged %d times, want 1", len(logs))
	}
}
