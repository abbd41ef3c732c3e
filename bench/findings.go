package bench

import (
	"fmt"
	"math"
	"slices"
)

// Finding is something the results suggest, for people: a likely
// speculative-decoding or batching effect, a cold start, a runner that
// could not keep up, errors, stalls. It is a plain value.
type Finding struct {
	// Kind is one of the Finding* constants.
	Kind string `json:"kind"`
	// Target and Bucket locate the finding (empty when it is general).
	Target string `json:"target,omitempty"`
	Bucket string `json:"bucket,omitempty"`
	// Severity is "info" or "warning".
	Severity string `json:"severity"`
	// Message says it in one sentence.
	Message string `json:"message"`
	// Value is the finding's key number (a ratio, a share, seconds).
	Value float64 `json:"value,omitempty"`
}

// Finding kinds.
const (
	FindingSpeculative = "speculative_decoding"
	FindingMultiToken  = "multi_token_chunks"
	FindingColdStart   = "cold_start"
	FindingClientLag   = "client_lag"
	FindingErrors      = "errors"
	FindingStalls      = "stalls"
	FindingPartial     = "partial"
	FindingMismatch    = "bucket_mismatch"
)

// Thresholds of Analyze.
const (
	// SpeculativeMinRatio is the easy/hard median decode-TPS ratio above
	// which (when significant at SpeculativeAlpha) Analyze reports likely
	// speculative decoding.
	SpeculativeMinRatio = 1.15
	SpeculativeAlpha    = 0.01
	// MultiTokenMedian is the median tokens per chunk from which Analyze
	// reports multi-token chunks (it also reports bursts when the 90th
	// percentile reaches 2).
	MultiTokenMedian = 1.5
	// ColdStartMinRatio and ColdStartMinDelta (seconds) define a cold
	// start: a probe TTFT (after a non-zero idle gap) more than this many
	// times, and this much above, the warm median TTFT, and above the warm
	// 95th percentile.
	ColdStartMinRatio = 1.5
	ColdStartMinDelta = 0.2
)

// Analyze derives the findings of a set of results. It is deterministic:
// the same results give the same findings.
func Analyze(r *Results) []Finding {
	var out []Finding
	if r.Partial {
		msg := "partial results: the run was interrupted before it finished; only completed requests are in the numbers"
		if r.Aborted != "" {
			msg = "partial results: the run was aborted: " + r.Aborted
		}
		out = append(out, Finding{Kind: FindingPartial, Severity: "warning", Message: msg})
	}
	for _, run := range r.Runs {
		for _, reason := range run.Reasons {
			out = append(out, Finding{Kind: FindingClientLag, Severity: "warning", Message: "results suspect: " + reason})
		}
	}
	for _, t := range r.TargetNames() {
		out = append(out, analyzeTarget(r, t)...)
	}
	return out
}

func analyzeTarget(r *Results, t string) []Finding {
	var out []Finding
	var reqs, ok, mismatches int64
	errs := map[string]int64{}
	easy, hard := NewDist(DefaultSampleCap, 1), NewDist(DefaultSampleCap, 2)
	easyTPC, hardTPC := NewDist(DefaultSampleCap, 3), NewDist(DefaultSampleCap, 4)
	for _, c := range r.Cells {
		if c.Target != t || c.Phase != PhaseMeasure {
			continue
		}
		reqs += c.Requests
		ok += c.Completed
		mismatches += c.BucketMismatches
		for e, n := range c.Errors {
			errs[e] += n
		}
		switch c.Class {
		case "easy":
			_ = easy.Merge(c.Metrics[MetricDecodeTPS])
			_ = easyTPC.Merge(c.Metrics[MetricTokensPerChunk])
		case "hard":
			_ = hard.Merge(c.Metrics[MetricDecodeTPS])
			_ = hardTPC.Merge(c.Metrics[MetricTokensPerChunk])
		}
	}
	if reqs > ok {
		rate := float64(reqs-ok) / float64(reqs)
		sev := "info"
		if rate > 0.05 {
			sev = "warning"
		}
		out = append(out, Finding{Kind: FindingErrors, Target: t, Severity: sev, Value: rate,
			Message: fmt.Sprintf("%s: %d of %d requests failed (%.1f%%): %s", t, reqs-ok, reqs, 100*rate, errorList(errs))})
	}
	if len(easy.samples) >= 5 && len(hard.samples) >= 5 {
		me, mh := easy.Quantile(0.5), hard.Quantile(0.5)
		mw, err := MannWhitneyU(easy.samples, hard.samples)
		if err == nil && mh > 0 && me/mh >= SpeculativeMinRatio && mw.P < SpeculativeAlpha {
			msg := fmt.Sprintf("%s: easy prompts decode %.1fx faster than hard ones (median %s vs %s tok/s, Mann-Whitney p=%.2g)",
				t, me/mh, fmtRate(me), fmtRate(mh), mw.P)
			if te, th := easyTPC.Quantile(0.5), hardTPC.Quantile(0.5); te > th {
				msg += fmt.Sprintf(", in bigger chunks (%.1f vs %.1f tokens per chunk)", easyTPC.Summary().Mean, hardTPC.Summary().Mean)
			}
			msg += ": likely speculative decoding (draft tokens are accepted more often on predictable text), so headline TPS depends on the prompt"
			out = append(out, Finding{Kind: FindingSpeculative, Target: t, Severity: "info", Value: me / mh, Message: msg})
		}
	}
	tpc := r.Combined(t, PhaseMeasure, MetricTokensPerChunk)
	if tpc.Count() > 0 {
		s := tpc.Summary()
		switch {
		case s.P50 >= MultiTokenMedian:
			out = append(out, Finding{Kind: FindingMultiToken, Target: t, Severity: "info", Value: s.P50,
				Message: fmt.Sprintf("%s: multi-token chunks (median %.0f, p90 %.0f tokens per chunk): the provider batches tokens or decodes speculatively; gaps between chunks are not gaps between tokens", t, s.P50, s.P90)})
		case s.P90 >= 2:
			out = append(out, Finding{Kind: FindingMultiToken, Target: t, Severity: "info", Value: s.P90,
				Message: fmt.Sprintf("%s: bursts of several tokens per chunk (p90 %.0f, max %.0f; median %.0f): speculative decoding or uneven batching", t, s.P90, s.Max, s.P50)})
		}
	}
	stalls := r.Combined(t, PhaseMeasure, MetricStalls)
	if n := len(stalls.samples); n > 0 {
		with := 0
		for _, v := range stalls.samples {
			if v > 0 {
				with++
			}
		}
		if share := float64(with) / float64(n); share >= 0.05 {
			lg := r.Combined(t, PhaseMeasure, MetricLongestGap)
			out = append(out, Finding{Kind: FindingStalls, Target: t, Severity: "warning", Value: share,
				Message: fmt.Sprintf("%s: %.0f%% of requests stalled (a gap of more than 1 s in the stream); longest gap p99 %s", t, 100*share, fmtDur(lg.Quantile(0.99)))})
		}
	}
	if ok > 0 && float64(mismatches)/float64(ok) > 0.1 {
		out = append(out, Finding{Kind: FindingMismatch, Target: t, Severity: "info", Value: float64(mismatches) / float64(ok),
			Message: fmt.Sprintf("%s: %d of %d answers fell outside the length bucket their prompt expected: check max_tokens and the prompts' buckets", t, mismatches, ok)})
	}
	out = append(out, coldStart(r, t)...)
	return out
}

