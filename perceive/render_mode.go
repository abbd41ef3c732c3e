package perceive

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// RenderMode names the model of the user interface that turns arrivals into
// visible text. The zero value is Smooth. A RenderMode is a plain value, safe
// to copy and share.
type RenderMode uint8

const (
	// Smooth is a smoothing renderer: it buffers arriving characters and,
	// starting PlayoutBuffer after the first arrival, reveals them at a
	// steady RevealRate while it has unrevealed characters.
	Smooth RenderMode = iota
	// Naive shows every chunk in full the moment it arrives, as a UI that
	// appends each delta to the page does.
	Naive
)

// ErrUnknownRenderMode is wrapped by the errors of ParseRenderMode,
// RenderMode.UnmarshalText and RenderMode.MarshalText for a name or value
// that is not a known mode.
var ErrUnknownRenderMode = errors.New("perceive: unknown render mode")

func errUnknownMode(m RenderMode) error {
	return fmt.Errorf("%w: %d", ErrUnknownRenderMode, uint8(m))
}

// String returns "smooth" or "naive", or "RenderMode(N)" for an unknown value.
func (m RenderMode) String() string {
	switch m {
	case Smooth:
		return "smooth"
	case Naive:
		return "naive"
	}
	return "RenderMode(" + strconv.Itoa(int(m)) + ")"
}

// ParseRenderMode returns the mode named s ("smooth" or "naive", any case,
// surrounding spaces ignored). An empty s is Smooth, the zero value. Any other
// name gives an error wrapping ErrUnknownRenderMode.
func ParseRenderMode(s string) (RenderMode, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "smooth":
		return Smooth, nil
	case "naive":
		return Naive, nil
	}
	return Smooth, fmt.Errorf("%w: %q", ErrUnknownRenderMode, s)
}

// MarshalText implements encoding.TextMarshaler, so the mode appears in JSON
// as "smooth" or "naive". An unknown value is an error wrapping
// ErrUnknownRenderMode.
func (m RenderMode) MarshalText() ([]byte, error) {
	if m != Smooth && m != Naive {
		return nil, errUnknownMode(m)
	}
	return []byte(m.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler with ParseRenderMode. On
// error *m is left unchanged.
func (m *RenderMode) UnmarshalText(b []byte) error {
	v, err := ParseRenderMode(string(b))
	if err != nil {
		return err
	}
	*m = v
	return nil
}
