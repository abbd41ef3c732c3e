package bench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"strconv"

	"github.com/tpsmeter/tpsmeter/stats"
)

// Prompt is one request of a workload: what to ask, which output-length
// bucket and class its answer belongs to, and how long it may be. It is the
// line format of a prompt file (JSON Lines):
//
//	{"id": "sum-1", "prompt": "Summarise ...", "bucket": "medium", "class": "hard", "max_tokens": 400}
//
// Only prompt is required. A Prompt is a plain value.
type Prompt struct {
	// ID names the prompt in the per-request CSV; empty means "line-N" (or
	// "pN" for prompts not read from a file).
	ID string `json:"id,omitempty"`
	// Prompt is the user message (Chat Completions) or input (Responses).
	Prompt string `json:"prompt"`
	// System is an optional system message (Responses: instructions).
	System string `json:"system,omitempty"`
	// Bucket is the output-length bucket the answer is expected to fall in
	// (a name of the workload's LengthBuckets, by default short, medium or
	// long). Results are grouped by it; empty means the bucket of the
	// answer's measured length.
	Bucket string `json:"bucket,omitempty"`
	// Class is a free label such as "easy" or "hard" (predictable or
	// unpredictable output: speculative decoding speeds up the former).
	// Results are grouped by it. Keep the set of classes small.
	Class string `json:"class,omitempty"`
	// MaxTokens caps the answer (max_completion_tokens, max_tokens or
	// max_output_tokens). Zero means no cap.
	MaxTokens int `json:"max_tokens,omitempty"`
	// OutputTokens and OutputTokensMax are the intended answer length, a
	// fixed count or a range drawn uniformly per request. They are sent to
	// targets with Hints (simulators) and otherwise only documented. Zero
	// means a length drawn from the Bucket's range.
	OutputTokens    int `json:"output_tokens,omitempty"`
	OutputTokensMax int `json:"output_tokens_max,omitempty"`
	// Predictability in [0,1] is sent to targets with Hints; zero means 0.9
	// for class "easy", 0.1 for class "hard", and the simulator's default
	// otherwise.
	Predictability float64 `json:"predictability,omitempty"`
	// Weight is the prompt's relative frequency in the request mix; zero
	// means 1.
	Weight float64 `json:"weight,omitempty"`
}

// Workload is the set of prompts a run draws its requests from, with the
// output-length buckets its results are grouped by. The zero value is not
// usable (it has no prompts); use DefaultWorkload, ParseWorkload or
// LoadWorkload. A Workload is read-only during a run.
type Workload struct {
	// Name describes the workload in reports ("default mix", a file name).
	Name string
	// Prompts are drawn at random, by Weight, with the run's seed.
	Prompts []Prompt
	// Buckets are the output-length buckets; the zero value means
	// stats.DefaultLengthBuckets (short < 100, medium 100-499, long >= 500).
	Buckets stats.LengthBuckets
}

// maxPromptLine bounds one line of a prompt file.
const maxPromptLine = 4 << 20

// maxPrompts bounds the number of prompts in a workload.
const maxPrompts = 100_000

// maxClassLen bounds a class label.
const maxClassLen = 40

// LoadWorkload reads a prompt file (see ParseWorkload).
func LoadWorkload(path string, buckets stats.LengthBuckets) (Workload, error) {
	f, err := os.Open(path)
	if err != nil {
		return Workload{}, fmt.Errorf("%w: %v", ErrWorkload, err)
	}
	defer f.Close()
	return ParseWorkload(f, path, buckets)
}

// ParseWorkload reads a prompt file in JSON Lines format: one Prompt object
// per line; blank lines and lines starting with # are skipped. Unknown
// fields, a missing prompt, a bucket that buckets does not name, negative
// or inconsistent numbers are errors: the returned error is a *LineError
// naming the line (it matches ErrWorkload). name labels errors and the
// workload. A zero buckets means stats.DefaultLengthBuckets.
func ParseWorkload(r io.Reader, name string, buckets stats.LengthBuckets) (Workload, error) {
	buckets = normBuckets(buckets)
	w := Workload{Name: name, Buckets: buckets}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxPromptLine)
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 || b[0] == '#' {
			continue
		}
		if len(w.Prompts) >= maxPrompts {
			return Workload{}, &LineError{Name: name, Line: line, Err: fmt.Errorf("more than %d prompts", maxPrompts)}
		}
		p, err := parsePromptLine(b, buckets)
		if err != nil {
			return Workload{}, &LineError{Name: name, Line: line, Err: err}
		}
		if p.ID == "" {
			p.ID = "line-" + strconv.Itoa(line)
		}
		w.Prompts = append(w.Prompts, p)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return Workload{}, &LineError{Name: name, Line: line + 1, Err: fmt.Errorf("line longer than %d bytes", maxPromptLine)}
		}
		return Workload{}, fmt.Errorf("%w: %s: %v", ErrWorkload, name, err)
	}
	if len(w.Prompts) == 0 {
		return Workload{}, fmt.Errorf("%w: %s: no prompts", ErrWorkload, name)
	}
	return w, nil
}

