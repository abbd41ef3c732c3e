package llmsim

import (
	"math/rand/v2"
	"testing"
	"time"
)

func rngs(seed uint64) (*rand.Rand, *rand.Rand) {
	return rand.New(rand.NewPCG(seed, 1)), rand.New(rand.NewPCG(seed, 2))
}

func TestPlanConservesTokens(t *testing.T) {
	for _, tc := range []struct {
		name   string
		p      Profile
		in     planInput
		finish string
		tokens int // per choice
	}{
		{"plain", Profile{}, planInput{n: 1, outputTokens: 37, reasoningTokens: -1}, "stop", 37},
		{"chunks and bursts", Profile{TokensPerChunk: 3, SpeculativeMaxBurst: 9}, planInput{n: 3, outputTokens: 100, reasoningTokens: -1, predictability: 0.7}, "stop", 100},
		{"cap", Profile{ReasoningTokens: 5}, planInput{n: 2, outputTokens: 100, maxTokens: 20, reasoningTokens: -1}, "length", 20},
		{"cap inside reasoning", Profile{ReasoningTokens: 50}, planInput{n: 1, outputTokens: 10, maxTokens: 20, reasoningTokens: -1}, "length", 20},
		{"tools", Profile{TokensPerChunk: 2}, planInput{n: 1, outputTokens: 30, reasoningTokens: -1, toolNames: []string{"a", "b"}}, "tool_calls", 30},
		{"tools cut", Profile{}, planInput{n: 1, outputTokens: 30, maxTokens: 7, reasoningTokens: -1, toolNames: []string{"a", "b"}}, "length", 7},
		{"empty", Profile{}, planInput{n: 1, outputTokens: 0, reasoningTokens: -1}, "stop", 0},
		{"sampled", Profile{OutputTokens: Lengths{Median: 10, Min: 10, Max: 10}}, planInput{n: 1, outputTokens: -1, reasoningTokens: -1}, "stop", 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := rngs(1)
			pl := buildPlan(tc.p, a, b, tc.in)
			sums := make([]int, len(pl.choices))
			for _, st := range pl.steps {
				seen := map[int]bool{}
				for _, pt := range st.parts {
					if seen[pt.choice] {
						t.Fatalf("choice %d twice in one step", pt.choice)
					}
					seen[pt.choice] = true
					n := pt.hi - pt.lo
					if n < 1 || n > max(tc.p.SpeculativeMaxBurst, tc.p.TokensPerChunk, 1) {
						t.Errorf("chunk of %d tokens", n)
					}
					sums[pt.choice] += n
				}
			}
			for ci, c := range pl.choices {
				if sums[ci] != tc.tokens || c.tokens() != tc.tokens || len(c.items) != tc.tokens {
					t.Errorf("choice %d: %d tokens scheduled, %d counted, %d items; want %d", ci, sums[ci], c.tokens(), len(c.items), tc.tokens)
				}
				if c.finish != tc.finish {
					t.Errorf("choice %d finish %q, want %q", ci, c.finish, tc.finish)
				}
			}
		})
	}
}

func TestPlanTimes(t *testing.T) {
	p := Profile{TTFTMedian: 100 * time.Millisecond, TokensPerSecond: 100, TokensPerChunk: 2}
	a, b := rngs(3)
	pl := buildPlan(p, a, b, planInput{n: 1, outputTokens: 10, reasoningTokens: -1, slowdown: 1.5, cold: time.Second})
	want := []time.Duration{1100, 1130, 1160, 1190, 1220}
	if len(pl.steps) != len(want) {
		t.Fatalf("%d steps", len(pl.steps))
	}
	for i, st := range pl.steps {
		if st.at != want[i]*time.Millisecond {
			t.Errorf("step %d at %v, want %vms", i, st.at, want[i])
		}
	}
	if pl.ttft != 1100*time.Millisecond || pl.end() != 1220*time.Millisecond {
		t.Errorf("ttft %v end %v", pl.ttft, pl.end())
	}
}

func TestJitterKeepsTheMeanGap(t *testing.T) {
	p := Profile{TokensPerSecond: 100, Jitter: 0.8}
	a, b := rngs(5)
	pl := buildPlan(p, a, b, planInput{n: 1, outputTokens: 20001, reasoningTokens: -1, slowdown: 1})
	mean := pl.end() / time.Duration(len(pl.steps)-1)
	if mean < 9500*time.Microsecond || mean > 10500*time.Microsecond {
		t.Errorf("mean gap %v, want ~10ms", mean)
	}
	for i := 1; i < len(pl.steps); i++ {
		if pl.steps[i].at < pl.steps[i-1].at {
			t.Fatalf("time goes back at step %d", i)
		}
	}
}

func TestBurstGrowsWithPredictability(t *testing.T) {
	mean := func(pr float64) float64 {
		rng := rand.New(rand.NewPCG(9, 9))
		sum := 0
		for range 10000 {
			sum += burst(rng, 2, 10, pr)
		}
		return float64(sum) / 10000
	}
	prev := 0.0
	for _, pr := range []float64{0, 0.2, 0.5, 0.8, 0.95, 1} {
		m := mean(pr)
		if m <= prev {
			t.Errorf("mean burst %.2f at predictability %v, not above %.2f", m, pr, prev)
		}
		prev = m
	}
	if mean(0) != 2 || mean(1) != 10 {
		t.Errorf("bounds: %v %v", mean(0), mean(1))
	}
}

func TestPlanFaultPlacement(t *testing.T) {
	a, b := rngs(1)
	pl := buildPlan(Profile{}, a, b, planInput{n: 1, outputTokens: 20, reasoningTokens: -1, fault: faultMidStream, forcedFault: true})
	if pl.failStep != 10 || pl.failKind != faultMidStream {
		t.Errorf("forced fault at step %d kind %v, want the middle (10)", pl.failStep, pl.failKind)
	}
	for seed := range uint64(50) {
		a, b := rngs(seed)
		pl := buildPlan(Profile{}, a, b, planInput{n: 1, outputTokens: 20, reasoningTokens: -1, fault: faultDrop})
		if pl.failStep < 0 || pl.failStep >= len(pl.steps) {
			t.Fatalf("fault step %d of %d", pl.failStep, len(pl.steps))
		}
	}
}

func TestLengthsSample(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for range 1000 {
		if v := (Lengths{Median: 100, Spread: 2, Min: 20, Max: 300}).sample(rng); v < 20 || v > 300 {
			t.Fatalf("sample %d outside [20,300]", v)
		}
	}
	if v := (Lengths{}).sample(rng); v != DefaultOutputTokens {
		t.Errorf("zero Lengths gave %d", v)
	}
}
