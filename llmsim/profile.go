package llmsim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"
)

// ErrInvalidProfile is returned (wrapped) by [Profile.Validate] and
// [ParseProfile] when a field is out of range.
var ErrInvalidProfile = errors.New("llmsim: invalid profile")

// ErrUnknownPreset is returned (wrapped) by [ParseProfile] when a profile file
// names a preset that does not exist.
var ErrUnknownPreset = errors.New("llmsim: unknown preset")

// DefaultOutputTokens is the answer length when neither the request nor
// [Profile.OutputTokens] gives one.
const DefaultOutputTokens = 64

// DefaultPredictability is the predictability of a prompt when neither the
// request nor [Profile.Predictability] gives one.
const DefaultPredictability = 0.5

// Profile describes how the simulated model behaves in time: how long it takes
// to start, how fast it decodes, how it batches tokens into chunks, and how it
// fails. It is plain data: the zero value is an instant server (no delay at
// all, one token per chunk, DefaultOutputTokens tokens, no faults), every zero
// field means "off" or the documented default, and a Profile can be loaded from
// JSON with [ParseProfile] (durations as Go duration strings like "250ms").
// A Profile is safe to copy and to share read-only between goroutines.
type Profile struct {
	// Name labels the profile in logs and reports; it changes nothing else.
	Name string `json:"name,omitempty"`

	// TTFTMedian is the median time from the start of generation (the
	// request's arrival, or the moment it got a slot) to the first generated
	// token. Zero means no delay.
	TTFTMedian time.Duration `json:"ttft_median,omitempty"`
	// TTFTSpread is the sigma of ln(TTFT): TTFT is lognormal around
	// TTFTMedian. Zero makes TTFT exactly TTFTMedian; 0.5 puts the 95th
	// percentile at about 2.3x the median.
	TTFTSpread float64 `json:"ttft_spread,omitempty"`

	// TokensPerSecond is the decode rate of unpredictable text, in tokens per
	// second; the time between two chunks is TokensPerChunk/TokensPerSecond.
	// Zero means infinitely fast (all chunks at once after TTFT).
	TokensPerSecond float64 `json:"tokens_per_second,omitempty"`
	// Jitter is the sigma of a mean-preserving lognormal factor applied to
	// each gap between chunks. Zero means perfectly steady gaps.
	Jitter float64 `json:"jitter,omitempty"`
	// TokensPerChunk is the number of tokens in each chunk (batching by the
	// provider). Zero means 1.
	TokensPerChunk int `json:"tokens_per_chunk,omitempty"`
	// SpeculativeMaxBurst, when larger than TokensPerChunk, turns on
	// speculative decoding: each decode step still takes the time of one
	// ordinary chunk, but accepts extra draft tokens, each with a probability
	// equal to the prompt's predictability, up to SpeculativeMaxBurst tokens
	// per chunk. So predictable ("easy") prompts stream faster in tokens per
	// second, in larger chunks. Zero means no speculative decoding.
	SpeculativeMaxBurst int `json:"speculative_max_burst,omitempty"`
	// Predictability in [0,1] is used when the request neither sets the
	// llmsim_predictability extension nor tags its prompt "[easy]" (0.9) or
	// "[hard]" (0.1). Zero means DefaultPredictability.
	Predictability float64 `json:"predictability,omitempty"`

	// StallProbability in [0,1] is the chance that a gap between two chunks
	// gets StallDuration added (an injected stall). Zero means no stalls.
	StallProbability float64 `json:"stall_probability,omitempty"`
	// StallDuration is the length of an injected stall.
	StallDuration time.Duration `json:"stall_duration,omitempty"`

	// ColdStartPenalty is added to the TTFT of a request that finds the model
	// cold: the first request the server ever generates for, and, when
	// ColdStartAfter > 0, any request arriving after the server was idle (no
	// request in flight) for longer than ColdStartAfter. Requests arriving
	// while a cold start is in progress wait for it too. Zero means the model
	// is always warm.
	ColdStartPenalty time.Duration `json:"cold_start_penalty,omitempty"`
	// ColdStartAfter is the idle time after which the model goes cold again.
	// Zero means only the first request is cold.
	ColdStartAfter time.Duration `json:"cold_start_after,omitempty"`

	// Slots is the number of requests that generate at once; further requests
	// wait in a first-come first-served queue, so their TTFT grows with load.
	// Zero means unlimited.
	Slots int `json:"slots,omitempty"`
	// QueueLimit caps the number of requests waiting for a slot; a request
	// that finds the queue full gets 429 with a Retry-After header. Zero means
	// an unlimited queue; -1 means no queue (429 as soon as all slots are busy).
	QueueLimit int `json:"queue_limit,omitempty"`
	// RetryAfter is the delay advertised in the Retry-After header of a 429.
	// Zero means one second.
	RetryAfter time.Duration `json:"retry_after,omitempty"`
	// LoadSlowdown slows decoding under load, as continuous batching does: a
	// request that starts generating while k other requests are generating
	// has its gaps multiplied by 1 + LoadSlowdown*k. Zero means no slowdown.
	LoadSlowdown float64 `json:"load_slowdown,omitempty"`

	// ErrorRate in [0,1] is the chance that a request is answered at once with
	// an HTTP 500 in OpenAI's error shape. Zero means never.
	ErrorRate float64 `json:"error_rate,omitempty"`
	// MidStreamFailureRate in [0,1] is the chance that a stream ends early
	// with an error event (chat: a data event with a top-level "error" object;
	// responses: an "error" event). Zero means never.
	MidStreamFailureRate float64 `json:"mid_stream_failure_rate,omitempty"`
	// DropRate in [0,1] is the chance that the connection is cut in the middle
	// of a stream. Zero means never.
	DropRate float64 `json:"drop_rate,omitempty"`

	// OutputTokens is the distribution of the natural answer length, used when
	// the request does not fix it with the llmsim_output_tokens extension.
	// max_tokens, max_completion_tokens and max_output_tokens cap it.
	OutputTokens Lengths `json:"output_tokens,omitzero"`

	// ReasoningTokens is the number of reasoning tokens generated before the
	// answer (they take decode time and are counted in usage as reasoning
	// tokens). Zero means none.
	ReasoningTokens int `json:"reasoning_tokens,omitempty"`
	// ReasoningVisible streams the reasoning (chat: delta.reasoning_content, as
	// DeepSeek does; responses: reasoning summary text deltas). False keeps it
	// hidden, as OpenAI's o-series does: the client sees only a longer wait.
	ReasoningVisible bool `json:"reasoning_visible,omitempty"`
	// EarlyRoleChunk sends the chat role-only chunk as soon as generation
	// starts (as vLLM does) instead of together with the first token (as
	// OpenAI does). Clients that stamp TTFT on any chunk then measure too
	// little. False means OpenAI's behaviour.
	EarlyRoleChunk bool `json:"early_role_chunk,omitempty"`
}

