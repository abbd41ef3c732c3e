package llmsim

import (
	"math"
	"math/rand/v2"
	"strconv"
	"time"
)

// segment kinds of a choice's output
type segKind uint8

const (
	segReasoning segKind = iota
	segContent
	segTool
)

// segment is a run of items of one kind in a choice's output.
type segment struct {
	kind   segKind
	tool   int // index of the tool call (segTool)
	lo, hi int // items[lo:hi]
}

// toolCall is one generated tool call.
type toolCall struct {
	id, name string
	lo, hi   int // argument items
}

// choiceOut is the complete output of one choice.
type choiceOut struct {
	items           []string
	segs            []segment
	tools           []toolCall
	finish          string // "stop", "length" or "tool_calls"
	reasoningTokens int
	contentTokens   int
	toolTokens      int
}

// tokens is the usage of the choice if it is streamed completely.
func (c *choiceOut) tokens() int { return c.reasoningTokens + c.contentTokens + c.toolTokens }

// part is what one choice emits in one step: items[lo:hi] of segment seg.
type part struct {
	choice int
	seg    int
	lo, hi int
}

// step is one decode step: every unfinished choice emits one chunk.
type step struct {
	at    time.Duration // offset from the generation start
	stall bool
	parts []part
}

// plan is the full, precomputed answer to one request: its text and its
// schedule. Everything in it derives from the request, the profile and two
// seeded random sources.
type plan struct {
	ttft     time.Duration // offset of the first step (includes the cold-start penalty)
	steps    []step
	choices  []choiceOut
	failStep int // index of the step replaced by a fault; -1 = none
	failKind fault
	stalls   int
}

// planInput is what buildPlan needs besides the profile.
type planInput struct {
	n               int
	outputTokens    int // -1: sample from the profile
	maxTokens       int // 0: no cap (per choice, reasoning included)
	reasoningTokens int // -1: the profile's
	toolNames       []string
	predictability  float64
	slowdown        float64 // >= 1
	cold            time.Duration
	fault           fault // faultMidStream or faultDrop, else none
	forcedFault     bool  // the fault was asked for: put it mid-stream, deterministically
	idPrefix        string
}

// lognormal returns median * exp(sigma * z).
func lognormal(rng *rand.Rand, median float64, sigma float64) float64 {
	if sigma == 0 {
		return median
	}
	return median * math.Exp(sigma*rng.NormFloat64())
}

// sample draws a length from l.
func (l Lengths) sample(rng *rand.Rand) int {
	median := l.Median
	if median <= 0 {
		median = DefaultOutputTokens
	}
	v := int(math.Round(lognormal(rng, float64(median), l.Spread)))
	v = max(v, max(l.Min, 1))
	if l.Max > 0 {
		v = min(v, l.Max)
	}
	return min(v, MaxOutputTokens)
}

