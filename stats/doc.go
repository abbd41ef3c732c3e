// Package stats keeps bounded-memory, mergeable statistics of latencies and
// rates (time to first token, inter-token gaps, tokens per second) for
// meters that run for weeks and benchmarks that run on many machines. It
// stands alone: it imports nothing from the rest of tpsmeter.
//
//   - Sketch: a quantile sketch whose quantiles are within 1% (relative) of the
//     exact ones, with exact Count, Sum, Min, Max; Merge, binary and JSON
//     encodings, so sketches from many processes combine exactly as if the
//     values had been recorded in one place.
//   - Summary: a plain value (count, min, max, mean, P50..P99.9) for reports
//     and callbacks.
//   - Aggregate: a sketch for many goroutines recording at once.
//   - Window: the last N minutes, for live dashboards, with an injectable clock.
//   - Groups and Key: per model / provider / length bucket / prompt class
//     values, with a cap on the number of groups.
//   - LengthBuckets: short / medium / long output, with configurable edges.
//
// # Why DDSketch
//
// Users judge providers by P95 and P99, so the sketch must be exact in
// relative terms at the tail, over a wide range: gaps of 1 µs to stalls of
// hours, rates of 0.01 to 100k tokens/s. Sketch wraps DDSketch
// (github.com/DataDog/sketches-go, Apache-2.0, maintained by Datadog; the same
// idea as OpenTelemetry's exponential histograms): it guarantees a relative error bound for every quantile and
// every input distribution, merges exactly (bins just add), has no fixed
// range, and has a compact, documented binary encoding. The alternatives
// measured for this project: HdrHistogram (github.com/HdrHistogram/hdrhistogram-go)
// is faster per value (~10 ns) but needs its range fixed up front and takes
// about 27 KB at 2 significant digits; t-digest and the CKMS quantile streams
// (influxdata/tdigest, beorn7/perks) are slower (120-390 ns per value), give
// no error bound, and merge only approximately (perks' own documentation
// calls its Merge broken).
//
// Within DDSketch this package picks the cubically interpolated index mapping
// (no math.Log call per value; about 1% more bins than the memory-optimal
// logarithmic mapping) and a dense store that collapses its lowest bins past
// MaxBins (2048) bins, which bounds memory while keeping the high quantiles
// exact to the bound. Add bypasses DDSketch's interface dispatch and calls
// the mapping and store directly; it costs 10-25 ns on the reference machine
// (idle to busy) and never allocates once the bins cover the range seen. DDSketch tracks neither exact min and max
// nor an exact sum, so Sketch keeps them beside it, and clamps quantiles into
// [Min, Max]. Sketch also keeps the library's bin arrays tight (see
// MaxBins): one sketch of 10^6 latencies takes 2-7 KiB. Numbers are in
// docs/performance.md.
//
// # Concurrency
//
// Sketch is not safe for concurrent use; Summary and LengthBuckets are
// immutable values; Aggregate, Window and Groups are safe for concurrent use.
package stats
