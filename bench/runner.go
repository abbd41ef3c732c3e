package bench

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Runner runs one benchmark. Create it with NewRunner, call Run once, and
// read Progress from any goroutine while it runs.
type Runner struct {
	cfg       Config
	targets   []*target
	picker    *picker
	collector *Collector
	runID     string
	start     time.Time
	ran       atomic.Bool

	recMu sync.Mutex // serializes OnRecord

	// progress
	phase      atomic.Value    // phaseInfo
	done       [3]atomic.Int64 // by phaseIndex
	errs       [3]atomic.Int64
	inFlight   atomic.Int64
	total      atomic.Int64
	phaseStart atomic.Int64 // ns since start
	phaseMu    sync.Mutex
	tphase     []int // phaseIndex of each target (-1 before its first phase)
	shown      int   // phaseIndex shown by Progress

	abortMu  sync.Mutex
	abortErr error
	cancel   context.CancelFunc
}

type phaseInfo struct {
	name     string
	planned  time.Duration
	requests int
}

// NewRunner validates cfg (errors wrap ErrConfig or ErrWorkload) and
// returns a Runner for it.
func NewRunner(cfg Config) (*Runner, error) {
	c, err := cfg.normalize()
	if err != nil {
		return nil, err
	}
	r := &Runner{cfg: c}
	r.picker = newPicker(&r.cfg.Workload, c.Seed)
	r.collector = NewCollector(c.Workload.Buckets, c.SampleCap, c.Seed)
	for i, t := range r.cfg.Targets {
		r.targets = append(r.targets, newTarget(t, i, &r.cfg))
	}
	r.phase.Store(phaseInfo{name: "starting"})
	return r, nil
}

// Run is NewRunner followed by Runner.Run.
func Run(ctx context.Context, cfg Config) (*Results, error) {
	r, err := NewRunner(cfg)
	if err != nil {
		return nil, err
	}
	return r.Run(ctx)
}

// Progress is a snapshot of a running benchmark, for progress bars.
type Progress struct {
	// Phase is "starting", PhaseWarmup, PhaseMeasure, PhaseProbe or "done".
	Phase string
	// Elapsed is the time since the phase started. Planned is the phase's
	// planned length when it is time-bound (0 otherwise); PlannedRequests
	// its planned requests over all targets when it is count-bound (0
	// otherwise). A phase can be both: the first limit reached ends it.
	Elapsed         time.Duration
	Planned         time.Duration
	PlannedRequests int
	// Done and Errors count the phase's finished and failed requests;
	// InFlight the requests in flight now; Total every finished request.
	Done, Errors, InFlight, Total int64
}

// Progress returns a snapshot; it is safe to call concurrently with Run.
func (r *Runner) Progress() Progress {
	pi, _ := r.phase.Load().(phaseInfo)
	p := Progress{
		Phase: pi.name, Planned: pi.planned, PlannedRequests: pi.requests,
		InFlight: r.inFlight.Load(), Total: r.total.Load(),
	}
	if i := phaseIndex(pi.name); i >= 0 {
		p.Done, p.Errors = r.done[i].Load(), r.errs[i].Load()
	}
	if !r.start.IsZero() && pi.name != "starting" && pi.name != "done" {
		p.Elapsed = time.Since(r.start) - time.Duration(r.phaseStart.Load())
	}
	return p
}

// enter records that target t entered phase. The progress shows the
// phase of the least advanced target, timed from when it was first entered.
func (r *Runner) enter(t *target, phase string) {
	r.phaseMu.Lock()
	defer r.phaseMu.Unlock()
	r.tphase[t.index] = phaseIndex(phase)
	least := r.tphase[0]
	for _, p := range r.tphase {
		least = min(least, p)
	}
	if least <= r.shown {
		return
	}
	r.shown = least
	c := &r.cfg
	pi := phaseInfo{}
	switch least {
	case 0:
		pi = phaseInfo{name: PhaseWarmup, requests: c.Warmup * len(r.targets)}
	case 1:
		pi = phaseInfo{name: PhaseMeasure, planned: c.Duration, requests: c.Requests * len(r.targets)}
	case 2:
		var planned time.Duration
		for _, p := range c.Probes {
			planned += p * time.Duration(c.ProbeRepeat)
		}
		pi = phaseInfo{name: PhaseProbe, planned: planned, requests: len(c.Probes) * c.ProbeRepeat * len(r.targets)}
	}
	r.phaseStart.Store(int64(time.Since(r.start)))
	r.phase.Store(pi)
}

