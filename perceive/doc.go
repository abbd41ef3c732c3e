// Package perceive models what a person perceives while an LLM answer streams
// in: stalls, smoothness, the speed of the text as a user interface renders
// it, and whether the answer arrives faster than it can be read.
//
// People do not see tokens per second, they see text appear. A Tracker is fed
// the arrivals of visible output (time from request start, tokens, characters)
// and produces a Report with four families of numbers:
//
//   - Stalls: gaps between arrivals longer than 1 s (the limit for an
//     uninterrupted flow of thought), and long stalls over 10 s (attention
//     lost): count, longest, total stalled time, share of decode time.
//   - Smoothness: jank ratio (share of decode time in gaps over 100 ms, the
//     limit of "instant"), the coefficient of variation of the gaps, and the
//     share of tokens that arrive in bursts (within one 16 ms display frame).
//   - Rendered speed: a simulated smoothing renderer (a playout buffer of
//     250 ms, then a steady reveal at the stream's running average rate) and
//     a naive one (each chunk shown when it arrives): time to the first
//     visible character, the pace at which the text unfolds, and the time the
//     visible text stood still.
//   - Reading pace: the share of tokens that arrived while a reader reading
//     238 words per minute was still behind.
//
// Every threshold is a field of Config; the zero Config means the defaults.
// The definitions, their sources and a worked example on recorded streams are
// in docs/metrics.md ("Perceived responsiveness").
//
// # The smoothing renderer
//
// Characters arrive into a buffer. The renderer starts revealing at first
// arrival + PlayoutBuffer and reveals RevealRate characters per second while
// it has unrevealed characters; when the buffer runs dry the text stands still
// (an underrun) until the next arrival, then resumes at once. With RevealRate
// zero the pace is the running average, re-estimated at each arrival: the
// characters that arrived after the first arrival's instant divided by the
// time since that instant. Until an arrival at a later instant exists there is
// no estimate, and the renderer shows whatever it holds at once. The renderer
// does not flush when the stream ends: it keeps its pace until the buffer is
// empty. It is advanced analytically between arrivals, in O(1).
//
// # Time
//
// Times are durations from request start on a monotonic clock, passed in by
// the caller, so every definition is deterministic under test. Nothing in this
// package reads a clock. A time that goes backwards is clamped, never a panic.
//
// # Concurrency and cost
//
// A Tracker is a value with no pointers and a fixed size; it is not safe for
// concurrent use (the owner serialises calls). Observe is O(1) and does not
// allocate; Report does not allocate and does not modify the Tracker.
package perceive
