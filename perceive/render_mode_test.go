package perceive_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/tpsmeter/tpsmeter/perceive"
)

func TestRenderModeText(t *testing.T) {
	cases := []struct {
		in      string
		want    perceive.RenderMode
		wantErr bool
	}{
		{"smooth", perceive.Smooth, false},
		{"naive", perceive.Naive, false},
		{" Naive ", perceive.Naive, false},
		{"SMOOTH", perceive.Smooth, false},
		{"", perceive.Smooth, false},
		{"fast", 0, true},
		{"naive2", 0, true},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			got, err := perceive.ParseRenderMode(tc.in)
			if tc.wantErr {
				if !errors.Is(err, perceive.ErrUnknownRenderMode) {
					t.Errorf("ParseRenderMode(%q) error = %v, want ErrUnknownRenderMode", tc.in, err)
				}
				m := perceive.Naive
				if err := m.UnmarshalText([]byte(tc.in)); err == nil || m != perceive.Naive {
					t.Errorf("UnmarshalText(%q) = %v, mode %v: want error and no change", tc.in, err, m)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("ParseRenderMode(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
			}
		})
	}
	if s := perceive.RenderMode(9).String(); s != "RenderMode(9)" {
		t.Errorf("String of unknown = %q", s)
	}
	if _, err := perceive.RenderMode(9).MarshalText(); !errors.Is(err, perceive.ErrUnknownRenderMode) {
		t.Errorf("MarshalText of unknown: %v", err)
	}
	for _, m := range []perceive.RenderMode{perceive.Smooth, perceive.Naive} {
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		var back perceive.RenderMode
		if err := json.Unmarshal(b, &back); err != nil || back != m {
			t.Errorf("JSON round trip of %v: %s -> %v, %v", m, b, back, err)
		}
	}
}
