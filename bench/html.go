package bench

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"math"
	"strings"
	"time"
)

//go:embed report.html.tmpl
var reportTemplate string

//go:embed report.js
var reportScript string

var reportTmpl = template.Must(template.New("report").Funcs(template.FuncMap{
	"dur": fmtDur,
	"q": func(d *Dist, q float64, unit string) string {
		if d.Count() == 0 {
			return "–"
		}
		v := d.Quantile(q)
		switch unit {
		case "s":
			return fmtDur(v)
		case "tok/s":
			return fmtRate(v)
		}
		return fmt.Sprintf("%.0f", v)
	},
	"errs": func(c *Cell) string {
		if c.ErrorCount() == 0 {
			return "0"
		}
		return fmt.Sprintf("%d (%s)", c.ErrorCount(), errorList(c.Errors))
	},
	"secs": fmtSeconds,
	"dash": orDash,
	"join": strings.Join,
	"time": func(t time.Time) string { return t.Format("2006-01-02 15:04:05 MST") },
}).Parse(reportTemplate))

// WriteHTML writes a self-contained HTML report of the results: tables,
// findings and plots (TTFT CDF per target, decode TPS by bucket, the token
// timeline of sample requests, cold-start probes) drawn as inline SVG by
// inline JavaScript, with no external resource, so it opens offline. Once
// every plot is drawn the page marks its root element data-plots="ok" (and
// data-error="..." on a script error), which automated checks can read.
func WriteHTML(w io.Writer, r *Results) error {
	var rows []htmlRow
	for _, t := range r.TargetNames() {
		n := 0
		for _, c := range r.Cells {
			if c.Target == t && c.Phase == PhaseMeasure {
				rows = append(rows, htmlRow{Cell: c})
				n++
			}
		}
		if n > 1 {
			rows = append(rows, htmlRow{Cell: combinedCell(r, t, PhaseMeasure), All: true})
		}
	}
	var probes []htmlProbe
	for _, c := range r.Cells {
		if c.Phase == PhaseProbe {
			p := htmlProbe{Cell: c, Vs: "–"}
			warm := r.Combined(c.Target, PhaseMeasure, MetricTTFT)
			if d := c.Metric(MetricTTFT); d.Count() > 0 && warm.Count() > 0 {
				p.Vs = fmt.Sprintf("×%.1f", d.Quantile(0.5)/warm.Quantile(0.5))
			}
			probes = append(probes, p)
		}
	}
	data := htmlData{
		Results:  r,
		Rows:     rows,
		Probes:   probes,
		Findings: Analyze(r),
		Plot:     plotData(r),
		Script:   template.JS(reportScript),
	}
	return reportTmpl.Execute(w, data)
}

type htmlRow struct {
	*Cell
	All bool
}

type htmlProbe struct {
	*Cell
	Vs string
}

type htmlData struct {
	Results  *Results
	Rows     []htmlRow
	Probes   []htmlProbe
	Findings []Finding
	Plot     plotJSON
	Script   template.JS
}

// plotJSON is what the report's script draws.
type plotJSON struct {
	Targets  []string        `json:"targets"`
	TTFTCDF  []seriesJSON    `json:"ttftCdf"`
	Buckets  []string        `json:"buckets"`
	TPS      []barSeriesJSON `json:"tps"`
	Timeline []Timeline      `json:"timelines"`
	Probes   []seriesJSON    `json:"probes"`
}

type seriesJSON struct {
	Name   string       `json:"name"`
	Points [][2]float64 `json:"points"`
}

type barJSON struct {
	P10 float64 `json:"p10"`
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	N   int64   `json:"n"`
}

type barSeriesJSON struct {
	Name   string     `json:"name"`
	Values []*barJSON `json:"values"`
}

func plotData(r *Results) plotJSON {
	p := plotJSON{Targets: r.TargetNames(), Buckets: normBuckets(r.Buckets).Names}
	for _, t := range p.Targets {
		d := r.Combined(t, PhaseMeasure, MetricTTFT)
		s := seriesJSON{Name: t, Points: [][2]float64{}}
		if d.Count() > 0 {
			for i := 0; i <= 100; i++ {
				q := float64(i) / 100
				s.Points = append(s.Points, [2]float64{d.Quantile(q), q})
			}
		}
		p.TTFTCDF = append(p.TTFTCDF, s)

		bs := barSeriesJSON{Name: t}
		for _, b := range p.Buckets {
			d := NewDist(DefaultSampleCap, 9)
			for _, c := range r.Cells {
				if c.Target == t && c.Phase == PhaseMeasure && c.Bucket == b {
					_ = d.Merge(c.Metrics[MetricDecodeTPS])
				}
			}
			if d.Count() == 0 {
				bs.Values = append(bs.Values, nil)
				continue
			}
			bs.Values = append(bs.Values, &barJSON{P10: d.Quantile(0.1), P50: d.Quantile(0.5), P90: d.Quantile(0.9), N: d.Count()})
		}
		p.TPS = append(p.TPS, bs)

		ps := seriesJSON{Name: t, Points: [][2]float64{}}
		for _, c := range r.Cells {
			if c.Target == t && c.Phase == PhaseProbe {
				if d := c.Metric(MetricTTFT); d.Count() > 0 {
					ps.Points = append(ps.Points, [2]float64{c.Idle, d.Quantile(0.5)})
				}
			}
		}
		if len(ps.Points) > 0 {
			p.Probes = append(p.Probes, ps)
		}
	}
	p.Timeline = r.Timelines
	if p.Timeline == nil {
		p.Timeline = []Timeline{}
	}
	for i := range p.TTFTCDF {
		for j := range p.TTFTCDF[i].Points {
			if math.IsNaN(p.TTFTCDF[i].Points[j][0]) {
				p.TTFTCDF[i].Points[j][0] = 0
			}
		}
	}
	return p
}
