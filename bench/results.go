package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tpsmeter/tpsmeter/stats"
)

// Schema and SchemaVersion identify the results file format. A reader
// accepts only its own version; Merge and Compare refuse to mix versions.
const (
	Schema        = "tpsbench/results"
	SchemaVersion = 1
)

// CellKey identifies one cell of the results: a target, an output-length
// bucket, a prompt class and a phase (PhaseMeasure for warm requests,
// PhaseProbe for cold-start probes, with the probe's idle gap in seconds).
// It is a comparable plain value; the zero value names no cell.
type CellKey struct {
	Target string  `json:"target"`
	Bucket string  `json:"bucket"`
	Class  string  `json:"class"`
	Phase  string  `json:"phase"`
	Idle   float64 `json:"idle_s,omitempty"`
}

// String renders the key as "target/bucket/class" (plus "/probe@30s").
func (k CellKey) String() string {
	s := k.Target + "/" + k.Bucket + "/" + orDash(k.Class)
	if k.Phase == PhaseProbe {
		s += "/probe@" + fmtSeconds(k.Idle)
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// fmtSeconds renders seconds as a short Go duration ("30s", "5m0s", "0s").
func fmtSeconds(s float64) string {
	return time.Duration(s * float64(time.Second)).Round(time.Millisecond).String()
}

// Cell holds the statistics of one CellKey: request and error counts and a
// Dist per metric (see Metrics). Only requests that ran to their end feed
// the metrics; failed ones are counted in Errors by type. A Cell is not
// safe for concurrent use.
type Cell struct {
	CellKey
	// Requests counts every request of the cell, Completed those that ran
	// to their natural end.
	Requests  int64 `json:"requests"`
	Completed int64 `json:"completed"`
	// Errors counts failed requests by error type (Record.ErrorType).
	Errors map[string]int64 `json:"errors,omitempty"`
	// BucketMismatches counts completed requests whose measured output
	// length fell outside the bucket their prompt expected.
	BucketMismatches int64 `json:"bucket_mismatches,omitempty"`
	// Metrics maps metric names to distributions.
	Metrics map[string]*Dist `json:"metrics"`
}

// Metric returns the named distribution, an empty one if the cell has none.
func (c *Cell) Metric(name string) *Dist {
	if d := c.Metrics[name]; d != nil {
		return d
	}
	return &Dist{}
}

// ErrorCount returns the number of failed requests.
func (c *Cell) ErrorCount() int64 {
	var n int64
	for _, v := range c.Errors {
		n += v
	}
	return n
}

// ErrorRate returns failed / all requests (0 for an empty cell).
func (c *Cell) ErrorRate() float64 {
	if c.Requests == 0 {
		return 0
	}
	return float64(c.ErrorCount()) / float64(c.Requests)
}

// RunInfo describes one run that contributed to the results (several after
// Merge). It is data: the zero value describes nothing, and it is not safe
// for concurrent modification.
type RunInfo struct {
	ID   string `json:"id"`
	Host string `json:"host,omitempty"`
	Seed uint64 `json:"seed"`
	// Started is the wall-clock start, for people; Elapsed the monotonic
	// length of the run in seconds.
	Started time.Time `json:"started"`
	Elapsed float64   `json:"elapsed_s"`
	// Partial and Aborted as in Results.
	Partial bool   `json:"partial,omitempty"`
	Aborted string `json:"aborted,omitempty"`
	// Requests counts every request sent, warm-up and probes included.
	Requests int64 `json:"requests"`
	// Client holds the load the runner achieved per target.
	Client []ClientStats `json:"client"`
	// SchedLag is how late a 10 ms timer fired in the runner during the
	// run, in seconds: the benchmark machine's own scheduling delay.
	SchedLag *Dist `json:"sched_lag_s"`
	// Suspect is true when the runner could not keep up (see
	// ClientStats.Suspect, Config.SchedLagLimit); Reasons say why.
	Suspect bool     `json:"suspect,omitempty"`
	Reasons []string `json:"suspect_reasons,omitempty"`
}

// ClientStats is the load one target actually received in the measured
// phase, and whether the runner kept the requested load. It is data (Lag is
// nil in closed loop).
type ClientStats struct {
	Target string `json:"target"`
	Mode   string `json:"mode"`
	// Concurrency or Rate (requests/s) requested.
	Concurrency int     `json:"concurrency,omitempty"`
	Rate        float64 `json:"rate,omitempty"`
	// Elapsed is the measured phase's length (s), Requests its requests.
	Elapsed  float64 `json:"elapsed_s"`
	Requests int64   `json:"requests"`
	// AchievedConcurrency is the mean number of requests in flight (the
	// sum of request durations over Elapsed); AchievedRate requests/s.
	AchievedConcurrency float64 `json:"achieved_concurrency"`
	AchievedRate        float64 `json:"achieved_rate"`
	// Lag (open loop) is how late each request was sent against its
	// Poisson schedule, in seconds.
	Lag *Dist `json:"lag_s,omitempty"`
	// LagLimit is the p99 lag (s) above which the results are suspect.
	LagLimit float64 `json:"lag_limit_s,omitempty"`
	// Suspect is true when the runner could not keep the requested rate.
	Suspect bool   `json:"suspect,omitempty"`
	Reason  string `json:"reason,omitempty"`
}

// Timeline is the chunk-by-chunk arrival of one sample request, for the
// report's timeline plot. Points are [seconds from the request's start,
// tokens credited to the chunk]. It is a plain value.
type Timeline struct {
	Run          string       `json:"run,omitempty"`
	Target       string       `json:"target"`
	Bucket       string       `json:"bucket"`
	Class        string       `json:"class,omitempty"`
	PromptID     string       `json:"prompt_id,omitempty"`
	Seq          int          `json:"seq"`
	TTFT         float64      `json:"ttft_s"`
	Duration     float64      `json:"duration_s"`
	OutputTokens int          `json:"output_tokens"`
	Points       [][2]float64 `json:"points"`
}

// bucketsJSON is LengthBuckets' wire form.
type bucketsJSON struct {
	Edges []int    `json:"edges"`
	Names []string `json:"names"`
}

// Results are the outcome of one run, or of several merged: per-cell
// distributions with their mergeable sketches, the runs' client-side
// statistics, sample timelines and the settings. Write them with
// WriteJSON (the versioned results file) and read them with ReadResults.
// Results are not safe for concurrent modification.
type Results struct {
	// Partial is true when a run was interrupted or aborted: the numbers
	// describe only what finished.
	Partial bool
	// Aborted says why a run stopped early ("" when it did not).
	Aborted string
	// Settings of the (first) run.
	Settings Settings
	// Buckets are the output-length buckets cells are grouped by.
	Buckets stats.LengthBuckets
	// Runs lists every run merged into these results.
	Runs []RunInfo
	// Cells, sorted by target (in Settings order), phase, bucket, class
	// and idle gap.
	Cells []*Cell
	// Timelines of a few sample requests (at most MaxTimelinesPerTarget per
	// target).
	Timelines []Timeline
}

// MaxTimelinesPerTarget bounds the sample timelines kept per target.
const MaxTimelinesPerTarget = 3

// resultsJSON is the file format.
type resultsJSON struct {
	Schema    string      `json:"schema"`
	Version   int         `json:"version"`
	Partial   bool        `json:"partial"`
	Aborted   string      `json:"aborted,omitempty"`
	Settings  Settings    `json:"settings"`
	Buckets   bucketsJSON `json:"buckets"`
	Metrics   []Metric    `json:"metrics"`
	Runs      []RunInfo   `json:"runs"`
	Findings  []Finding   `json:"findings"`
	Cells     []*Cell     `json:"cells"`
	Timelines []Timeline  `json:"timelines"`
}

// Cell returns the cell with key k, or nil.
func (r *Results) Cell(k CellKey) *Cell {
	for _, c := range r.Cells {
		if c.CellKey == k {
			return c
		}
	}
	return nil
}

// TargetNames returns the targets of the results, in Settings order, then
// any other target found in the cells.
func (r *Results) TargetNames() []string {
	var names []string
	for _, t := range r.Settings.Targets {
		names = append(names, t.Name)
	}
	for _, c := range r.Cells {
		if !slices.Contains(names, c.Target) {
			names = append(names, c.Target)
		}
	}
	return names
}

// Combined returns the distribution of a metric over every cell of target
// in phase (all buckets and classes; all idle gaps for probes).
func (r *Results) Combined(target, phase, metric string) *Dist {
	d := NewDist(DefaultSampleCap, 1)
	for _, c := range r.Cells {
		if c.Target == target && c.Phase == phase {
			_ = d.Merge(c.Metrics[metric])
		}
	}
	return d
}

// Suspect reports whether any run flagged its client side as suspect.
func (r *Results) Suspect() bool {
	for _, run := range r.Runs {
		if run.Suspect {
			return true
		}
	}
	return false
}

// sortCells orders the cells for reports.
func (r *Results) sortCells() {
	order := map[string]int{}
	for i, n := range r.TargetNames() {
		order[n] = i
	}
	b := normBuckets(r.Buckets)
	bi := func(name string) int {
		if i := bucketIndex(b, name); i >= 0 {
			return i
		}
		return len(b.Names)
	}
	slices.SortStableFunc(r.Cells, func(x, y *Cell) int {
		switch {
		case order[x.Target] != order[y.Target]:
			return order[x.Target] - order[y.Target]
		case x.Phase != y.Phase:
			if x.Phase == PhaseMeasure {
				return -1
			}
			if y.Phase == PhaseMeasure {
				return 1
			}
			return strings.Compare(x.Phase, y.Phase)
		case x.Idle != y.Idle:
			if x.Idle < y.Idle {
				return -1
			}
			return 1
		case bi(x.Bucket) != bi(y.Bucket):
			return bi(x.Bucket) - bi(y.Bucket)
		case x.Bucket != y.Bucket:
			return strings.Compare(x.Bucket, y.Bucket)
		}
		return strings.Compare(x.Class, y.Class)
	})
}

// WriteJSON writes the results file: the schema and version, the settings,
// the runs, the findings (Analyze), and every cell with its sketches and
// samples.
func (r *Results) WriteJSON(w io.Writer) error {
	b := normBuckets(r.Buckets)
	out := resultsJSON{
		Schema: Schema, Version: SchemaVersion, Partial: r.Partial, Aborted: r.Aborted,
		Settings: r.Settings, Buckets: bucketsJSON{Edges: b.Edges, Names: b.Names},
		Metrics: Metrics, Runs: r.Runs, Findings: Analyze(r), Cells: r.Cells, Timelines: r.Timelines,
	}
	if out.Runs == nil {
		out.Runs = []RunInfo{}
	}
	if out.Cells == nil {
		out.Cells = []*Cell{}
	}
	if out.Findings == nil {
		out.Findings = []Finding{}
	}
	if out.Timelines == nil {
		out.Timelines = []Timeline{}
	}
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetIndent("", " ")
	if err := enc.Encode(out); err != nil {
		return err
	}
	return bw.Flush()
}

// Save writes the results file at path (through a temporary file renamed
// into place, so a reader never sees half a file).
func (r *Results) Save(path string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tpsbench-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := r.WriteJSON(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// ReadResults reads a results file written by WriteJSON. A file of another
// schema or version gives an error wrapping ErrSchema.
func ReadResults(rd io.Reader) (*Results, error) {
	var head struct {
		Schema  string `json:"schema"`
		Version int    `json:"version"`
	}
	data, err := io.ReadAll(rd)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("%w: not a results file: %v", ErrSchema, err)
	}
	if head.Schema != Schema {
		return nil, fmt.Errorf("%w: schema %q, want %q", ErrSchema, head.Schema, Schema)
	}
	if head.Version != SchemaVersion {
		return nil, fmt.Errorf("%w: version %d, this tpsbench reads version %d", ErrSchema, head.Version, SchemaVersion)
	}
	var in resultsJSON
	if err := json.Unmarshal(data, &in); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSchema, err)
	}
	r := &Results{Partial: in.Partial, Aborted: in.Aborted, Settings: in.Settings, Runs: in.Runs, Timelines: in.Timelines}
	if len(in.Buckets.Names) > 0 {
		b, err := stats.NewLengthBuckets(in.Buckets.Edges, in.Buckets.Names)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrSchema, err)
		}
		r.Buckets = b
	} else {
		r.Buckets = stats.DefaultLengthBuckets()
	}
	for i, c := range in.Cells {
		if c == nil {
			return nil, fmt.Errorf("%w: cell %d is null", ErrSchema, i)
		}
		if c.Metrics == nil {
			c.Metrics = map[string]*Dist{}
		}
		for name, d := range c.Metrics {
			if d == nil {
				delete(c.Metrics, name)
			}
		}
		if c.Requests < 0 || c.Completed < 0 || c.Completed > c.Requests {
			return nil, fmt.Errorf("%w: cell %s: %d completed of %d requests", ErrSchema, c.CellKey, c.Completed, c.Requests)
		}
		r.Cells = append(r.Cells, c)
	}
	r.sortCells()
	return r, nil
}

// LoadResults reads the results file at path.
func LoadResults(path string) (*Results, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := ReadResults(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// runID returns a run ID made of the start time and the seed.
func runID(start time.Time, seed uint64) string {
	return start.UTC().Format("20060102T150405Z") + "-s" + strconv.FormatUint(seed, 10)
}
