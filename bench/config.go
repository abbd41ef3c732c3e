package bench

import (
	"fmt"
	"math"
	"net/http"
	"time"
)

// Defaults used when a Config field is zero.
const (
	DefaultConcurrency    = 4
	DefaultRequests       = 20
	DefaultMaxInFlight    = 256
	DefaultRequestTimeout = 2 * time.Minute
	DefaultBackoffMax     = time.Second
	DefaultSampleCap      = 1000
	DefaultSchedLagLimit  = 50 * time.Millisecond
)

// Config describes a benchmark run. Its zero value (apart from Targets,
// which are required) is a closed-loop run of DefaultRequests requests per
// target at DefaultConcurrency, with the default workload, no warm-up, no
// think time, no cold-start probes and no retries. A Config is read once by
// NewRunner; changing it afterwards has no effect.
type Config struct {
	// Targets are measured side by side, at the same time, with the same
	// sequence of prompts. At least one is required.
	Targets []Target
	// Workload is the prompt mix; the zero value means DefaultWorkload.
	Workload Workload

	// Concurrency is the number of closed-loop workers per target: each
	// sends a request, waits for its end (and ThinkTime), and sends the next.
	// Zero means DefaultConcurrency. Ignored when Rate > 0.
	Concurrency int
	// Rate > 0 selects open-loop load: requests arrive at each target as a
	// Poisson process of Rate requests per second, whether or not earlier
	// ones finished (up to MaxInFlight at once). How late the runner sent
	// each request against that schedule is reported as client lag.
	Rate float64
	// MaxInFlight caps the requests in flight per target in open-loop mode;
	// arrivals beyond it wait (and their lag shows it). Zero means
	// DefaultMaxInFlight.
	MaxInFlight int

	// Duration is how long measured requests are started; requests in
	// flight at its end run to completion. Requests caps the measured
	// requests per target. The run's measured phase ends at whichever comes
	// first; both zero means Requests = DefaultRequests.
	Duration time.Duration
	Requests int
	// Warmup requests per target are sent before the measured phase and
	// excluded from the results (they see cold caches, new connections and
	// the model's cold start). They use prompts of the shortest bucket when
	// the workload has some. Zero means none.
	Warmup int
	// ThinkTime is the pause of a closed-loop worker between two requests.
	ThinkTime time.Duration

	// Probes are cold-start probes: after the measured phase, for each idle
	// gap in order, the runner leaves the target idle for that long and
	// then sends one request (ProbeRepeat times). Their results are
	// reported apart from the warm requests, per idle gap: a gap of 0 is
	// the warm reference; gaps longer than the provider's scale-to-zero or
	// unload timeout (often 5 minutes) expose its cold start.
	Probes []time.Duration
	// ProbeRepeat is the number of probes per gap; zero means 1.
	ProbeRepeat int

	// Seed makes the prompt sequence and the sampling reproducible.
	Seed uint64
	// Retries is openai-go's retry count per request. Zero (the default)
	// disables retries so that every 429 and 5xx is counted as an error of
	// its type instead of being hidden inside a longer TTFT.
	Retries int
	// RequestTimeout bounds one request; zero means DefaultRequestTimeout.
	RequestTimeout time.Duration
	// BackoffMax caps the pause of a closed-loop worker after a failed
	// request (exponential from 50 ms, or the server's Retry-After when it
	// is shorter than the cap), so that an unreachable endpoint or a 429
	// storm is not hammered in a tight loop. Zero means DefaultBackoffMax;
	// negative means no pause.
	BackoffMax time.Duration
	// SampleCap bounds the per-request values kept for each metric of each
	// cell (a uniform reservoir sample beyond it) for the statistical tests
	// of Compare. Zero means DefaultSampleCap.
	SampleCap int
	// LagLimit is the open-loop client lag (p99) above which the results
	// are flagged suspect. Zero means 10% of the mean inter-arrival time,
	// clamped to [5 ms, 100 ms].
	LagLimit time.Duration
	// SchedLagLimit is the runner's own scheduling delay (p99 of how late a
	// 10 ms timer fires) above which the results are flagged suspect: the
	// machine running the benchmark was too busy to time chunks well. Zero
	// means DefaultSchedLagLimit.
	SchedLagLimit time.Duration

	// RunID names this run in merged results; empty means one made of the
	// start time and the seed. Host names the machine; empty means
	// os.Hostname.
	RunID string
	Host  string

	// OnRecord, if set, receives every request's record (warm-up and
	// probes included) as it finishes, for example to write the
	// per-request CSV. It is called from many goroutines, one call at a
	// time (the runner serializes the calls), and must not block for long.
	OnRecord func(Record)
	// HTTPClient, if set, sends every request; nil means one client per
	// target with a connection pool sized for the load.
	HTTPClient *http.Client
}

// closedLoop reports whether the run uses a fixed number of workers.
func (c *Config) closedLoop() bool { return !(c.Rate > 0) }