// Run runs the benchmark: the warm-up, the measured phase, then the
// cold-start probes, on every target at once. It returns the Results even
// when it returns an error, except for configuration errors:
//   - ErrInterrupted when ctx ended first (the Results are partial);
//   - ErrUnauthorized or ErrNotFound when a target answered 401/403 or 404
//     (the run stopped at once; the Results are partial);
//   - ErrNoSuccess when a target completed none of its measured requests.
//
// Run may be called only once per Runner.
func (r *Runner) Run(ctx context.Context) (*Results, error) {
	if !r.ran.CompareAndSwap(false, true) {
		return nil, fmt.Errorf("%w: Runner.Run called twice", ErrConfig)
	}
	wall := time.Now()
	r.start = wall
	r.runID = r.cfg.RunID
	if r.runID == "" {
		r.runID = runID(wall, r.cfg.Seed)
	}
	host := r.cfg.Host
	if host == "" {
		host, _ = os.Hostname()
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	r.cancel = cancel
	lagMon := startSchedLag(r.cfg.Seed)

	c := &r.cfg
	client := make([]ClientStats, len(r.targets))
	r.tphase = make([]int, len(r.targets))
	for i := range r.tphase {
		r.tphase[i] = -1
	}
	r.shown = -1
	// Each target runs its warm-up, its load and its probes back to back,
	// all targets at the same time. A target never waits for another: a
	// target left idle between its warm-up and its load (or between its
	// load and its first probe) could go cold again.
	r.eachTarget(func(t *target) {
		if c.Warmup > 0 {
			r.enter(t, PhaseWarmup)
			r.closed(runCtx, t, PhaseWarmup, saltWarmup, c.Warmup, 0, min(c.Concurrency, c.Warmup), 0)
		}
		if runCtx.Err() != nil {
			return
		}
		r.enter(t, PhaseMeasure)
		if c.closedLoop() {
			client[t.index] = r.closed(runCtx, t, PhaseMeasure, saltMeasure, c.Requests, c.Duration, c.Concurrency, c.ThinkTime)
		} else {
			client[t.index] = r.open(runCtx, t)
		}
		if len(c.Probes) > 0 && runCtx.Err() == nil {
			r.enter(t, PhaseProbe)
			r.probe(runCtx, t)
		}
	})
	r.phase.Store(phaseInfo{name: "done"})

	res := r.collector.Results()
	res.Settings = c.settings()
	res.sortCells() // in the targets' order, now that Settings names them
	run := RunInfo{
		ID: r.runID, Host: host, Seed: c.Seed, Started: wall, Elapsed: time.Since(r.start).Seconds(),
		Requests: r.total.Load(), Client: client, SchedLag: lagMon.finish(),
	}
	if sl := run.SchedLag; sl.Count() > 0 && sl.Quantile(0.99) > c.SchedLagLimit.Seconds() {
		run.Suspect = true
		run.Reasons = append(run.Reasons, fmt.Sprintf("the runner's own timers fired up to %s late (p99; limit %s): the benchmark machine was too busy to time chunks accurately",
			fmtSeconds(sl.Quantile(0.99)), c.SchedLagLimit))
	}
	for _, cs := range client {
		if cs.Suspect {
			run.Suspect = true
			run.Reasons = append(run.Reasons, cs.Target+": "+cs.Reason)
		}
	}

	var err error
	r.abortMu.Lock()
	err = r.abortErr
	r.abortMu.Unlock()
	switch {
	case err != nil:
		run.Aborted = err.Error()
	case ctx.Err() != nil:
		err = fmt.Errorf("%w: %v", ErrInterrupted, context.Cause(ctx))
	}
	if err != nil {
		run.Partial = true
		res.Partial = true
		res.Aborted = run.Aborted
	} else {
		err = noSuccess(res, r.cfg.Targets)
	}
	res.Runs = []RunInfo{run}
	return res, err
}

// noSuccess returns ErrNoSuccess naming every target that completed none
// of its measured requests.
func noSuccess(res *Results, targets []Target) error {
	var bad []string
	for _, t := range targets {
		var n, ok int64
		errs := map[string]int64{}
		for _, c := range res.Cells {
			if c.Target == t.Name && c.Phase == PhaseMeasure {
				n += c.Requests
				ok += c.Completed
				for e, k := range c.Errors {
					errs[e] += k
				}
			}
		}
		if ok == 0 {
			bad = append(bad, fmt.Sprintf("%s: 0 of %d requests completed (%s)", t.Name, n, errorList(errs)))
		}
	}
	if bad == nil {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrNoSuccess, strings.Join(bad, "; "))
}

// errorList renders error counts as "429: 3, connection: 1", most first.
func errorList(errs map[string]int64) string {
	if len(errs) == 0 {
		return "no errors"
	}
	keys := make([]string, 0, len(errs))
	for k := range errs {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if errs[keys[i]] != errs[keys[j]] {
			return errs[keys[i]] > errs[keys[j]]
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s: %d", k, errs[k])
	}
	return strings.Join(parts, ", ")
}

// phaseIndex maps a phase to its progress counters, -1 for others.
func phaseIndex(phase string) int {
	switch phase {
	case PhaseWarmup:
		return 0
	case PhaseMeasure:
		return 1
	case PhaseProbe:
		return 2
	}
	return -1
}

// eachTarget runs f for every target at once and waits.
func (r *Runner) eachTarget(f func(*target)) {
	var wg sync.WaitGroup
	for _, t := range r.targets {
		wg.Go(func() { f(t) })
	}
	wg.Wait()
}

// emit accounts for a finished request.
func (r *Runner) emit(rec Record) {
	r.total.Add(1)
	if i := phaseIndex(rec.Phase); i >= 0 {
		r.done[i].Add(1)
		if !rec.OK() {
			r.errs[i].Add(1)
		}
	}
	r.collector.Add(rec)
	if f := r.cfg.OnRecord; f != nil {
		r.recMu.Lock()
		f(rec)
		r.recMu.Unlock()
	}
	if rec.Interrupted {
		return
	}
	switch et := rec.Result.ErrorType; et {
	case "401", "403":
		r.abort(fmt.Errorf("%w: target %q answered %s", ErrUnauthorized, rec.Target, errorText(rec.Result.Err)))
	case "404":
		r.abort(fmt.Errorf("%w: target %q answered %s", ErrNotFound, rec.Target, errorText(rec.Result.Err)))
	}
}

// abort stops the run with err (the first abort wins).
func (r *Runner) abort(err error) {
	r.abortMu.Lock()
	if r.abortErr == nil {
		r.abortErr = err
	}
	r.abortMu.Unlock()
	r.cancel()
}

// backoff is a closed-loop worker's pause after its fails-th failure in a
// row.
func (r *Runner) backoff(fails int, rec *Record) time.Duration {
	if r.cfg.BackoffMax < 0 {
		return 0
	}
	d := min((50*time.Millisecond)<<min(fails-1, 10), r.cfg.BackoffMax)
	if ra := retryAfter(rec.Result.Err); ra > 0 {
		d = min(ra, r.cfg.BackoffMax)
	}
	return d
}

// closed runs a closed-loop phase on one target: workers send requests
// back to back until limit requests were started (0 = no limit) or dur
// elapsed (0 = no limit) or ctx ended.
func (r *Runner) closed(ctx context.Context, t *target, phase string, salt uint64, limit int, dur time.Duration, workers int, think time.Duration) ClientStats {
	var next, sent, busy atomic.Int64
	start := time.Now()
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			fails := 0
			for ctx.Err() == nil {
				if dur > 0 && time.Since(start) >= dur {
					return
				}
				i := int(next.Add(1) - 1)
				if limit > 0 && i >= limit {
					return
				}
				rec := r.do(ctx, t, phase, r.picker.pick(salt, i), 0)
				sent.Add(1)
				busy.Add(int64(rec.Result.Duration))
				r.emit(rec)
				if rec.OK() || rec.Interrupted {
					fails = 0
				} else {
					fails++
					_ = sleepCtx(ctx, r.backoff(fails, &rec))
				}
				if think > 0 {
					_ = sleepCtx(ctx, think)
				}
			}
		})
	}
	wg.Wait()
	el := time.Since(start)
	cs := ClientStats{
		Target: t.Name, Mode: ModeClosed, Concurrency: workers,
		Elapsed: el.Seconds(), Requests: sent.Load(),
	}
	if el > 0 {
		cs.AchievedConcurrency = float64(busy.Load()) / float64(el)
		cs.AchievedRate = float64(cs.Requests) / el.Seconds()
	}
	return cs
}

