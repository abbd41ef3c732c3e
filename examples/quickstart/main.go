// Command quickstart meters one streamed chat completion.
//
// With no environment it starts the project's simulated OpenAI-compatible
// server in-process, so it runs offline with no API key:
//
//	go run ./examples/quickstart
//
// Point it at a real endpoint with OPENAI_BASE_URL, OPENAI_API_KEY and MODEL.
package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/tpsmeter/tpsmeter"
	"github.com/tpsmeter/tpsmeter/llmsim"
	"github.com/tpsmeter/tpsmeter/tpsopenai"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out io.Writer) error {
	baseURL, key, model := os.Getenv("OPENAI_BASE_URL"), os.Getenv("OPENAI_API_KEY"), os.Getenv("MODEL")
	if model == "" {
		model = "gpt-4o-mini"
	}
	if baseURL == "" {
		profile, _ := llmsim.Preset("fast-steady")
		srv, err := llmsim.Start(llmsim.Config{Profile: profile, Seed: 1})
		if err != nil {
			return err
		}
		defer srv.Close()
		baseURL, key = srv.URL(), "offline"
	}

	// The quick start: a Meter, the middleware, and the wrapped stream.
	m := tpsmeter.New()
	client := openai.NewClient(option.WithBaseURL(baseURL), option.WithAPIKey(key), option.WithMiddleware(m.Middleware))
	stream := tpsopenai.NewChatStream(ctx, m, client.Chat.Completions.NewStreaming, openai.ChatCompletionNewParams{
		Model:         model,
		Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Tell me about rivers.")},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	})
	for stream.Next() {
		if c := stream.Current(); len(c.Choices) > 0 {
			fmt.Fprint(out, c.Choices[0].Delta.Content)
		}
	}
	if err := stream.Err(); err != nil {
		return err
	}
	r, _ := stream.Result()
	fmt.Fprintf(out, "\n\nTTFT %v | %d tokens (%s) | decode %.1f tok/s | e2e %.1f tok/s | chunk gap p95 %.1f ms | stalls %d\n",
		r.TTFT.Round(100_000), r.OutputTokens, r.TokenBasis, r.DecodeTPS, r.E2ETPS, r.ChunkGap.P95*1000, r.Perceived.Stalls)
	if r.Usage != nil {
		fmt.Fprintf(out, "server usage: %d completion tokens (difference to our count: %d)\n", r.Usage.CompletionTokens, r.UsageDiff)
	}
	return nil
}
