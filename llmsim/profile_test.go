package llmsim_test

import (
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tpsmeter/tpsmeter/llmsim"
)

func TestPresets(t *testing.T) {
	names := llmsim.Presets()
	for _, want := range []string{"instant", "fast-steady", "bursty-batched", "slow-reasoning", "overloaded"} {
		if !slices.Contains(names, want) {
			t.Errorf("preset %q missing from %v", want, names)
		}
	}
	if !slices.IsSorted(names) {
		t.Errorf("Presets() not sorted: %v", names)
	}
	for _, n := range names {
		t.Run(n, func(t *testing.T) {
			p, ok := llmsim.Preset(n)
			if !ok || p.Name != n {
				t.Fatalf("Preset(%q) = %+v, %v", n, p, ok)
			}
			if err := p.Validate(); err != nil {
				t.Fatal(err)
			}
			b, err := json.Marshal(p)
			if err != nil {
				t.Fatal(err)
			}
			back, err := llmsim.ParseProfile(strings.NewReader(string(b)))
			if err != nil || back != p {
				t.Errorf("round trip through %s: %+v, %v", b, back, err)
			}
		})
	}
	if _, ok := llmsim.Preset("nope"); ok {
		t.Errorf("Preset(nope) found")
	}
}

func TestParseProfile(t *testing.T) {
	p, err := llmsim.ParseProfile(strings.NewReader(`{"preset":"fast-steady","tokens_per_second":20,"stall_duration":"1.5s","ttft_median":250000000,"name":"mine"}`))
	if err != nil {
		t.Fatal(err)
	}
	base, _ := llmsim.Preset("fast-steady")
	want := base
	want.Name, want.TokensPerSecond, want.StallDuration = "mine", 20, 1500*time.Millisecond
	if p != want {
		t.Errorf("got %+v\nwant %+v", p, want)
	}
	for _, tc := range []struct {
		json string
		err  error
	}{
		{`{"tokens_per_sec":20}`, llmsim.ErrInvalidProfile},
		{`{"preset":"warp-speed"}`, llmsim.ErrUnknownPreset},
		{`{"stall_duration":"soon"}`, llmsim.ErrInvalidProfile},
		{`{"stall_probability":1.5}`, llmsim.ErrInvalidProfile},
		{`{"slots":-1}`, llmsim.ErrInvalidProfile},
		{`{"output_tokens":{"min":10,"max":5}}`, llmsim.ErrInvalidProfile},
		{`not json`, llmsim.ErrInvalidProfile},
	} {
		if _, err := llmsim.ParseProfile(strings.NewReader(tc.json)); !errors.Is(err, tc.err) {
			t.Errorf("ParseProfile(%s) = %v, want %v", tc.json, err, tc.err)
		}
	}
}

func TestValidate(t *testing.T) {
	if err := (llmsim.Profile{}).Validate(); err != nil {
		t.Errorf("zero profile: %v", err)
	}
	for _, p := range []llmsim.Profile{
		{TTFTMedian: -1}, {TTFTSpread: math.NaN()}, {TokensPerSecond: math.Inf(1)}, {Jitter: -0.1},
		{TokensPerChunk: -2}, {Predictability: 2}, {DropRate: -1}, {ErrorRate: 1.01}, {MidStreamFailureRate: math.NaN()},
		{QueueLimit: -2}, {ReasoningTokens: -1}, {OutputTokens: llmsim.Lengths{Median: llmsim.MaxOutputTokens + 1}},
	} {
		if err := p.Validate(); !errors.Is(err, llmsim.ErrInvalidProfile) {
			t.Errorf("Validate(%+v) = %v", p, err)
		}
		if _, err := llmsim.Start(llmsim.Config{Profile: p}); !errors.Is(err, llmsim.ErrInvalidProfile) {
			t.Errorf("Start accepted %+v", p)
		}
		// New never fails: it clamps
		if s := llmsim.New(llmsim.Config{Profile: p}); s.Profile().Validate() != nil {
			t.Errorf("New kept an invalid profile: %+v", s.Profile())
		}
	}
}

func TestEncodingForModel(t *testing.T) {
	for model, want := range map[string]string{
		"gpt-3.5-turbo": "cl100k_base", "gpt-3.5-turbo-0125": "cl100k_base", "gpt-35-turbo": "cl100k_base",
		"gpt-4": "cl100k_base", "gpt-4-0613": "cl100k_base", "gpt-4-turbo": "cl100k_base", "openai/gpt-4": "cl100k_base",
		"gpt-4o": "o200k_base", "gpt-4o-mini": "o200k_base", "gpt-4.1-nano": "o200k_base", "o3-mini": "o200k_base",
		"gpt-5": "o200k_base", "llama-3": "o200k_base", "": "o200k_base",
	} {
		if got := llmsim.EncodingForModel(model); got != want {
			t.Errorf("EncodingForModel(%q) = %q, want %q", model, got, want)
		}
	}
}

func TestTextIsExactUnderBothEncodings(t *testing.T) {
	for _, n := range []int{0, 1, 2, 50, 777} {
		text := llmsim.Text(uint64(n), n)
		for _, model := range []string{"gpt-4", "gpt-4o"} {
			if got := countTokens(t, model, text); got != n {
				t.Errorf("Text(%d) is %d tokens under %s", n, got, llmsim.EncodingForModel(model))
			}
		}
	}
	if llmsim.Text(1, 30) != llmsim.Text(1, 30) || llmsim.Text(1, 30) == llmsim.Text(2, 30) {
		t.Errorf("Text is not a function of its seed")
	}
}
