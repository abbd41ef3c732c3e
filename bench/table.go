package bench

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
)

// WriteTable writes the results as terminal tables: one row per target x
// bucket x class of the measured phase (with an "all" row per target),
// the cold-start probes, the client side, and the findings.
func WriteTable(w io.Writer, r *Results) error {
	ew := &errWriter{w: w}
	writeHeader(ew, r)
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TARGET\tBUCKET\tCLASS\tREQS\tERR\tTTFT p50\tp95\tp99\tDECODE tok/s p50\tp5\tE2E tok/s p50\tPERCEIVED tok/s p50\tSTALLS p95\tTOK/CHUNK p50\tp99")
	for _, t := range r.TargetNames() {
		n := 0
		for _, c := range r.Cells {
			if c.Target == t && c.Phase == PhaseMeasure {
				writeRow(tw, c.Target, c.Bucket, c.Class, c)
				n++
			}
		}
		if n > 1 {
			writeRow(tw, t, "all", "", combinedCell(r, t, PhaseMeasure))
		}
	}
	tw.Flush()

	var probes []*Cell
	for _, c := range r.Cells {
		if c.Phase == PhaseProbe {
			probes = append(probes, c)
		}
	}
	if len(probes) > 0 {
		fmt.Fprintln(ew, "\nCold-start probes (one request after the target sat idle):")
		tw = tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "TARGET\tIDLE\tREQS\tERR\tTTFT p50\tmax\tvs WARM TTFT p50")
		for _, c := range probes {
			ttft := c.Metric(MetricTTFT)
			warm := r.Combined(c.Target, PhaseMeasure, MetricTTFT)
			vs := "-"
			if ttft.Count() > 0 && warm.Count() > 0 {
				v, ref := ttft.Quantile(0.5), warm.Quantile(0.5)
				vs = fmt.Sprintf("x%.1f (%+.0fms)", v/ref, 1000*(v-ref))
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\n", c.Target, fmtSeconds(c.Idle), c.Requests, errCell(c),
				fmtQ(ttft, 0.5, fmtDur), fmtQ(ttft, 1, fmtDur), vs)
		}
		tw.Flush()
	}

	clients := 0
	for _, run := range r.Runs {
		clients += len(run.Client)
	}
	if clients > 0 {
		fmt.Fprintln(ew, "\nClient side (measured phase):")
		tw = tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "RUN\tTARGET\tMODE\tREQS\tACHIEVED CONC\tACHIEVED RATE\tSEND LAG p50\tp99\tmax\tSTATUS")
		for _, run := range r.Runs {
			for _, cs := range run.Client {
				mode := fmt.Sprintf("closed x%d", cs.Concurrency)
				lag50, lag99, lagMax := "-", "-", "-"
				if cs.Mode == ModeOpen {
					mode = fmt.Sprintf("open %g/s", cs.Rate)
					if cs.Lag != nil && cs.Lag.Count() > 0 {
						s := cs.Lag.Summary()
						lag50, lag99, lagMax = fmtDur(s.P50), fmtDur(s.P99), fmtDur(s.Max)
					}
				}
				status := "ok"
				if cs.Suspect {
					status = "SUSPECT"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%.1f\t%.2f/s\t%s\t%s\t%s\t%s\n", run.ID, cs.Target, mode, cs.Requests,
					cs.AchievedConcurrency, cs.AchievedRate, lag50, lag99, lagMax, status)
			}
		}
		tw.Flush()
		for _, run := range r.Runs {
			if run.SchedLag != nil && run.SchedLag.Count() > 0 {
				s := run.SchedLag.Summary()
				fmt.Fprintf(ew, "run %s: %d requests in %s; runner timer lag p50 %s, p99 %s, max %s\n",
					run.ID, run.Requests, fmtDur(run.Elapsed), fmtDur(s.P50), fmtDur(s.P99), fmtDur(s.Max))
			}
		}
	}

	if fs := Analyze(r); len(fs) > 0 {
		fmt.Fprintln(ew, "\nFindings:")
		for _, f := range fs {
			mark := "-"
			if f.Severity == "warning" {
				mark = "!"
			}
			fmt.Fprintf(ew, " %s %s\n", mark, f.Message)
		}
	}
	return ew.err
}

