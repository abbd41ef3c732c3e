package bench

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
)

// CompareOptions configures Compare. The zero value uses the defaults.
type CompareOptions struct {
	// Alpha is the significance level of the tests; zero means 0.01.
	Alpha float64
	// Threshold is the relative change of the median (0.10 = 10%) beyond
	// which a significant change counts as a regression or improvement;
	// zero means 0.10.
	Threshold float64
	// ErrorRateThreshold is the absolute increase of the error rate (0.02 =
	// two percentage points) beyond which a significant increase is a
	// regression; zero means 0.02.
	ErrorRateThreshold float64
	// Metrics to compare; nil means DefaultCompareMetrics.
	Metrics []string
	// MinSamples is the smallest sample per side for a verdict; zero
	// means 8 (the normal approximation of Mann-Whitney U is poor below).
	MinSamples int
}

// DefaultCompareMetrics are the metrics Compare tests by default.
var DefaultCompareMetrics = []string{MetricTTFT, MetricDecodeTPS, MetricE2ETPS, MetricPerceivedTPS}

// MetricErrorRate is the pseudo-metric of error-rate rows in a Comparison.
const MetricErrorRate = "error_rate"

func (o CompareOptions) norm() CompareOptions {
	if o.Alpha <= 0 || o.Alpha >= 1 || math.IsNaN(o.Alpha) {
		o.Alpha = 0.01
	}
	if o.Threshold <= 0 || math.IsNaN(o.Threshold) {
		o.Threshold = 0.10
	}
	if o.ErrorRateThreshold <= 0 || math.IsNaN(o.ErrorRateThreshold) {
		o.ErrorRateThreshold = 0.02
	}
	if len(o.Metrics) == 0 {
		o.Metrics = DefaultCompareMetrics
	}
	if o.MinSamples <= 0 {
		o.MinSamples = 8
	}
	return o
}

// Verdict is the outcome of one comparison row; the zero value is not a
// verdict Compare returns.
type Verdict string

const (
	// Regression: significantly worse by more than the threshold.
	Regression Verdict = "REGRESSION"
	// Improvement: significantly better by more than the threshold.
	Improvement Verdict = "improvement"
	// Changed: a neutral metric changed significantly by more than the threshold.
	Changed Verdict = "changed"
	// Unchanged: no significant change beyond the threshold.
	Unchanged Verdict = "ok"
	// Insufficient: too few samples on one side for a verdict.
	Insufficient Verdict = "n/a"
)

// CompareRow compares one metric of one cell. Changes are relative (new /
// base - 1); Tail is the bad tail: P95 for metrics where lower is better,
// P5 for rates. It is a plain value.
type CompareRow struct {
	// Key is the cell (the new results' key when targets were renamed).
	Key CellKey `json:"cell"`
	// Metric is a metric name, or MetricErrorRate.
	Metric string `json:"metric"`
	// BaseCount and NewCount are the values (requests for error rates)
	// behind each side; BaseN and NewN the samples tested.
	BaseCount int64 `json:"base_count"`
	NewCount  int64 `json:"new_count"`
	BaseN     int   `json:"base_samples"`
	NewN      int   `json:"new_samples"`
	// BaseMedian and NewMedian are the medians (error rates for
	// MetricErrorRate); MedianChange their relative change (the absolute
	// change for error rates).
	BaseMedian   float64 `json:"base_median"`
	NewMedian    float64 `json:"new_median"`
	MedianChange float64 `json:"median_change"`
	// BaseTail and NewTail are the bad-tail percentiles; TailChange their
	// relative change.
	BaseTail   float64 `json:"base_tail"`
	NewTail    float64 `json:"new_tail"`
	TailChange float64 `json:"tail_change"`
	// P is the test's two-sided p-value (1 when no test was possible).
	P       float64 `json:"p"`
	Verdict Verdict `json:"verdict"`
	Note    string  `json:"note,omitempty"`

	isErrorRate bool
}

// Comparison is the outcome of Compare: plain data, read-only once returned.
type Comparison struct {
	Options CompareOptions
	// Rows, sorted by cell and metric.
	Rows []CompareRow
	// Notes explain how cells were matched and what was left out.
	Notes []string
}

// Regressions returns the rows with a Regression verdict.
func (c *Comparison) Regressions() []CompareRow {
	var out []CompareRow
	for _, r := range c.Rows {
		if r.Verdict == Regression {
			out = append(out, r)
		}
	}
	return out
}

// Regressed reports whether any row is a regression.
func (c *Comparison) Regressed() bool { return len(c.Regressions()) > 0 }

