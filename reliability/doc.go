// Package reliability holds no library code. Its tests prove, against the
// real openai-go client, the in-process simulated server (package llmsim)
// and raw net/http handlers, the promises a telemetry library must keep
// inside someone else's request path:
//
//   - Faults: a connection reset mid-stream (TCP RST, HTTP/2 RST_STREAM), a
//     server that stalls until the caller's deadline, truncated JSON, an
//     error event mid-stream, 5xx answers with and without a successful
//     retry, and a caller that stops reading early (with and without Close),
//     over HTTP/1.1 and HTTP/2. Each ends with the stream's own error
//     unchanged (the same as openai-go reports without the meter), a Result
//     marked partial that keeps the tokens that arrived, exactly one Finish
//     callback, no goroutine left behind and no lock held.
//   - Bad input: invalid UTF-8, NUL bytes, a 10 MB chunk and a
//     1,000,000-token stream, with exact counts and bounded memory.
//   - Panicking callbacks: recovered, counted, and without effect on the
//     stream, the Result or the aggregates.
//   - Load: 10,000 concurrent metered streams through one Meter, each with
//     exactly one Result, aggregates equal to the sum of the Results, and
//     counts equal to what the simulator billed.
//   - Privacy: text from prompts and answers never reaches a metric, an
//     attribute, a span, a log line, a Result encoding or a tpsbench results
//     file; and 10,000 distinct model names do not grow telemetry or the
//     meter's aggregates beyond their caps.
//
// docs/reliability.md lists each guarantee with the test that backs it and
// the command that runs it. The native fuzz targets live beside the code
// they exercise (the root package, tpsopenai, stats, bench).
package reliability