// Lengths is a lognormal distribution of token counts, clamped to [Min, Max].
// The zero value means a fixed DefaultOutputTokens.
type Lengths struct {
	// Median is the median count. Zero means DefaultOutputTokens.
	Median int `json:"median,omitempty"`
	// Spread is the sigma of ln(count). Zero means always Median.
	Spread float64 `json:"spread,omitempty"`
	// Min is the smallest count. Zero means 1.
	Min int `json:"min,omitempty"`
	// Max is the largest count. Zero means no cap (beyond the server's
	// MaxOutputTokens).
	Max int `json:"max,omitempty"`
}

// MaxOutputTokens bounds the tokens of one answer (per choice), whatever the
// profile or the request asks, to keep the server's memory bounded.
const MaxOutputTokens = 100_000

// Validate reports the first out-of-range field, wrapping ErrInvalidProfile.
func (p Profile) Validate() error {
	bad := func(field string, v any) error {
		return fmt.Errorf("%w: %s = %v", ErrInvalidProfile, field, v)
	}
	finite := func(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }
	prob := func(f float64) bool { return finite(f) && f >= 0 && f <= 1 }
	nonneg := func(f float64) bool { return finite(f) && f >= 0 }
	switch {
	case p.TTFTMedian < 0:
		return bad("ttft_median", p.TTFTMedian)
	case !nonneg(p.TTFTSpread) || p.TTFTSpread > 5:
		return bad("ttft_spread", p.TTFTSpread)
	case !nonneg(p.TokensPerSecond):
		return bad("tokens_per_second", p.TokensPerSecond)
	case !nonneg(p.Jitter) || p.Jitter > 5:
		return bad("jitter", p.Jitter)
	case p.TokensPerChunk < 0 || p.TokensPerChunk > 1000:
		return bad("tokens_per_chunk", p.TokensPerChunk)
	case p.SpeculativeMaxBurst < 0 || p.SpeculativeMaxBurst > 1000:
		return bad("speculative_max_burst", p.SpeculativeMaxBurst)
	case !prob(p.Predictability):
		return bad("predictability", p.Predictability)
	case !prob(p.StallProbability):
		return bad("stall_probability", p.StallProbability)
	case p.StallDuration < 0:
		return bad("stall_duration", p.StallDuration)
	case p.ColdStartPenalty < 0:
		return bad("cold_start_penalty", p.ColdStartPenalty)
	case p.ColdStartAfter < 0:
		return bad("cold_start_after", p.ColdStartAfter)
	case p.Slots < 0:
		return bad("slots", p.Slots)
	case p.QueueLimit < -1:
		return bad("queue_limit", p.QueueLimit)
	case p.RetryAfter < 0:
		return bad("retry_after", p.RetryAfter)
	case !nonneg(p.LoadSlowdown):
		return bad("load_slowdown", p.LoadSlowdown)
	case !prob(p.ErrorRate):
		return bad("error_rate", p.ErrorRate)
	case !prob(p.MidStreamFailureRate):
		return bad("mid_stream_failure_rate", p.MidStreamFailureRate)
	case !prob(p.DropRate):
		return bad("drop_rate", p.DropRate)
	case p.OutputTokens.Median < 0 || p.OutputTokens.Median > MaxOutputTokens:
		return bad("output_tokens.median", p.OutputTokens.Median)
	case !nonneg(p.OutputTokens.Spread) || p.OutputTokens.Spread > 5:
		return bad("output_tokens.spread", p.OutputTokens.Spread)
	case p.OutputTokens.Min < 0 || p.OutputTokens.Min > MaxOutputTokens:
		return bad("output_tokens.min", p.OutputTokens.Min)
	case p.OutputTokens.Max < 0 || p.OutputTokens.Max > MaxOutputTokens:
		return bad("output_tokens.max", p.OutputTokens.Max)
	case p.OutputTokens.Max > 0 && p.OutputTokens.Max < p.OutputTokens.Min:
		return bad("output_tokens.max (below min)", p.OutputTokens.Max)
	case p.ReasoningTokens < 0 || p.ReasoningTokens > MaxOutputTokens:
		return bad("reasoning_tokens", p.ReasoningTokens)
	}
	return nil
}

