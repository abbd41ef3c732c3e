package perceive

import "time"

// Report is the perceived-responsiveness summary of one stream, computed by
// Tracker.Report. All times are measured from request start; durations
// marshal to JSON as integer nanoseconds. A ratio or rate whose denominator
// is zero (a stream with one arrival, an answer that appeared all at once)
// is 0, never NaN or Inf. The zero Report describes a stream with no visible
// output. A Report is a plain value, safe to copy and share.
//
// Vocabulary: an arrival is an Observe call that carried visible characters;
// a gap is the time between two consecutive arrivals (time to the first
// arrival is not a gap); decode time is last arrival minus first arrival.
type Report struct {
	// Render is the renderer the headline rendered-speed fields
	// (TimeToFirstVisible ... RevealRate) describe.
	Render RenderMode `json:"render"`

	// Arrivals is the number of visible arrivals.
	Arrivals int `json:"arrivals"`
	// Tokens is the number of tokens credited, late credits included.
	Tokens int `json:"tokens"`
	// Chars is the number of visible characters.
	Chars int `json:"chars"`
	// FirstArrival is the time of the first visible arrival.
	FirstArrival time.Duration `json:"first_arrival"`
	// LastArrival is the time of the last visible arrival.
	LastArrival time.Duration `json:"last_arrival"`
	// DecodeTime is LastArrival - FirstArrival: the denominator of every
	// share of decode time below.
	DecodeTime time.Duration `json:"decode_time"`
	// TrailingSilence is end - LastArrival: how long the stream stayed open
	// after its last visible text. It is not a gap and never a stall (text did
	// not resume), though a live stall callback may have fired during it.
	TrailingSilence time.Duration `json:"trailing_silence"`
	// Clamped counts arrivals whose time went backwards and was clamped.
	Clamped int `json:"clamped,omitempty"`

	// Stalls is the number of gaps longer than StallThreshold.
	Stalls int `json:"stalls"`
	// LongStalls is the number of gaps longer than LongStallThreshold; each
	// is also counted in Stalls.
	LongStalls int `json:"long_stalls"`
	// LongestGap is the longest gap, stall or not.
	LongestGap time.Duration `json:"longest_gap"`
	// LongestStall is LongestGap if it is a stall, else 0.
	LongestStall time.Duration `json:"longest_stall"`
	// StalledTime is the sum of the stall gaps, each counted whole (the time
	// nothing appeared, not only its excess over the threshold; the excess
	// is StalledTime - Stalls*StallThreshold).
	StalledTime time.Duration `json:"stalled_time"`
	// StalledShare is StalledTime / DecodeTime, in [0, 1].
	StalledShare float64 `json:"stalled_share"`

	// JankRatio is the sum of gaps longer than JankThreshold divided by
	// DecodeTime, in [0, 1]: the share of decode time spent in visible
	// pauses of a naive UI. It is never below StalledShare.
	JankRatio float64 `json:"jank_ratio"`
	// GapCV is the coefficient of variation of the gaps: population standard
	// deviation over mean. 0 for a perfectly regular stream (and with fewer
	// than two gaps or a zero mean gap).
	GapCV float64 `json:"gap_cv"`
	// BurstShare is the share of the tokens after the answer's first token
	// that arrived in a burst: either in the same chunk as an earlier token,
	// or as the first token of a chunk that arrived less than Frame after the
	// previous arrival. In [0, 1].
	BurstShare float64 `json:"burst_share"`

	// TimeToFirstVisible is when the first character becomes visible:
	// FirstArrival + PlayoutBuffer for Smooth, FirstArrival for Naive.
	TimeToFirstVisible time.Duration `json:"time_to_first_visible"`
	// TimeToLastVisible is when the last character becomes visible. For
	// Smooth it can be well after LastArrival when the renderer lags.
	TimeToLastVisible time.Duration `json:"time_to_last_visible"`
	// PerceivedTPS is the pace at which the answer visibly unfolds: the
	// characters that became visible after the first visible instant, divided
	// by TimeToLastVisible - TimeToFirstVisible, converted to tokens at the
	// answer's own Tokens/Chars ratio. Pauses stay in the denominator, so
	// bursts are not rewarded: a bursty stream and a steady one with the same
	// average get the same pace, and differ in VisibleStallTime. 0 when the
	// whole answer became visible at one instant.
	PerceivedTPS float64 `json:"perceived_tps"`
	// VisibleStallTime is the total of the intervals, between the first and
	// the last visible character, in which the visible text stood still for
	// longer than JankThreshold, each counted whole. For Naive these are the
	// gaps longer than JankThreshold; for Smooth the renderer's underruns.
	VisibleStallTime time.Duration `json:"visible_stall_time"`
	// VisibleStallShare is VisibleStallTime / (TimeToLastVisible -
	// TimeToFirstVisible), in [0, 1].
	VisibleStallShare float64 `json:"visible_stall_share"`
	// VisibleStalls is the number of those still intervals longer than
	// StallThreshold: the stalls the user still sees after rendering.
	VisibleStalls int `json:"visible_stalls"`
	// RevealRate is the smoothing renderer's final pace in characters per
	// second: the configured RevealRate, or the running average at the last
	// arrival. 0 for Naive, or when no rate could be estimated (all text
	// arrived at one instant).
	RevealRate float64 `json:"reveal_rate"`

	// NaivePerceivedTPS is PerceivedTPS for the Naive renderer, always
	// computed, so the effect of smoothing is visible in one Report.
	NaivePerceivedTPS float64 `json:"naive_perceived_tps"`
	// NaiveVisibleStallTime is VisibleStallTime for the Naive renderer (the
	// jank time).
	NaiveVisibleStallTime time.Duration `json:"naive_visible_stall_time"`
	// NaiveVisibleStallShare is VisibleStallShare for the Naive renderer
	// (equal to JankRatio).
	NaiveVisibleStallShare float64 `json:"naive_visible_stall_share"`
	// NaiveVisibleStalls is VisibleStalls for the Naive renderer (equal to
	// Stalls).
	NaiveVisibleStalls int `json:"naive_visible_stalls"`

	// ReadingRate is the assumed reading speed in tokens per second,
	// ReadingWPM * TokensPerWord / 60.
	ReadingRate float64 `json:"reading_rate"`
	// OutpacedReaderShare is the share of tokens delivered faster than they
	// can be read: tokens of chunks that arrived while a reader, who starts at
	// the first arrival and reads ReadingRate tokens per second whenever
	// unread text is on screen, had not yet finished the text of earlier
	// display updates. A display update begins with an arrival at least one
	// Frame after the previous update began and takes in the arrivals less
	// than one Frame after that, so packing tokens into chunks does not by
	// itself outpace the reader; a backlog does. In [0, 1].
	OutpacedReaderShare float64 `json:"outpaced_reader_share"`
	// ReadingLag is how long that reader still needs, at the last arrival, to
	// finish the answer: 0 when the stream was never faster than reading.
	ReadingLag time.Duration `json:"reading_lag"`
}
