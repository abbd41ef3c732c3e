// Package llmsim is a simulated OpenAI-compatible LLM server whose output and
// timing are known in advance.
//
// It speaks the OpenAI wire format (POST /v1/chat/completions, streaming or
// not, with stream_options.include_usage, n, max_tokens and tool calls;
// POST /v1/responses; GET /v1/models; errors in OpenAI's JSON shape), and it
// generates deterministic text from a vocabulary whose items are each exactly
// one token under both cl100k_base and o200k_base, so the usage it reports is
// the true token count of what it streamed.
//
// Every answer follows a [Profile]: a time to first token drawn from a
// lognormal distribution, a decode rate with jitter, tokens per chunk and
// speculative-decoding bursts that grow with the prompt's predictability,
// injected stalls, cold starts after idle periods, a limited number of
// generation slots with a queue (so TTFT grows with load), mid-stream
// failures and dropped connections. [Preset] returns profiles that resemble
// real providers.
//
// The server sleeps until each event's scheduled time, writes it, flushes it
// and records how late it was ([Server.Lateness]). [Config.OnStream] reports
// the true schedule of every answer, for tests that compare a client's
// measurements with the truth.
//
// # Quick start
//
//	profile, _ := llmsim.Preset("fast-steady")
//	srv, err := llmsim.Start(llmsim.Config{Profile: profile})
//	if err != nil { ... }
//	defer srv.Close()
//	client := openai.NewClient(option.WithBaseURL(srv.URL()), option.WithAPIKey("unused"))
//
// The command cmd/llmsim runs the same server standalone:
//
//	go run ./cmd/llmsim -addr 127.0.0.1:8080 -preset bursty-batched
//
// docs/llmsim.md describes the endpoints, the profile fields, the presets and
// the request extensions (metadata keys and headers that fix the answer length,
// the predictability or a fault).
//
// # Determinism
//
// The text of an answer (its words, its natural length, tool-call arguments)
// depends only on [Config.Seed] and a hash of the request body, so the same
// request always gets the same answer, whatever else runs concurrently. The
// timing and the random faults depend on [Config.Seed] and the index of the
// request among the generation requests the server has received (0, 1, 2, ...),
// so the same sequence of requests gets the same schedule.
//
// # Concurrency
//
// A [Server] is safe for concurrent use: it serves any number of requests at
// once, and its methods may be called from any goroutine. [Profile] and
// [Config] are plain values; the server copies them when it is created.
package llmsim