// normalized returns a copy with every out-of-range field clamped into range,
// so a server built from an unchecked profile still behaves sanely.
func (p Profile) normalized() Profile {
	clampF := func(f, lo, hi float64) float64 {
		if math.IsNaN(f) || f < lo {
			return lo
		}
		return min(f, hi)
	}
	clampI := func(v, lo, hi int) int { return min(max(v, lo), hi) }
	clampD := func(d time.Duration) time.Duration { return max(d, 0) }
	p.TTFTMedian = clampD(p.TTFTMedian)
	p.TTFTSpread = clampF(p.TTFTSpread, 0, 5)
	p.TokensPerSecond = clampF(p.TokensPerSecond, 0, math.MaxFloat64)
	p.Jitter = clampF(p.Jitter, 0, 5)
	p.TokensPerChunk = clampI(p.TokensPerChunk, 0, 1000)
	p.SpeculativeMaxBurst = clampI(p.SpeculativeMaxBurst, 0, 1000)
	p.Predictability = clampF(p.Predictability, 0, 1)
	p.StallProbability = clampF(p.StallProbability, 0, 1)
	p.StallDuration = clampD(p.StallDuration)
	p.ColdStartPenalty = clampD(p.ColdStartPenalty)
	p.ColdStartAfter = clampD(p.ColdStartAfter)
	p.Slots = max(p.Slots, 0)
	p.QueueLimit = max(p.QueueLimit, -1)
	p.RetryAfter = clampD(p.RetryAfter)
	p.LoadSlowdown = clampF(p.LoadSlowdown, 0, math.MaxFloat64)
	p.ErrorRate = clampF(p.ErrorRate, 0, 1)
	p.MidStreamFailureRate = clampF(p.MidStreamFailureRate, 0, 1)
	p.DropRate = clampF(p.DropRate, 0, 1)
	p.OutputTokens.Median = clampI(p.OutputTokens.Median, 0, MaxOutputTokens)
	p.OutputTokens.Spread = clampF(p.OutputTokens.Spread, 0, 5)
	p.OutputTokens.Min = clampI(p.OutputTokens.Min, 0, MaxOutputTokens)
	p.OutputTokens.Max = clampI(p.OutputTokens.Max, 0, MaxOutputTokens)
	if p.OutputTokens.Max > 0 && p.OutputTokens.Max < p.OutputTokens.Min {
		p.OutputTokens.Max = p.OutputTokens.Min
	}
	p.ReasoningTokens = clampI(p.ReasoningTokens, 0, MaxOutputTokens)
	return p
}