func parsePromptLine(b []byte, buckets stats.LengthBuckets) (Prompt, error) {
	if b[0] != '{' {
		return Prompt{}, errors.New("not a JSON object (each line must be one {...} object)")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var p Prompt
	if err := dec.Decode(&p); err != nil {
		return Prompt{}, fmt.Errorf("invalid JSON: %v", err)
	}
	if dec.More() {
		return Prompt{}, errors.New("extra data after the JSON object")
	}
	if err := p.validate(buckets); err != nil {
		return Prompt{}, err
	}
	return p, nil
}

// validate checks one prompt against the workload's buckets.
func (p Prompt) validate(buckets stats.LengthBuckets) error {
	switch {
	case p.Prompt == "":
		return errors.New(`missing or empty "prompt"`)
	case p.MaxTokens < 0:
		return fmt.Errorf(`"max_tokens" is negative (%d)`, p.MaxTokens)
	case p.OutputTokens < 0:
		return fmt.Errorf(`"output_tokens" is negative (%d)`, p.OutputTokens)
	case p.OutputTokensMax != 0 && p.OutputTokensMax < p.OutputTokens:
		return fmt.Errorf(`"output_tokens_max" (%d) is below "output_tokens" (%d)`, p.OutputTokensMax, p.OutputTokens)
	case p.OutputTokensMax > 0 && p.OutputTokens == 0:
		return errors.New(`"output_tokens_max" needs "output_tokens" (the low end of the range)`)
	case math.IsNaN(p.Predictability) || p.Predictability < 0 || p.Predictability > 1:
		return fmt.Errorf(`"predictability" must be in [0,1], got %v`, p.Predictability)
	case math.IsNaN(p.Weight) || math.IsInf(p.Weight, 0) || p.Weight < 0:
		return fmt.Errorf(`"weight" must be a finite number >= 0, got %v`, p.Weight)
	case len(p.Class) > maxClassLen:
		return fmt.Errorf(`"class" longer than %d characters`, maxClassLen)
	}
	for _, r := range p.Class {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return fmt.Errorf(`"class" %q: use letters, digits, '-', '_' or '.'`, p.Class)
		}
	}
	if p.Bucket != "" && bucketIndex(buckets, p.Bucket) < 0 {
		return fmt.Errorf(`unknown "bucket" %q (known: %v)`, p.Bucket, buckets.Names)
	}
	return nil
}

// Validate checks every prompt (as ParseWorkload does) and the weights.
func (w Workload) Validate() error {
	if len(w.Prompts) == 0 {
		return fmt.Errorf("%w: %s: no prompts", ErrWorkload, w.Name)
	}
	b := normBuckets(w.Buckets)
	if len(b.Names) != len(b.Edges)+1 {
		return fmt.Errorf("%w: %s: length buckets have %d names for %d edges", ErrWorkload, w.Name, len(b.Names), len(b.Edges))
	}
	total := 0.0
	for i, p := range w.Prompts {
		if err := p.validate(b); err != nil {
			return fmt.Errorf("%w: %s: prompt %d (%s): %v", ErrWorkload, w.Name, i+1, p.ID, err)
		}
		total += p.weight()
	}
	if !(total > 0) || math.IsInf(total, 0) {
		return fmt.Errorf("%w: %s: the weights add up to %v", ErrWorkload, w.Name, total)
	}
	return nil
}

func (p Prompt) weight() float64 {
	if p.Weight == 0 {
		return 1
	}
	return p.Weight
}

// normBuckets replaces zero buckets by the default ones.
func normBuckets(b stats.LengthBuckets) stats.LengthBuckets {
	if len(b.Names) == 0 {
		return stats.DefaultLengthBuckets()
	}
	return b
}

// bucketIndex returns the index of name in b, or -1.
func bucketIndex(b stats.LengthBuckets, name string) int {
	for i, n := range b.Names {
		if n == name {
			return i
		}
	}
	return -1
}

