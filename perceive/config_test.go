package perceive_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/tpsmeter/tpsmeter/perceive"
)

func TestDefaultConfig(t *testing.T) {
	d := perceive.DefaultConfig()
	want := perceive.Config{
		StallThreshold:     time.Second,
		LongStallThreshold: 10 * time.Second,
		JankThreshold:      100 * time.Millisecond,
		Frame:              16 * time.Millisecond,
		Render:             perceive.Smooth,
		RevealRate:         0,
		PlayoutBuffer:      250 * time.Millisecond,
		ReadingWPM:         238,
		TokensPerWord:      4.0 / 3.0,
	}
	if d != want {
		t.Errorf("DefaultConfig() = %+v, want %+v", d, want)
	}
	if perceive.DefaultConfig() != (perceive.Config{}).Normalized() {
		t.Errorf("DefaultConfig differs from Config{}.Normalized()")
	}
	approx(t, "ReadingRate", d.ReadingRate(), 238*4.0/3/60, 1e-12)
	approx(t, "ReadingRate of Config{}", perceive.Config{}.ReadingRate(), 238*4.0/3/60, 1e-12)
	if err := (perceive.Config{}).Validate(); err != nil {
		t.Errorf("Config{}.Validate() = %v", err)
	}
}

func TestConfigNormalizedAndValidate(t *testing.T) {
	cases := []struct {
		name    string
		in      perceive.Config
		invalid bool
		check   func(t *testing.T, n perceive.Config)
	}{
		{"custom kept", perceive.Config{StallThreshold: 2 * time.Second, JankThreshold: 50 * time.Millisecond, RevealRate: 120, ReadingWPM: 300, TokensPerWord: 1.5, Render: perceive.Naive}, false,
			func(t *testing.T, n perceive.Config) {
				if n.StallThreshold != 2*time.Second || n.JankThreshold != 50*time.Millisecond || n.RevealRate != 120 || n.Render != perceive.Naive {
					t.Errorf("custom values changed: %+v", n)
				}
				approx(t, "ReadingRate", n.ReadingRate(), 300*1.5/60, 1e-12)
			}},
		{"long stall raised to stall", perceive.Config{StallThreshold: 20 * time.Second}, false,
			func(t *testing.T, n perceive.Config) {
				if n.LongStallThreshold != 20*time.Second {
					t.Errorf("LongStallThreshold = %v, want raised to 20s", n.LongStallThreshold)
				}
			}},
		{"negative playout means none", perceive.Config{PlayoutBuffer: -time.Millisecond}, false,
			func(t *testing.T, n perceive.Config) {
				if n.PlayoutBuffer >= 0 {
					t.Errorf("PlayoutBuffer = %v, want kept negative", n.PlayoutBuffer)
				}
			}},
		{"negative stall", perceive.Config{StallThreshold: -time.Second}, true,
			func(t *testing.T, n perceive.Config) {
				if n.StallThreshold != time.Second {
					t.Errorf("StallThreshold = %v, want default", n.StallThreshold)
				}
			}},
		{"negative frame", perceive.Config{Frame: -1}, true, nil},
		{"negative jank", perceive.Config{JankThreshold: -1}, true, nil},
		{"negative long stall", perceive.Config{LongStallThreshold: -1}, true, nil},
		{"NaN reveal rate", perceive.Config{RevealRate: math.NaN()}, true,
			func(t *testing.T, n perceive.Config) {
				if n.RevealRate != 0 {
					t.Errorf("RevealRate = %v, want 0 (running average)", n.RevealRate)
				}
			}},
		{"infinite reveal rate", perceive.Config{RevealRate: math.Inf(1)}, true, nil},
		{"negative wpm", perceive.Config{ReadingWPM: -5}, true,
			func(t *testing.T, n perceive.Config) {
				if n.ReadingWPM != perceive.DefaultReadingWPM {
					t.Errorf("ReadingWPM = %v, want default", n.ReadingWPM)
				}
			}},
		{"NaN tokens per word", perceive.Config{TokensPerWord: math.NaN()}, true, nil},
		{"unknown render mode", perceive.Config{Render: 7}, true,
			func(t *testing.T, n perceive.Config) {
				if n.Render != perceive.Smooth {
					t.Errorf("Render = %v, want smooth", n.Render)
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.in.Validate()
			if tc.invalid != (err != nil) {
				t.Fatalf("Validate() = %v, want invalid=%v", err, tc.invalid)
			}
			if err != nil && !errors.Is(err, perceive.ErrInvalidConfig) {
				t.Errorf("Validate() = %v, want it to wrap ErrInvalidConfig", err)
			}
			n := tc.in.Normalized()
			if err := n.Validate(); err != nil {
				t.Errorf("Normalized() = %+v is not valid: %v", n, err)
			}
			if n.Normalized() != n {
				t.Errorf("Normalized is not idempotent")
			}
			if tc.check != nil {
				tc.check(t, n)
			}
			// Reset accepts anything and uses the normalized values.
			var tr perceive.Tracker
			tr.Reset(tc.in)
			if tr.Config() != n || tr.StallThreshold() != n.StallThreshold {
				t.Errorf("Tracker config %+v, want %+v", tr.Config(), n)
			}
		})
	}
}