// buildPlan generates the output with textRNG (so it depends on the request
// only) and the schedule with timeRNG.
func buildPlan(p Profile, textRNG, timeRNG *rand.Rand, in planInput) *plan {
	pl := &plan{failStep: -1}
	pl.choices = make([]choiceOut, in.n)
	reasoning := p.ReasoningTokens
	if in.reasoningTokens >= 0 {
		reasoning = in.reasoningTokens
	}
	for ci := range pl.choices {
		c := &pl.choices[ci]
		gen := newTextGen(textRNG) // each choice starts a fresh text
		answer := in.outputTokens
		if answer < 0 {
			answer = p.OutputTokens.sample(textRNG)
		}
		r, a := reasoning, answer
		truncated := false
		if in.maxTokens > 0 && r+a > in.maxTokens {
			truncated = true
			r = min(r, in.maxTokens)
			a = in.maxTokens - r
		}
		if r > 0 {
			lo := len(c.items)
			c.items = gen.appendItems(c.items, r)
			c.segs = append(c.segs, segment{kind: segReasoning, lo: lo, hi: len(c.items)})
			c.reasoningTokens = r
		}
		if len(in.toolNames) == 0 {
			if a > 0 {
				lo := len(c.items)
				c.items = gen.appendItems(c.items, a)
				c.segs = append(c.segs, segment{kind: segContent, lo: lo, hi: len(c.items)})
			}
			c.contentTokens = a
			c.finish = "stop"
		} else {
			// each call gets an equal share of the natural answer length
			// (at least 5 tokens: complete JSON), then the cap cuts the tail
			per := max(answer/len(in.toolNames), 5)
			budget := a
			for ti, name := range in.toolNames {
				if budget <= 0 {
					break
				}
				lo := len(c.items)
				c.items = gen.appendToolArgs(c.items, per)
				if hi := lo + budget; hi < len(c.items) {
					c.items = c.items[:hi]
				}
				budget -= len(c.items) - lo
				c.tools = append(c.tools, toolCall{id: toolCallID(in.idPrefix, ci, ti), name: name, lo: lo, hi: len(c.items)})
				c.segs = append(c.segs, segment{kind: segTool, tool: ti, lo: lo, hi: len(c.items)})
				c.toolTokens += len(c.items) - lo
			}
			c.finish = "tool_calls"
		}
		if truncated {
			c.finish = "length"
		}
	}

	// schedule
	tpc := max(p.TokensPerChunk, 1)
	var stepGap float64 // seconds per decode step
	if p.TokensPerSecond > 0 {
		stepGap = float64(tpc) / p.TokensPerSecond * in.slowdown
	}
	ttft := time.Duration(0)
	if p.TTFTMedian > 0 {
		ttft = time.Duration(lognormal(timeRNG, float64(p.TTFTMedian), p.TTFTSpread))
	}
	pl.ttft = ttft + in.cold
	at := pl.ttft
	// per-choice cursor: current segment and position
	type cursor struct{ seg, pos int }
	cur := make([]cursor, in.n)
	for ci := range cur {
		if len(pl.choices[ci].segs) > 0 {
			cur[ci].pos = pl.choices[ci].segs[0].lo
		}
	}
	for first := true; ; first = false {
		var st step
		for ci := range pl.choices {
			c := &pl.choices[ci]
			cs := &cur[ci]
			if cs.seg >= len(c.segs) {
				continue
			}
			k := burst(timeRNG, tpc, p.SpeculativeMaxBurst, in.predictability)
			sg := c.segs[cs.seg]
			hi := min(cs.pos+k, sg.hi)
			st.parts = append(st.parts, part{choice: ci, seg: cs.seg, lo: cs.pos, hi: hi})
			cs.pos = hi
			if hi == sg.hi {
				cs.seg++
				if cs.seg < len(c.segs) {
					cs.pos = c.segs[cs.seg].lo
				}
			}
		}
		if len(st.parts) == 0 {
			break
		}
		if !first {
			gap := stepGap
			if p.Jitter > 0 && gap > 0 {
				gap *= math.Exp(p.Jitter*timeRNG.NormFloat64() - p.Jitter*p.Jitter/2)
			}
			d := time.Duration(gap * float64(time.Second))
			if p.StallProbability > 0 && timeRNG.Float64() < p.StallProbability {
				d += p.StallDuration
				st.stall = true
				pl.stalls++
			}
			at += d
		}
		st.at = at
		pl.steps = append(pl.steps, st)
	}

	if in.fault == faultMidStream || in.fault == faultDrop {
		pl.failKind = in.fault
		switch {
		case len(pl.steps) == 0:
			pl.failStep = 0
		case in.forcedFault:
			pl.failStep = len(pl.steps) / 2
		default:
			pl.failStep = timeRNG.IntN(len(pl.steps))
		}
	}
	return pl
}

// burst returns the tokens of one chunk: tpc, plus up to maxBurst-tpc draft
// tokens accepted one after the other, each with probability predict.
func burst(rng *rand.Rand, tpc, maxBurst int, predict float64) int {
	k := tpc
	for k < maxBurst && rng.Float64() < predict {
		k++
	}
	return k
}

// failAt returns the offset at which the fault happens.
func (pl *plan) failAt() time.Duration {
	if pl.failStep < len(pl.steps) {
		return pl.steps[pl.failStep].at
	}
	return pl.end()
}

// end is the offset of the last step (or TTFT for an empty answer).
func (pl *plan) end() time.Duration {
	if len(pl.steps) == 0 {
		return pl.ttft
	}
	return pl.steps[len(pl.steps)-1].at
}

// usage sums the tokens of all choices.
func (pl *plan) usage() (completion, reasoning int) {
	for i := range pl.choices {
		completion += pl.choices[i].tokens()
		reasoning += pl.choices[i].reasoningTokens
	}
	return completion, reasoning
}

func toolCallID(prefix string, choice, tool int) string {
	return "call_" + prefix + "_" + strconv.Itoa(choice) + "_" + strconv.Itoa(tool)
}