// lengthRange returns the intended answer length range of p: its own
// OutputTokens[Max], else a range inside its bucket (short answers at 30-90%
// of the first edge, middle buckets in the lower half, the last bucket just
// above its edge), capped by MaxTokens. ok is false when p says nothing.
func (p Prompt) lengthRange(b stats.LengthBuckets) (lo, hi int, ok bool) {
	switch {
	case p.OutputTokens > 0:
		lo, hi = p.OutputTokens, max(p.OutputTokens, p.OutputTokensMax)
	case p.Bucket != "":
		i := bucketIndex(b, p.Bucket)
		if i < 0 {
			return 0, 0, false
		}
		switch {
		case i == 0:
			lo, hi = max(1, b.Edges[0]*3/10), max(1, b.Edges[0]*9/10)
		case i == len(b.Edges):
			e := b.Edges[i-1]
			lo, hi = e+e/25+1, e+e*3/10
		default:
			e0, e1 := b.Edges[i-1], b.Edges[i]
			lo, hi = e0+(e1-e0)/10, e0+(e1-e0)/2
		}
	default:
		return 0, 0, false
	}
	if p.MaxTokens > 0 {
		hi = min(hi, p.MaxTokens)
		lo = min(lo, hi)
	}
	return lo, hi, true
}

// predictability returns the hint for p, or -1 for none.
func (p Prompt) predictability() float64 {
	switch {
	case p.Predictability > 0:
		return p.Predictability
	case p.Class == "easy":
		return 0.9
	case p.Class == "hard":
		return 0.1
	}
	return -1
}

// job is one request to send: the prompt and the drawn answer length.
type job struct {
	seq    int
	prompt *Prompt
	length int // intended output tokens (hint), 0 = none
}

// picker chooses prompts deterministically: the i-th request of a phase gets
// the same prompt and length on every target and in every run with the
// same seed, whatever the concurrency.
type picker struct {
	w       *Workload
	buckets stats.LengthBuckets
	cum     []float64 // cumulative weights
	warm    []int     // prompts of the first (shortest) bucket, for warm-up
	seed    uint64
	offset  float64 // start of the low-discrepancy sequence, from the seed
}

// invPhi is 1/golden ratio: the step of the prompt sequence.
const invPhi = 0.6180339887498949

func newPicker(w *Workload, seed uint64) *picker {
	p := &picker{w: w, buckets: normBuckets(w.Buckets), seed: seed}
	p.offset = rand.New(rand.NewPCG(seed, 0x6f6666)).Float64()
	total := 0.0
	for i := range w.Prompts {
		total += w.Prompts[i].weight()
		p.cum = append(p.cum, total)
	}
	short := p.buckets.Names[0]
	for i := range w.Prompts {
		if w.Prompts[i].Bucket == short {
			p.warm = append(p.warm, i)
		}
	}
	return p
}

// phase salts, so that warm-up, measured and probe requests draw apart.
const (
	saltMeasure uint64 = 0x6d656173
	saltWarmup  uint64 = 0x7761726d
	saltProbe   uint64 = 0x70726f62
)

// pick returns the i-th job of the phase with the given salt.
func (p *picker) pick(salt uint64, i int) job {
	rng := rand.New(rand.NewPCG(p.seed^salt, uint64(i)))
	var idx int
	if salt == saltWarmup && len(p.warm) > 0 {
		idx = p.warm[rng.IntN(len(p.warm))]
	} else {
		// A golden-ratio (low-discrepancy) sequence instead of independent
		// draws: every prefix of the sequence follows the weights closely,
		// so even a short run gets the intended 20/60/20 mix.
		u := math.Mod(p.offset+float64(i)*invPhi, 1)
		x := u * p.cum[len(p.cum)-1]
		for idx < len(p.cum)-1 && p.cum[idx] <= x {
			idx++
		}
	}
	pr := &p.w.Prompts[idx]
	j := job{seq: i, prompt: pr}
	if lo, hi, ok := pr.lengthRange(p.buckets); ok {
		j.length = lo
		if hi > lo {
			j.length = lo + rng.IntN(hi-lo+1)
		}
	}
	return j
}

// probeJob returns the job used for every cold-start probe: the first
// prompt of the shortest bucket (or the first prompt), at the low end of
// its length range, so that the probes differ only in their idle gap.
func (p *picker) probeJob(i int) job {
	idx := 0
	if len(p.warm) > 0 {
		idx = p.warm[0]
	}
	pr := &p.w.Prompts[idx]
	j := job{seq: i, prompt: pr}
	if lo, _, ok := pr.lengthRange(p.buckets); ok {
		j.length = lo
	}
	return j
}
