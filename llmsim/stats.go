package llmsim

import (
	"sync/atomic"
	"time"
)

// Stats counts what the server has done since it was created. The zero value
// means nothing happened yet. A Stats is a snapshot: reading it is safe, it
// does not change.
type Stats struct {
	Requests        uint64 // HTTP requests received, of every kind
	Generations     uint64 // generation requests answered with 200 (chat completions and responses)
	Completed       uint64 // generations that ran to their natural end
	InFlight        int64  // generation requests being served now (queued or generating)
	Generating      int64  // generation requests holding a slot now
	Queued          int64  // generation requests waiting for a slot now
	BadRequests     uint64 // 4xx answers other than 401 and 429 (invalid JSON, bad fields, body too large, unknown model or URL)
	Unauthorized    uint64 // 401 answers
	RateLimited     uint64 // 429 answers
	ServerErrors    uint64 // 500 answers (injected)
	MidStreamErrors uint64 // streams ended by an injected error event (a 500 for a non-streaming request)
	Drops           uint64 // connections cut on purpose
	ClientGone      uint64 // generations abandoned because the client went away or the server shut down
	ColdStarts      uint64 // requests that triggered a cold start
	Stalls          uint64 // stalls injected into schedules
}

// counters is the live, atomic form of Stats.
type counters struct {
	requests, generations, completed                      atomic.Uint64
	inFlight, generating, queued                          atomic.Int64
	badRequests, unauthorized, rateLimited, serverErrors  atomic.Uint64
	midStreamErrors, drops, clientGone, coldStarts, stall atomic.Uint64
}

func (c *counters) snapshot() Stats {
	return Stats{
		Requests: c.requests.Load(), Generations: c.generations.Load(), Completed: c.completed.Load(),
		InFlight: c.inFlight.Load(), Generating: c.generating.Load(), Queued: c.queued.Load(),
		BadRequests: c.badRequests.Load(), Unauthorized: c.unauthorized.Load(), RateLimited: c.rateLimited.Load(),
		ServerErrors: c.serverErrors.Load(), MidStreamErrors: c.midStreamErrors.Load(), Drops: c.drops.Load(),
		ClientGone: c.clientGone.Load(), ColdStarts: c.coldStarts.Load(), Stalls: c.stall.Load(),
	}
}

// Outcomes of a generation, in StreamReport.Outcome.
const (
	OutcomeCompleted      = "completed"       // ran to its natural end (finish_reason stop, length or tool_calls)
	OutcomeMidStreamError = "midstream_error" // ended by an injected error event (or a 500 for a non-streaming request)
	OutcomeDropped        = "dropped"         // the connection was cut on purpose
	OutcomeClientGone     = "client_gone"     // the client went away, or the server shut down, before the end
)

// StreamReport is the truth about one generation request: when it arrived,
// what was scheduled and when each event actually went out. Offsets are from
// Arrived (the handler's first look at the request), on the server's clock.
// Config.OnStream receives one per generation answered with 200.
type StreamReport struct {
	ID       string // the response id (chatcmpl-... or resp_...)
	Index    uint64 // the request's index among generation requests (seeds its timing)
	Endpoint string // "chat.completions" or "responses"
	Model    string
	Stream   bool

	Arrived        time.Time
	QueueWait      time.Duration // time spent waiting for a slot
	ColdStart      time.Duration // cold-start delay included in the TTFT (0 = warm)
	Predictability float64       // the prompt's predictability used for speculative bursts
	Slowdown       float64       // the load slowdown factor applied to gaps (1 = none)

	// TTFT is the scheduled offset of the first generated token (reasoning
	// included, even hidden): queue wait + cold start + the drawn TTFT.
	TTFT time.Duration
	// Scheduled holds, for each decode step that wrote at least one event,
	// its scheduled offset; Emitted the offset at which its last event was
	// flushed; Tokens the visible tokens it carried (over all choices).
	// For a non-streaming request there is one entry: the whole answer.
	Scheduled []time.Duration
	Emitted   []time.Duration
	Tokens    []int

	PromptTokens     int
	CompletionTokens int // as reported in usage: content + reasoning + tool-call arguments, all choices
	ReasoningTokens  int
	FinishReason     string // of choice 0: "stop", "length" or "tool_calls"; "" if it never finished
	Stalls           int    // stalls injected into the schedule
	Outcome          string // one of the Outcome constants
}
