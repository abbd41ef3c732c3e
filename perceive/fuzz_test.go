package perceive_test

import (
	"strings"
	"testing"
	"time"

	"github.com/tpsmeter/tpsmeter/perceive"
)

// FuzzObserve feeds arbitrary arrival sequences (including times that go
// backwards, negative counts and credits without text) and checks that the
// Tracker never panics, keeps every invariant, and, for well-formed
// sequences, agrees with the reference implementations.
//
// Input: 4 config bytes, then 4 bytes per call: time step in ms (2 bytes,
// top bit = step backwards), tokens (int8), chars (int8).
func FuzzObserve(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 0, 50, 1, 4, 0, 50, 1, 4, 0, 50, 1, 4})
	f.Add([]byte{1, 3, 10, 1, 0, 10, 3, 9, 128, 5, 1, 1, 0, 0, 2, 0, 12, 0, 1, 7})
	f.Add([]byte{5, 255, 0, 0, 0, 100, 0, 3, 0, 0, 0, 0, 19, 136, 4, 16, 0, 1, 255, 255})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 4 {
			return
		}
		cfg := perceive.Config{
			StallThreshold: time.Duration(data[0]) * 100 * time.Millisecond,
			PlayoutBuffer:  time.Duration(int8(data[1])) * 10 * time.Millisecond,
			RevealRate:     float64(data[2]) * 3,
			Render:         perceive.RenderMode(data[3] % 3), // 2 is unknown: normalized to Smooth
		}
		data = data[4:]
		if len(data) > 4*64 {
			data = data[:4*64]
		}
		var tr perceive.Tracker
		tr.Reset(cfg)
		var tl []arrival
		clean := true
		at := time.Duration(0)
		for ; len(data) >= 4; data = data[4:] {
			step := time.Duration(int(data[0]&0x7f)<<8|int(data[1])) * time.Millisecond
			if data[0]&0x80 != 0 {
				at -= step
				if step > 0 {
					clean = false
				}
			} else {
				at += step
			}
			tok, ch := int(int8(data[2])), int(int8(data[3]))
			if tok < 0 || ch <= 0 || at < 0 {
				clean = false
			}
			tr.Observe(at, tok, ch)
			tl = append(tl, arrival{at, tok, ch})
			if d, ok := tr.StallDeadline(); ok && d < 0 {
				t.Fatalf("negative stall deadline %v", d)
			}
		}
		r := tr.Report(at + time.Second)
		checkInvariants(t, r)
		if r2 := tr.Report(at + time.Second); r2 != r {
			t.Fatalf("Report is not repeatable")
		}
		// The step-by-step reference is slow when a tiny reveal rate makes the
		// renderer run for hours; compare only reasonably short runs.
		if clean && len(tl) > 0 && cfg.Normalized().Render == perceive.Smooth && r.TimeToLastVisible < 30*time.Minute {
			checkAgainstReferences(t, tl, cfg, at+time.Second)
		}
	})
}

// FuzzParseRenderMode checks that parsing never panics, accepts exactly the
// two names, and round-trips through the text form.
func FuzzParseRenderMode(f *testing.F) {
	for _, s := range []string{"smooth", "naive", "", " NAIVE", "nave", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := perceive.ParseRenderMode(s)
		norm := strings.ToLower(strings.TrimSpace(s))
		valid := norm == "" || norm == "smooth" || norm == "naive"
		if valid != (err == nil) {
			t.Fatalf("ParseRenderMode(%q) = %v, %v", s, m, err)
		}
		if err != nil {
			return
		}
		b, err := m.MarshalText()
		if err != nil {
			t.Fatalf("MarshalText(%v): %v", m, err)
		}
		var back perceive.RenderMode
		if err := back.UnmarshalText(b); err != nil || back != m {
			t.Fatalf("round trip %v -> %q -> %v, %v", m, b, back, err)
		}
	})
}