// Compare compares each metric of each cell present in both results with a
// Mann-Whitney U test on the per-request samples and the change of the
// medians (from the sketches). A row is a Regression when the test is
// significant (p < Alpha) and the median is worse by more than Threshold;
// the error rate of each cell is compared with a two-proportion test.
// Cells are matched by key; when each side has exactly one target and their
// names differ, cells are matched ignoring the target name. Results of
// different bucket definitions give ErrIncompatible.
func Compare(base, cur *Results, opts CompareOptions) (*Comparison, error) {
	opts = opts.norm()
	for _, m := range opts.Metrics {
		if _, ok := MetricByName(m); !ok {
			return nil, fmt.Errorf("%w: unknown metric %q", ErrConfig, m)
		}
	}
	if !sameBuckets(base, cur) {
		return nil, fmt.Errorf("%w: different length buckets (%v vs %v)", ErrIncompatible, normBuckets(base.Buckets).Names, normBuckets(cur.Buckets).Names)
	}
	cmp := &Comparison{Options: opts}
	bt, nt := base.TargetNames(), cur.TargetNames()
	rename := func(k CellKey) CellKey { return k }
	if len(bt) == 1 && len(nt) == 1 && bt[0] != nt[0] {
		cmp.Notes = append(cmp.Notes, fmt.Sprintf("comparing target %q (baseline) with %q (new)", bt[0], nt[0]))
		rename = func(k CellKey) CellKey { k.Target = bt[0]; return k }
	}
	if base.Partial {
		cmp.Notes = append(cmp.Notes, "the baseline is partial (interrupted run)")
	}
	if cur.Partial {
		cmp.Notes = append(cmp.Notes, "the new results are partial (interrupted run)")
	}
	if cur.Suspect() {
		cmp.Notes = append(cmp.Notes, "the new run's client side is suspect (see its findings): a slowdown may be the runner's")
	}
	var onlyBase, onlyNew []string
	matched := map[CellKey]bool{}
	for _, nc := range cur.Cells {
		k := rename(nc.CellKey)
		bc := base.Cell(k)
		if bc == nil {
			onlyNew = append(onlyNew, nc.CellKey.String())
			continue
		}
		matched[k] = true
		cmp.Rows = append(cmp.Rows, errorRow(bc, nc, opts))
		for _, m := range opts.Metrics {
			if bc.Metric(m).Count() == 0 && nc.Metric(m).Count() == 0 {
				continue // not measured on either side (e.g. no perceived rate)
			}
			cmp.Rows = append(cmp.Rows, metricRow(bc, nc, m, opts))
		}
	}
	for _, bc := range base.Cells {
		if !matched[bc.CellKey] {
			onlyBase = append(onlyBase, bc.CellKey.String())
		}
	}
	if len(onlyBase) > 0 {
		cmp.Notes = append(cmp.Notes, "only in the baseline: "+strings.Join(onlyBase, ", "))
	}
	if len(onlyNew) > 0 {
		cmp.Notes = append(cmp.Notes, "only in the new results: "+strings.Join(onlyNew, ", "))
	}
	return cmp, nil
}

func sameBuckets(a, b *Results) bool {
	x, y := normBuckets(a.Buckets), normBuckets(b.Buckets)
	return slices.Equal(x.Edges, y.Edges) && slices.Equal(x.Names, y.Names)
}

func errorRow(bc, nc *Cell, o CompareOptions) CompareRow {
	row := CompareRow{Key: nc.CellKey, Metric: MetricErrorRate, BaseCount: bc.Requests, NewCount: nc.Requests,
		isErrorRate: true, Verdict: Unchanged}
	row.BaseMedian, row.NewMedian = bc.ErrorRate(), nc.ErrorRate()
	row.MedianChange = row.NewMedian - row.BaseMedian // absolute, for error rates
	row.P = twoProportions(bc.ErrorCount(), bc.Requests, nc.ErrorCount(), nc.Requests)
	switch {
	case bc.Requests == 0 || nc.Requests == 0:
		row.Verdict = Insufficient
	case row.P < o.Alpha && row.MedianChange > o.ErrorRateThreshold:
		row.Verdict = Regression
	case row.P < o.Alpha && row.MedianChange < -o.ErrorRateThreshold:
		row.Verdict = Improvement
	}
	return row
}

