package perceive

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Default values of the Config fields. Each is used when the field is zero.
const (
	// DefaultStallThreshold is 1 s: Nielsen's limit for the user's flow of
	// thought to stay uninterrupted.
	DefaultStallThreshold = time.Second
	// DefaultLongStallThreshold is 10 s: Nielsen's limit for keeping the
	// user's attention on the dialogue.
	DefaultLongStallThreshold = 10 * time.Second
	// DefaultJankThreshold is 100 ms: Nielsen's limit for a reaction to feel
	// instantaneous.
	DefaultJankThreshold = 100 * time.Millisecond
	// DefaultFrame is 16 ms: one refresh of a 60 Hz display (16.7 ms),
	// rounded down.
	DefaultFrame = 16 * time.Millisecond
	// DefaultPlayoutBuffer is the smoothing renderer's start-up delay, 250 ms.
	DefaultPlayoutBuffer = 250 * time.Millisecond
	// DefaultReadingWPM is 238 words per minute: the average silent reading
	// rate of adults for non-fiction in Brysbaert's 2019 meta-analysis.
	DefaultReadingWPM = 238.0
	// DefaultTokensPerWord is 4/3: OpenAI's rule of thumb that one token is
	// about three quarters of an English word. With DefaultReadingWPM it gives
	// a reading rate of 238 * 4/3 / 60 = 5.29 tokens per second.
	DefaultTokensPerWord = 4.0 / 3.0
)

// ErrInvalidConfig is wrapped by the error Config.Validate returns for a field
// that has no meaning (a negative threshold, a NaN rate, an unknown
// RenderMode). Tracker.Reset never fails: it replaces such a field by its
// default, as Config.Normalized documents.
var ErrInvalidConfig = errors.New("perceive: invalid config")

// Config holds the thresholds of the perceived-responsiveness model. It is
// plain data: the zero value of every field means that field's documented
// default (the Default... constants), so Config{} is the default
// configuration. A Config is a value; copies are independent and safe to
// share between goroutines.
type Config struct {
	// StallThreshold: a gap between two visible arrivals longer than this is
	// a stall. Zero means DefaultStallThreshold (1 s).
	StallThreshold time.Duration `json:"stall_threshold"`
	// LongStallThreshold: a stall longer than this is also a long stall
	// ("attention lost"). Long stalls are a subset of stalls: they are
	// counted in Report.Stalls too. Zero means DefaultLongStallThreshold
	// (10 s); a value below the effective StallThreshold is raised to it.
	LongStallThreshold time.Duration `json:"long_stall_threshold"`
	// JankThreshold: a gap (or, after smoothing, a pause of the rendered
	// text) longer than this is visible, no longer "instant". Zero means
	// DefaultJankThreshold (100 ms).
	JankThreshold time.Duration `json:"jank_threshold"`
	// Frame is the burstiness window: a token that becomes visible less than
	// one Frame after the previous arrival lands in the same display frame.
	// Zero means DefaultFrame (16 ms).
	Frame time.Duration `json:"frame"`
	// Render selects which renderer the headline rendered-speed fields of
	// Report describe. The zero value is Smooth. Naive numbers are always
	// reported as well (the Naive... fields).
	Render RenderMode `json:"render"`
	// RevealRate is the smoothing renderer's pace in characters per second.
	// Zero means the running average: at each arrival the rate becomes the
	// characters received after the first arrival's instant divided by the
	// time since that instant (see the package documentation).
	RevealRate float64 `json:"reveal_rate"`
	// PlayoutBuffer is how long after the first arrival the smoothing
	// renderer starts revealing text. Zero means DefaultPlayoutBuffer
	// (250 ms); a negative value means no buffer (reveal starts at the first
	// arrival).
	PlayoutBuffer time.Duration `json:"playout_buffer"`
	// ReadingWPM is the assumed reading speed in words per minute. Zero means
	// DefaultReadingWPM (238).
	ReadingWPM float64 `json:"reading_wpm"`
	// TokensPerWord converts ReadingWPM to tokens per second. Zero means
	// DefaultTokensPerWord (4/3, English prose with OpenAI encodings).
	TokensPerWord float64 `json:"tokens_per_word"`
}

// DefaultConfig returns the configuration with every field set to its
// default, which behaves exactly like Config{}.
func DefaultConfig() Config {
	return Config{}.Normalized()
}

// Normalized returns c with every zero field replaced by its default, so the
// result shows the values a Tracker will use. Fields that Validate rejects are
// replaced by their defaults too (a negative or NaN RevealRate becomes 0, the
// running average; an unknown RenderMode becomes Smooth), and
// LongStallThreshold is raised to StallThreshold when it is lower. A negative
// PlayoutBuffer (no buffer) is kept. Normalized never fails.
func (c Config) Normalized() Config {
	n := c
	if n.StallThreshold <= 0 {
		n.StallThreshold = DefaultStallThreshold
	}
	if n.LongStallThreshold <= 0 {
		n.LongStallThreshold = DefaultLongStallThreshold
	}
	if n.LongStallThreshold < n.StallThreshold {
		n.LongStallThreshold = n.StallThreshold
	}
	if n.JankThreshold <= 0 {
		n.JankThreshold = DefaultJankThreshold
	}
	if n.Frame <= 0 {
		n.Frame = DefaultFrame
	}
	if n.Render != Smooth && n.Render != Naive {
		n.Render = Smooth
	}
	if !positiveFinite(n.RevealRate) {
		n.RevealRate = 0
	}
	if n.PlayoutBuffer == 0 {
		n.PlayoutBuffer = DefaultPlayoutBuffer
	}
	if !positiveFinite(n.ReadingWPM) {
		n.ReadingWPM = DefaultReadingWPM
	}
	if !positiveFinite(n.TokensPerWord) {
		n.TokensPerWord = DefaultTokensPerWord
	}
	return n
}

// ReadingRate returns the assumed reading speed in tokens per second:
// ReadingWPM * TokensPerWord / 60, after defaults (5.29 by default).
func (c Config) ReadingRate() float64 {
	n := c.Normalized()
	return n.ReadingWPM * n.TokensPerWord / 60
}

// Validate reports the first field of c that has no meaning, as an error
// wrapping ErrInvalidConfig that names the field, or nil. Zero fields are
// valid (they mean the default), and so is a negative PlayoutBuffer (no
// buffer).
func (c Config) Validate() error {
	durs := []struct {
		name string
		v    time.Duration
	}{
		{"StallThreshold", c.StallThreshold},
		{"LongStallThreshold", c.LongStallThreshold},
		{"JankThreshold", c.JankThreshold},
		{"Frame", c.Frame},
	}
	for _, d := range durs {
		if d.v < 0 {
			return fmt.Errorf("%w: %s is negative (%v)", ErrInvalidConfig, d.name, d.v)
		}
	}
	if c.Render != Smooth && c.Render != Naive {
		return fmt.Errorf("%w: Render: %w", ErrInvalidConfig, errUnknownMode(c.Render))
	}
	floats := []struct {
		name string
		v    float64
	}{
		{"RevealRate", c.RevealRate},
		{"ReadingWPM", c.ReadingWPM},
		{"TokensPerWord", c.TokensPerWord},
	}
	for _, f := range floats {
		if f.v != 0 && !positiveFinite(f.v) {
			return fmt.Errorf("%w: %s must be zero or a positive finite number, not %v", ErrInvalidConfig, f.name, f.v)
		}
	}
	return nil
}

func positiveFinite(x float64) bool {
	return x > 0 && !math.IsInf(x, 1) // NaN fails x > 0
}
