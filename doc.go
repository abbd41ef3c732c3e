// Package tpsmeter measures what people feel when an LLM answer streams in:
// time to first token (TTFT), inter-token gaps, tokens per second, stalls
// and perceived speed, per request and in aggregate, from inside a Go
// application.
//
// A Meter wraps the streams your client already returns. It sees every
// chunk as it arrives, counts its tokens exactly with the model's tiktoken
// encoding (package tokenize), and keeps bounded-memory statistics (package
// stats) and perceived-responsiveness numbers (package perceive). Results
// reach you per request (Result, Hooks) and in aggregate (Meter.Snapshot),
// and through OpenTelemetry with package tpsotel.
//
// # Quick start
//
// With the official OpenAI client (package tpsopenai):
//
//	m := tpsmeter.New(tpsmeter.WithHooks(tpsmeter.Hooks{
//		Finish: func(f tpsmeter.FinishInfo) { log.Printf("ttft=%v tps=%.1f", f.Result.TTFT, f.Result.DecodeTPS) },
//	}))
//	client := openai.NewClient(option.WithMiddleware(m.Middleware))
//	stream := tpsopenai.NewChatStream(ctx, m, client.Chat.Completions.NewStreaming, params)
//	for stream.Next() {
//		chunk := stream.Current() // exactly what openai-go returned
//		fmt.Print(chunk.Choices[0].Delta.Content)
//	}
//	if err := stream.Err(); err != nil { ... }
//
// The start time is taken before the request is sent: openai-go's
// NewStreaming returns only after the response headers arrived, so a
// wrapper applied to its result would miss the queueing and network time.
// Meter.Start, which every adapter calls first, is the only way to begin a
// measurement.
//
// Other clients: Wrap meters any stream with Next/Current/Err/Close given an
// Extractor for its chunk type; Seq meters an iter.Seq2[T, error]; the
// Recorder's methods (Chunk, Content, End, ...) are the low-level API for
// benchmark tools with their own clocks and parsers.
//
// # Definitions
//
// Every metric has one written definition in docs/metrics.md, pinned by a
// fake-clock test. Token counts carry their basis (Basis): exact, estimate,
// or custom; server-reported usage is kept apart (Result.Usage) and
// reconciled (Result.UsageDiff).
//
// # Concurrency
//
// A Meter is safe for concurrent use and is meant to be shared by all
// requests of a process. A Recorder and a Stream belong to one request and
// to the goroutine that consumes it, like the client streams they wrap.
// Hooks document on which goroutine they run.
package tpsmeter