func metricRow(bc, nc *Cell, metric string, o CompareOptions) CompareRow {
	m, _ := MetricByName(metric)
	b, n := bc.Metric(metric), nc.Metric(metric)
	row := CompareRow{Key: nc.CellKey, Metric: metric, BaseCount: b.Count(), NewCount: n.Count(),
		BaseN: len(b.samples), NewN: len(n.samples), P: 1}
	tailQ := 0.95
	if m.Better == HigherIsBetter {
		tailQ = 0.05
	}
	if b.Count() > 0 && n.Count() > 0 {
		row.BaseMedian, row.NewMedian = b.Quantile(0.5), n.Quantile(0.5)
		row.BaseTail, row.NewTail = b.Quantile(tailQ), n.Quantile(tailQ)
		row.MedianChange = relChange(row.BaseMedian, row.NewMedian)
		row.TailChange = relChange(row.BaseTail, row.NewTail)
	}
	if row.BaseN < o.MinSamples || row.NewN < o.MinSamples {
		row.Verdict = Insufficient
		row.Note = fmt.Sprintf("fewer than %d samples", o.MinSamples)
		return row
	}
	mw, err := MannWhitneyU(n.samples, b.samples)
	if err != nil {
		row.Verdict = Insufficient
		return row
	}
	row.P = mw.P
	row.Verdict = Unchanged
	if row.BaseMedian == 0 {
		row.Note = "baseline median is 0"
	}
	if mw.P >= o.Alpha {
		return row
	}
	ch := row.MedianChange
	switch m.Better {
	case LowerIsBetter:
		if ch > o.Threshold {
			row.Verdict = Regression
		} else if ch < -o.Threshold {
			row.Verdict = Improvement
		}
	case HigherIsBetter:
		if ch < -o.Threshold {
			row.Verdict = Regression
		} else if ch > o.Threshold {
			row.Verdict = Improvement
		}
	default:
		if math.Abs(ch) > o.Threshold {
			row.Verdict = Changed
		}
	}
	return row
}

// relChange is new/base - 1, or 0 when base is 0.
func relChange(base, cur float64) float64 {
	if base == 0 || math.IsNaN(base) || math.IsNaN(cur) {
		return 0
	}
	return cur/base - 1
}

// WriteText writes the comparison as a table, regressions marked, followed
// by the notes and a one-line verdict.
func (c *Comparison) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CELL\tMETRIC\tBASE p50\tNEW p50\tCHANGE\tBASE TAIL\tNEW TAIL\tCHANGE\tN (base/new)\tp\tVERDICT")
	for _, r := range c.Rows {
		if r.isErrorRate {
			fmt.Fprintf(tw, "%s\t%s\t%.1f%%\t%.1f%%\t%+.1fpp\t\t\t\t%d/%d\t%s\t%s\n", r.Key, r.Metric,
				100*r.BaseMedian, 100*r.NewMedian, 100*r.MedianChange, r.BaseCount, r.NewCount, fmtP(r.P), r.Verdict)
			continue
		}
		m, _ := MetricByName(r.Metric)
		tail := "p95"
		if m.Better == HigherIsBetter {
			tail = "p5"
		}
		note := ""
		if r.Note != "" {
			note = " (" + r.Note + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s %s\t%s\t%s\t%d/%d\t%s\t%s%s\n", r.Key, r.Metric,
			fmtMetric(m, r.BaseMedian, r.BaseCount), fmtMetric(m, r.NewMedian, r.NewCount), fmtChange(r.MedianChange, r.BaseCount, r.NewCount),
			tail, fmtMetric(m, r.BaseTail, r.BaseCount), fmtMetric(m, r.NewTail, r.NewCount), fmtChange(r.TailChange, r.BaseCount, r.NewCount),
			r.BaseN, r.NewN, fmtP(r.P), r.Verdict, note)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, n := range c.Notes {
		fmt.Fprintln(w, "note:", n)
	}
	o := c.Options
	if regs := c.Regressions(); len(regs) > 0 {
		fmt.Fprintf(w, "\nREGRESSION: %d of %d comparisons are significantly worse (p < %g) by more than %.0f%% (error rate: %.0f points)\n",
			len(regs), len(c.Rows), o.Alpha, 100*o.Threshold, 100*o.ErrorRateThreshold)
		for _, r := range regs {
			fmt.Fprintf(w, "  %s %s: %s -> %s\n", r.Key, r.Metric, fmtRow(r, r.BaseMedian, r.BaseCount), fmtRow(r, r.NewMedian, r.NewCount))
		}
		return nil
	}
	_, err := fmt.Fprintf(w, "\nno regression (p < %g and worse by more than %.0f%%) in %d comparisons\n", o.Alpha, 100*o.Threshold, len(c.Rows))
	return err
}

func fmtRow(r CompareRow, v float64, n int64) string {
	if r.isErrorRate {
		return fmt.Sprintf("%.1f%%", 100*v)
	}
	m, _ := MetricByName(r.Metric)
	return fmtMetric(m, v, n)
}

func fmtMetric(m Metric, v float64, n int64) string {
	if n == 0 {
		return "-"
	}
	switch m.Unit {
	case "s":
		return fmtDur(v)
	case "tok/s":
		return fmtRate(v)
	}
	return fmt.Sprintf("%.3g", v)
}

func fmtChange(ch float64, bn, nn int64) string {
	if bn == 0 || nn == 0 {
		return "-"
	}
	return fmt.Sprintf("%+.1f%%", 100*ch)
}

func fmtP(p float64) string {
	if p < 0.0001 {
		return "<0.0001"
	}
	return fmt.Sprintf("%.4f", p)
}
