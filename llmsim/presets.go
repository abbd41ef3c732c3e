package llmsim

import (
	"slices"
	"time"
)

// presets: numbers chosen to resemble what the recorded streams in
// shared/testdata/real-streams and public benchmarks show; docs/llmsim.md
// explains each one.
var presets = map[string]Profile{
	// Zero delays: for unit tests and examples that only care about content.
	"instant": {Name: "instant", OutputTokens: Lengths{Median: 32}},

	// A large hosted model on a quiet day: quick start, one token per chunk,
	// steady ~80 tok/s.
	"fast-steady": {
		Name:       "fast-steady",
		TTFTMedian: 250 * time.Millisecond, TTFTSpread: 0.25,
		TokensPerSecond: 80, Jitter: 0.15,
		OutputTokens: Lengths{Median: 200, Spread: 0.5, Min: 20, Max: 1000},
	},

	// A provider that batches tokens and runs speculative decoding: chunks of
	// several tokens, bursts for predictable prompts, uneven gaps and the odd
	// stall (like the gpt-4o-mini timing trace 040, where dozens of chunks
	// arrive in the same 10 ms tick).
	"bursty-batched": {
		Name:       "bursty-batched",
		TTFTMedian: 600 * time.Millisecond, TTFTSpread: 0.5,
		TokensPerSecond: 60, Jitter: 0.6,
		TokensPerChunk: 3, SpeculativeMaxBurst: 8,
		StallProbability: 0.01, StallDuration: 400 * time.Millisecond,
		OutputTokens: Lengths{Median: 250, Spread: 0.6, Min: 20, Max: 1500},
	},

	// A reasoning model: a long visible reasoning phase before a slower
	// answer (as deepseek-reasoner streams reasoning_content).
	"slow-reasoning": {
		Name:       "slow-reasoning",
		TTFTMedian: 1200 * time.Millisecond, TTFTSpread: 0.4,
		TokensPerSecond: 35, Jitter: 0.2,
		ReasoningTokens: 300, ReasoningVisible: true,
		OutputTokens: Lengths{Median: 250, Spread: 0.5, Min: 20, Max: 1500},
	},

	// A server past its capacity: few slots and a short queue (429 with
	// Retry-After beyond it), slower decoding under load, stalls, cold starts,
	// and a few failures of every kind.
	"overloaded": {
		Name:       "overloaded",
		TTFTMedian: 1500 * time.Millisecond, TTFTSpread: 0.8,
		TokensPerSecond: 20, Jitter: 0.5,
		StallProbability: 0.03, StallDuration: 1500 * time.Millisecond,
		ColdStartPenalty: 3 * time.Second, ColdStartAfter: 5 * time.Minute,
		Slots: 4, QueueLimit: 8, RetryAfter: 2 * time.Second, LoadSlowdown: 0.15,
		ErrorRate: 0.01, MidStreamFailureRate: 0.02, DropRate: 0.01,
		OutputTokens: Lengths{Median: 200, Spread: 0.5, Min: 20, Max: 1000},
	},

	// A model served locally (llama.cpp / Ollama style): tiny TTFT and ~130
	// tok/s once loaded, but an 18 s model load on the first request and after
	// five idle minutes (Ollama unloads models after 5 minutes by default).
	"local-llama": {
		Name:       "local-llama",
		TTFTMedian: 30 * time.Millisecond, TTFTSpread: 0.2,
		TokensPerSecond: 130, Jitter: 0.15,
		ColdStartPenalty: 18 * time.Second, ColdStartAfter: 5 * time.Minute,
		Slots:        1,
		OutputTokens: Lengths{Median: 256, Spread: 0.5, Min: 20, Max: 2048},
	},
}

// Preset returns the named built-in profile and true, or the zero Profile and
// false if there is no such preset. See Presets for the names.
func Preset(name string) (Profile, bool) {
	p, ok := presets[name]
	return p, ok
}

// Presets returns the names of the built-in profiles, sorted: "bursty-batched",
// "fast-steady", "instant", "local-llama", "overloaded", "slow-reasoning".
func Presets() []string {
	names := make([]string, 0, len(presets))
	for n := range presets {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