func writeHeader(w io.Writer, r *Results) {
	s := r.Settings
	var names []string
	for _, t := range s.Targets {
		d := t.Name + " (" + t.Model
		if t.Simulated != "" {
			d += ", simulated " + t.Simulated
		}
		names = append(names, d+")")
	}
	load := fmt.Sprintf("closed loop, %d concurrent per target", s.Concurrency)
	if s.Mode == ModeOpen {
		load = fmt.Sprintf("open loop, Poisson %g req/s per target", s.Rate)
	}
	var limits []string
	if s.Duration > 0 {
		limits = append(limits, fmtSeconds(s.Duration))
	}
	if s.Requests > 0 {
		limits = append(limits, fmt.Sprintf("%d requests", s.Requests))
	}
	fmt.Fprintf(w, "tpsbench: %s\n", strings.Join(names, " vs "))
	if s.Mode != "" {
		fmt.Fprintf(w, "load: %s, %s; warm-up %d; workload: %s\n", load, strings.Join(limits, " or "), s.Warmup, s.Workload)
	}
	if len(r.Runs) > 1 {
		fmt.Fprintf(w, "merged from %d runs\n", len(r.Runs))
	}
	if r.Partial {
		fmt.Fprintln(w, "PARTIAL RESULTS: the run did not finish", r.Aborted)
	}
	fmt.Fprintln(w)
}

// combinedCell merges every cell of a target and phase.
func combinedCell(r *Results, target, phase string) *Cell {
	out := &Cell{CellKey: CellKey{Target: target, Bucket: "all", Phase: phase}, Metrics: map[string]*Dist{}}
	for _, c := range r.Cells {
		if c.Target != target || c.Phase != phase {
			continue
		}
		out.Requests += c.Requests
		out.Completed += c.Completed
		for e, n := range c.Errors {
			if out.Errors == nil {
				out.Errors = map[string]int64{}
			}
			out.Errors[e] += n
		}
		for name, d := range c.Metrics {
			if out.Metrics[name] == nil {
				out.Metrics[name] = NewDist(DefaultSampleCap, 7)
			}
			_ = out.Metrics[name].Merge(d)
		}
	}
	return out
}

func writeRow(w io.Writer, target, bucket, class string, c *Cell) {
	ttft, dec := c.Metric(MetricTTFT), c.Metric(MetricDecodeTPS)
	fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
		target, bucket, orDash(class), c.Requests, errCell(c),
		fmtQ(ttft, 0.5, fmtDur), fmtQ(ttft, 0.95, fmtDur), fmtQ(ttft, 0.99, fmtDur),
		fmtQ(dec, 0.5, fmtRate), fmtQ(dec, 0.05, fmtRate),
		fmtQ(c.Metric(MetricE2ETPS), 0.5, fmtRate), fmtQ(c.Metric(MetricPerceivedTPS), 0.5, fmtRate),
		fmtQ(c.Metric(MetricStalls), 0.95, func(v float64) string { return fmt.Sprintf("%.0f", v) }),
		fmtQ(c.Metric(MetricTokensPerChunk), 0.5, func(v float64) string { return fmt.Sprintf("%.0f", v) }),
		fmtQ(c.Metric(MetricTokensPerChunk), 0.99, func(v float64) string { return fmt.Sprintf("%.0f", v) }))
}

func errCell(c *Cell) string {
	n := c.ErrorCount()
	if n == 0 {
		return "0"
	}
	return fmt.Sprintf("%d (%s)", n, errorList(c.Errors))
}

func fmtQ(d *Dist, q float64, f func(float64) string) string {
	if d.Count() == 0 {
		return "-"
	}
	v := d.Quantile(q)
	if math.IsNaN(v) {
		return "-"
	}
	return f(v)
}

// errWriter remembers the first write error.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return len(p), nil
	}
	_, e.err = e.w.Write(p)
	return len(p), nil
}