// normalize validates c and fills in defaults; it returns a copy.
func (c Config) normalize() (Config, error) {
	if len(c.Targets) == 0 {
		return c, fmt.Errorf("%w: no target", ErrConfig)
	}
	for _, t := range c.Targets {
		if err := t.validate(); err != nil {
			return c, err
		}
	}
	c.Targets = nameTargets(c.Targets)
	if len(c.Workload.Prompts) == 0 {
		c.Workload = DefaultWorkload()
	}
	c.Workload.Buckets = normBuckets(c.Workload.Buckets)
	if err := c.Workload.Validate(); err != nil {
		return c, err
	}
	switch {
	case c.Concurrency < 0:
		return c, fmt.Errorf("%w: negative concurrency %d", ErrConfig, c.Concurrency)
	case math.IsNaN(c.Rate) || math.IsInf(c.Rate, 0) || c.Rate < 0:
		return c, fmt.Errorf("%w: rate must be a finite number >= 0, got %v", ErrConfig, c.Rate)
	case c.MaxInFlight < 0:
		return c, fmt.Errorf("%w: negative max in flight %d", ErrConfig, c.MaxInFlight)
	case c.Duration < 0:
		return c, fmt.Errorf("%w: negative duration %v", ErrConfig, c.Duration)
	case c.Requests < 0:
		return c, fmt.Errorf("%w: negative request count %d", ErrConfig, c.Requests)
	case c.Warmup < 0:
		return c, fmt.Errorf("%w: negative warm-up count %d", ErrConfig, c.Warmup)
	case c.ThinkTime < 0:
		return c, fmt.Errorf("%w: negative think time %v", ErrConfig, c.ThinkTime)
	case c.ProbeRepeat < 0:
		return c, fmt.Errorf("%w: negative probe repeat %d", ErrConfig, c.ProbeRepeat)
	case c.Retries < 0:
		return c, fmt.Errorf("%w: negative retries %d", ErrConfig, c.Retries)
	case c.RequestTimeout < 0:
		return c, fmt.Errorf("%w: negative request timeout %v", ErrConfig, c.RequestTimeout)
	case c.SampleCap < 0:
		return c, fmt.Errorf("%w: negative sample cap %d", ErrConfig, c.SampleCap)
	case c.LagLimit < 0 || c.SchedLagLimit < 0:
		return c, fmt.Errorf("%w: negative lag limit", ErrConfig)
	}
	for _, p := range c.Probes {
		if p < 0 {
			return c, fmt.Errorf("%w: negative probe gap %v", ErrConfig, p)
		}
	}
	if c.Rate > 0 && c.Rate < 1e-6 {
		return c, fmt.Errorf("%w: rate %v is too small", ErrConfig, c.Rate)
	}
	if c.Concurrency == 0 {
		c.Concurrency = DefaultConcurrency
	}
	if c.MaxInFlight == 0 {
		c.MaxInFlight = DefaultMaxInFlight
	}
	if c.Duration == 0 && c.Requests == 0 {
		c.Requests = DefaultRequests
	}
	if c.ProbeRepeat == 0 {
		c.ProbeRepeat = 1
	}
	if c.RequestTimeout == 0 {
		c.RequestTimeout = DefaultRequestTimeout
	}
	if c.BackoffMax == 0 {
		c.BackoffMax = DefaultBackoffMax
	}
	if c.SampleCap == 0 {
		c.SampleCap = DefaultSampleCap
	}
	if c.LagLimit == 0 && c.Rate > 0 {
		mean := time.Duration(float64(time.Second) / c.Rate / 10)
		c.LagLimit = min(max(mean, 5*time.Millisecond), 100*time.Millisecond)
	}
	if c.SchedLagLimit == 0 {
		c.SchedLagLimit = DefaultSchedLagLimit
	}
	return c, nil
}

// Settings is the part of a Config that describes a run, as stored in its
// results file (durations in seconds; API keys never stored). It is a
// plain value.
type Settings struct {
	Targets        []Target  `json:"targets"`
	Workload       string    `json:"workload"`
	Prompts        int       `json:"prompts"`
	Mode           string    `json:"mode"` // "closed" or "open"
	Concurrency    int       `json:"concurrency,omitempty"`
	Rate           float64   `json:"rate,omitempty"`
	MaxInFlight    int       `json:"max_in_flight,omitempty"`
	Duration       float64   `json:"duration_s,omitempty"`
	Requests       int       `json:"requests,omitempty"`
	Warmup         int       `json:"warmup"`
	ThinkTime      float64   `json:"think_time_s,omitempty"`
	Probes         []float64 `json:"probes_s,omitempty"`
	ProbeRepeat    int       `json:"probe_repeat,omitempty"`
	Retries        int       `json:"retries"`
	RequestTimeout float64   `json:"request_timeout_s"`
	SampleCap      int       `json:"sample_cap"`
}

// settings describes a normalized config.
func (c *Config) settings() Settings {
	s := Settings{
		Targets: c.Targets, Workload: c.Workload.Name, Prompts: len(c.Workload.Prompts),
		Duration: c.Duration.Seconds(), Requests: c.Requests, Warmup: c.Warmup,
		ThinkTime: c.ThinkTime.Seconds(), Retries: c.Retries, RequestTimeout: c.RequestTimeout.Seconds(),
		SampleCap: c.SampleCap,
	}
	if c.closedLoop() {
		s.Mode, s.Concurrency = ModeClosed, c.Concurrency
	} else {
		s.Mode, s.Rate, s.MaxInFlight = ModeOpen, c.Rate, c.MaxInFlight
	}
	for _, p := range c.Probes {
		s.Probes = append(s.Probes, p.Seconds())
	}
	if len(c.Probes) > 0 {
		s.ProbeRepeat = c.ProbeRepeat
	}
	return s
}

// Load modes, in Settings.Mode and ClientStats.Mode.
const (
	ModeClosed = "closed"
	ModeOpen   = "open"
)
