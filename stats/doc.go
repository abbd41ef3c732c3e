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
// hours, rates of 0.01 to 100k tokens/s. Sketch is a DDSketch, built on
// Datadog's implementation (github.com/DataDog/sketches-go, Apache-2.0; the
// same idea as OpenTelemetry's exponential histograms): it guarantees a
// relative error bound for every quantile and every input distribution, merges exactly (bins just add), has no fixed
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
// exact to the bound. DDSketch tracks neither exact min and max nor an exact
// sum, so Sketch keeps them beside it, and clamps quantiles into [Min, Max].
//
// # Why its own bin store
//
// Sketch uses sketches-go's mapping and its encoding helpers, but keeps its
// bins in a store of its own (bins.go) rather than the library's
// CollapsingLowestDenseStore, because the library's store could not meet the
// memory target: it holds float64 counts, 8 bytes per bin, so values spread
// over the whole 1 µs..3 h range (1,163 bins at 1%) took 10,656 bytes per
// sketch after 10^6 values even with its arrays kept tight, and left to its
// append doubling it took 8,416 bytes for 10^6 lognormal latencies. The store
// here counts in uint32, grows to its span plus 32 bins and an eighth, and
// uses all of the allocator's size class: 5,104 bytes for 1 µs..3 h, 4,336
// for 0.01..100k tokens/s, 2,928 for the lognormal latencies, under 8 KiB for
// every shape measured (docs/performance.md). Counts stay exact integers: the
// first count that would pass 2^32-1 widens that sign's store, once, to
// uint64. The bins, the folding and the binary encoding are the library's
// exactly: tests feed both the same values, counts and merges and compare
// the encodings byte for byte.
//
// Handing such a store to ddsketch.DDSketch would have meant implementing
// the library's store.Store interface, with float64 counts at the interface
// (AddWithCount), protobuf conversions and a Bins channel that leaks a
// goroutine if not drained, none of which Sketch needs. So Sketch calls the
// mapping and its store directly, and the store's hot path is inlined into
// Add: 15-18 ns per value on the reference machine, against 19-26 ns for
// the previous Sketch (the library's store, called directly), 17-19 ns for a
// DDSketch with the same mapping and the library's store through its
// interfaces, and 42 ns for the library's default sketch. Add never
// allocates once the bins cover the range seen, nor when a Reset sketch is
// filled again over a span that fits its array (a pooled per-stream sketch).
//
// # Concurrency
//
// Sketch is not safe for concurrent use; Summary and LengthBuckets are
// immutable values; Aggregate, Window and Groups are safe for concurrent use.
package stats