// open runs the open-loop measured phase on one target: requests arrive as
// a Poisson process, each on its own goroutine, at most MaxInFlight at once.
func (r *Runner) open(ctx context.Context, t *target) ClientStats {
	c := &r.cfg
	sched := NewPoisson(c.Rate, c.Seed)
	sem := make(chan struct{}, c.MaxInFlight)
	lag := NewDist(c.SampleCap, c.Seed^uint64(t.index)) // only this goroutine adds to it
	var busy, sent atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
loop:
	for i := 0; ; i++ {
		at := sched.Next()
		if c.Duration > 0 && at >= c.Duration || c.Requests > 0 && i >= c.Requests {
			break
		}
		if sleepCtx(ctx, time.Until(start.Add(at))) != nil {
			break
		}
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			break loop
		}
		l := max(time.Since(start)-at, 0)
		lag.Add(l.Seconds())
		j := r.picker.pick(saltMeasure, i)
		wg.Go(func() {
			defer func() { <-sem }()
			rec := r.do(ctx, t, PhaseMeasure, j, 0)
			rec.Lag = l
			sent.Add(1)
			busy.Add(int64(rec.Result.Duration))
			r.emit(rec)
		})
	}
	wg.Wait()
	el := time.Since(start)
	cs := ClientStats{
		Target: t.Name, Mode: ModeOpen, Rate: c.Rate, Elapsed: el.Seconds(), Requests: sent.Load(),
		Lag: lag, LagLimit: c.LagLimit.Seconds(),
	}
	if el > 0 {
		cs.AchievedConcurrency = float64(busy.Load()) / float64(el)
		cs.AchievedRate = float64(cs.Requests) / el.Seconds()
	}
	if lag.Count() > 0 && lag.Quantile(0.99) > c.LagLimit.Seconds() {
		cs.Suspect = true
		cs.Reason = fmt.Sprintf("requests were sent up to %s late against the Poisson schedule (p99; max %s; limit %s): the runner could not keep the requested rate of %g/s, so the results are suspect",
			fmtSeconds(lag.Quantile(0.99)), fmtSeconds(lag.Summary().Max), c.LagLimit, c.Rate)
	}
	return cs
}

// probe runs the cold-start probes on one target: for each idle gap, leave
// the target idle that long, then send one request.
func (r *Runner) probe(ctx context.Context, t *target) {
	i := 0
	for _, gap := range r.cfg.Probes {
		for range r.cfg.ProbeRepeat {
			if sleepCtx(ctx, gap) != nil {
				return
			}
			rec := r.do(ctx, t, PhaseProbe, r.picker.probeJob(i), gap)
			i++
			r.emit(rec)
		}
	}
}