// coldStart compares probe TTFTs per idle gap with the warm reference: the
// warm requests' median, else the shortest-gap probe.
func coldStart(r *Results, t string) []Finding {
	byIdle := map[float64]*Dist{}
	var gaps []float64
	for _, c := range r.Cells {
		if c.Target != t || c.Phase != PhaseProbe {
			continue
		}
		d := byIdle[c.Idle]
		if d == nil {
			d = NewDist(DefaultSampleCap, 5)
			byIdle[c.Idle] = d
			gaps = append(gaps, c.Idle)
		}
		_ = d.Merge(c.Metrics[MetricTTFT])
	}
	if len(gaps) == 0 {
		return nil
	}
	slices.Sort(gaps)
	// The reference is the warm requests' median when there are enough of
	// them (one probe is one noisy sample), else the shortest-gap probe. A
	// probe is cold when its TTFT is well above the reference and above
	// what warm requests see 95% of the time (a single probe of a server
	// with a wide TTFT spread is often slower than the median).
	ref, refName, tail := math.NaN(), "", 0.0
	w := r.Combined(t, PhaseMeasure, MetricTTFT)
	switch {
	case w.Count() >= 5:
		ref, refName, tail = w.Quantile(0.5), "warm median", w.Quantile(0.95)
	case byIdle[gaps[0]].Count() > 0 && gaps[0] < 1:
		ref, refName = byIdle[gaps[0]].Quantile(0.5), "after "+fmtSeconds(gaps[0])+" idle"
	case w.Count() > 0:
		ref, refName = w.Quantile(0.5), "warm median"
	}
	if math.IsNaN(ref) {
		return nil
	}
	limit := math.Max(math.Max(ref*ColdStartMinRatio, ref+ColdStartMinDelta), tail)
	var out []Finding
	for _, g := range gaps {
		d := byIdle[g]
		if d.Count() == 0 || g == 0 {
			continue // a probe sent right after traffic is the warm case
		}
		v := d.Quantile(0.5)
		if v > limit {
			out = append(out, Finding{Kind: FindingColdStart, Target: t, Severity: "warning", Value: v - ref,
				Message: fmt.Sprintf("%s: cold start after %s idle: TTFT %s vs %s (%s), +%s, x%.1f", t, fmtSeconds(g), fmtDur(v), fmtDur(ref), refName, fmtDur(v-ref), v/ref)})
		}
	}
	if out == nil {
		out = append(out, Finding{Kind: FindingColdStart, Target: t, Severity: "info",
			Message: fmt.Sprintf("%s: no cold start seen after up to %s idle (TTFT within x%.1f of the %s)", t, fmtSeconds(gaps[len(gaps)-1]), ColdStartMinRatio, refName)})
	}
	return out
}

// fmtDur renders seconds for people: "850ms", "1.42s", "2m3s".
func fmtDur(s float64) string {
	switch {
	case math.IsNaN(s):
		return "-"
	case s < 0.0001 && s > -0.0001:
		return "0"
	case math.Abs(s) < 0.01:
		return fmt.Sprintf("%.1fms", s*1000)
	case math.Abs(s) < 1:
		return fmt.Sprintf("%.0fms", s*1000)
	case math.Abs(s) < 100:
		return fmt.Sprintf("%.2fs", s)
	}
	return fmtSeconds(math.Round(s))
}

// fmtRate renders a token rate: "82", "7.5".
func fmtRate(v float64) string {
	switch {
	case math.IsNaN(v):
		return "-"
	case v < 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.0f", v)
}