// jsonDuration is a time.Duration that reads and writes JSON as a Go duration
// string ("250ms"); it also reads a number as nanoseconds.
type jsonDuration time.Duration

func (d jsonDuration) MarshalJSON() ([]byte, error) {
	return strconv.AppendQuote(nil, time.Duration(d).String()), nil
}

func (d *jsonDuration) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		v, err := time.ParseDuration(s)
		if err != nil {
			return err
		}
		*d = jsonDuration(v)
		return nil
	}
	var n float64
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("duration must be a string like \"250ms\" or a number of nanoseconds: %w", err)
	}
	if math.IsNaN(n) || math.Abs(n) > math.MaxInt64 {
		return fmt.Errorf("duration %v out of range", n)
	}
	*d = jsonDuration(time.Duration(n))
	return nil
}

// profileJSON is Profile's wire form: the same fields, durations as strings.
type profileJSON struct {
	Preset               string       `json:"preset,omitempty"`
	Name                 string       `json:"name,omitempty"`
	TTFTMedian           jsonDuration `json:"ttft_median,omitempty"`
	TTFTSpread           float64      `json:"ttft_spread,omitempty"`
	TokensPerSecond      float64      `json:"tokens_per_second,omitempty"`
	Jitter               float64      `json:"jitter,omitempty"`
	TokensPerChunk       int          `json:"tokens_per_chunk,omitempty"`
	SpeculativeMaxBurst  int          `json:"speculative_max_burst,omitempty"`
	Predictability       float64      `json:"predictability,omitempty"`
	StallProbability     float64      `json:"stall_probability,omitempty"`
	StallDuration        jsonDuration `json:"stall_duration,omitempty"`
	ColdStartPenalty     jsonDuration `json:"cold_start_penalty,omitempty"`
	ColdStartAfter       jsonDuration `json:"cold_start_after,omitempty"`
	Slots                int          `json:"slots,omitempty"`
	QueueLimit           int          `json:"queue_limit,omitempty"`
	RetryAfter           jsonDuration `json:"retry_after,omitempty"`
	LoadSlowdown         float64      `json:"load_slowdown,omitempty"`
	ErrorRate            float64      `json:"error_rate,omitempty"`
	MidStreamFailureRate float64      `json:"mid_stream_failure_rate,omitempty"`
	DropRate             float64      `json:"drop_rate,omitempty"`
	OutputTokens         Lengths      `json:"output_tokens,omitzero"`
	ReasoningTokens      int          `json:"reasoning_tokens,omitempty"`
	ReasoningVisible     bool         `json:"reasoning_visible,omitempty"`
	EarlyRoleChunk       bool         `json:"early_role_chunk,omitempty"`
}

