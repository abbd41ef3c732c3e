package bench

import (
	"time"

	"github.com/tpsmeter/tpsmeter"
)

// Phases of a run, in Record.Phase and CellKey.Phase.
const (
	// PhaseWarmup requests are excluded from the results.
	PhaseWarmup = "warmup"
	// PhaseMeasure requests are the warm, measured load.
	PhaseMeasure = "measure"
	// PhaseProbe requests are cold-start probes, reported per idle gap.
	PhaseProbe = "probe"
)

// ErrorTypeInterrupted is the error type of requests cut short because the
// run itself was interrupted or aborted (not the target's fault).
const ErrorTypeInterrupted = "interrupted"

// MaxChunkPoints bounds the chunk arrivals kept per request in
// Record.Chunks (and in a Timeline).
const MaxChunkPoints = 20_000

// ChunkPoint is one output chunk's arrival: when (from the request's start)
// and how many tokens the meter credited to it (see tpsmeter.ChunkInfo). It
// is a plain value.
type ChunkPoint struct {
	At     time.Duration `json:"at"`
	Tokens int           `json:"tokens"`
}

// Record is one request's outcome: which target, phase and prompt, when it
// was sent, and the meter's Result. Records are handed to Config.OnRecord
// as requests finish; the Results keep only their statistics. A Record is
// a plain value; its Chunks slice is not shared with the runner.
type Record struct {
	// Run is the run's ID (Config.RunID).
	Run string
	// Target is the target's name.
	Target string
	// Phase is PhaseWarmup, PhaseMeasure or PhaseProbe; Idle is the idle
	// gap a probe waited before it was sent.
	Phase string
	Idle  time.Duration
	// Seq numbers the requests of a phase and target from 0.
	Seq int
	// PromptID, Class and ExpectedBucket come from the prompt; Bucket is
	// the bucket the results file groups the request under: the expected
	// bucket when the prompt has one, else the measured one (the bucket of
	// Result.OutputTokens), or "unknown" for a failed request.
	PromptID       string
	Class          string
	ExpectedBucket string
	Bucket         string
	// IntendedTokens is the answer length asked of a simulator (0 = none).
	IntendedTokens int
	// Start is when the request was sent, from the start of the run; Lag
	// how late that was against the open-loop schedule (0 in closed loop).
	Start time.Duration
	Lag   time.Duration
	// Interrupted is true when the run was interrupted or aborted while
	// the request was in flight.
	Interrupted bool
	// Result is the meter's measurement of the request.
	Result tpsmeter.Result
	// Chunks are the output chunks' arrivals (at most MaxChunkPoints).
	Chunks []ChunkPoint
}

// OK reports whether the request ran to its natural end.
func (r *Record) OK() bool {
	return !r.Interrupted && r.Result.Status == tpsmeter.StatusComplete
}

// ErrorType is "" for a request that ran to its end, ErrorTypeInterrupted
// for one cut short by the run's end, else the meter's Result.ErrorType
// (for example "429", "500", "connection", "stream_error").
func (r *Record) ErrorType() string {
	switch {
	case r.Interrupted:
		return ErrorTypeInterrupted
	case r.Result.Status == tpsmeter.StatusComplete:
		return ""
	case r.Result.ErrorType != "":
		return r.Result.ErrorType
	}
	return tpsmeter.ErrorTypeOther
}

// cellKey returns the key of the cell the record belongs to.
func (r *Record) cellKey() CellKey {
	k := CellKey{Target: r.Target, Bucket: r.Bucket, Class: r.Class, Phase: r.Phase}
	if r.Phase == PhaseProbe {
		k.Idle = r.Idle.Seconds()
	}
	return k
}