func (p Profile) toJSON() profileJSON {
	return profileJSON{
		Name: p.Name, TTFTMedian: jsonDuration(p.TTFTMedian), TTFTSpread: p.TTFTSpread,
		TokensPerSecond: p.TokensPerSecond, Jitter: p.Jitter, TokensPerChunk: p.TokensPerChunk,
		SpeculativeMaxBurst: p.SpeculativeMaxBurst, Predictability: p.Predictability,
		StallProbability: p.StallProbability, StallDuration: jsonDuration(p.StallDuration),
		ColdStartPenalty: jsonDuration(p.ColdStartPenalty), ColdStartAfter: jsonDuration(p.ColdStartAfter),
		Slots: p.Slots, QueueLimit: p.QueueLimit, RetryAfter: jsonDuration(p.RetryAfter),
		LoadSlowdown: p.LoadSlowdown, ErrorRate: p.ErrorRate, MidStreamFailureRate: p.MidStreamFailureRate,
		DropRate: p.DropRate, OutputTokens: p.OutputTokens, ReasoningTokens: p.ReasoningTokens,
		ReasoningVisible: p.ReasoningVisible, EarlyRoleChunk: p.EarlyRoleChunk,
	}
}

func (j profileJSON) toProfile() Profile {
	return Profile{
		Name: j.Name, TTFTMedian: time.Duration(j.TTFTMedian), TTFTSpread: j.TTFTSpread,
		TokensPerSecond: j.TokensPerSecond, Jitter: j.Jitter, TokensPerChunk: j.TokensPerChunk,
		SpeculativeMaxBurst: j.SpeculativeMaxBurst, Predictability: j.Predictability,
		StallProbability: j.StallProbability, StallDuration: time.Duration(j.StallDuration),
		ColdStartPenalty: time.Duration(j.ColdStartPenalty), ColdStartAfter: time.Duration(j.ColdStartAfter),
		Slots: j.Slots, QueueLimit: j.QueueLimit, RetryAfter: time.Duration(j.RetryAfter),
		LoadSlowdown: j.LoadSlowdown, ErrorRate: j.ErrorRate, MidStreamFailureRate: j.MidStreamFailureRate,
		DropRate: j.DropRate, OutputTokens: j.OutputTokens, ReasoningTokens: j.ReasoningTokens,
		ReasoningVisible: j.ReasoningVisible, EarlyRoleChunk: j.EarlyRoleChunk,
	}
}

// MarshalJSON writes the profile with durations as Go duration strings.
func (p Profile) MarshalJSON() ([]byte, error) { return json.Marshal(p.toJSON()) }

// UnmarshalJSON reads the form MarshalJSON writes; durations may also be
// numbers of nanoseconds. Fields absent from the JSON keep their value, and a
// "preset" field is ignored here (see ParseProfile).
func (p *Profile) UnmarshalJSON(b []byte) error {
	j := p.toJSON()
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*p = j.toProfile()
	return nil
}

// ParseProfile reads a profile from JSON, rejecting unknown fields and
// out-of-range values. If the JSON has a "preset" field, the named preset is
// the starting point and the other fields override it, so
// {"preset":"fast-steady","tokens_per_second":20} is fast-steady at 20 tok/s.
func ParseProfile(r io.Reader) (Profile, error) {
	data, err := io.ReadAll(io.LimitReader(r, 1<<20))
	if err != nil {
		return Profile{}, fmt.Errorf("llmsim: reading profile: %w", err)
	}
	var head struct {
		Preset string `json:"preset"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return Profile{}, fmt.Errorf("%w: %v", ErrInvalidProfile, err)
	}
	var base Profile
	if head.Preset != "" {
		var ok bool
		if base, ok = Preset(head.Preset); !ok {
			return Profile{}, fmt.Errorf("%w: %q", ErrUnknownPreset, head.Preset)
		}
	}
	j := base.toJSON()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return Profile{}, fmt.Errorf("%w: %v", ErrInvalidProfile, err)
	}
	p := j.toProfile()
	if err := p.Validate(); err != nil {
		return Profile{}, err
	}
	return p, nil
}
