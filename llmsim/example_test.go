package llmsim_test

import (
	"context"
	"fmt"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/tpsmeter/tpsmeter/llmsim"
)

// Stream a chat completion from an in-process simulated server with the
// real openai-go client. The answer's length is fixed by an extension, and
// the usage the server reports is its exact token count.
func Example() {
	srv, err := llmsim.Start(llmsim.Config{Seed: 1}) // zero Profile: no delays
	if err != nil {
		panic(err)
	}
	defer srv.Close()

	client := openai.NewClient(option.WithBaseURL(srv.URL()), option.WithAPIKey("unused"))
	stream := client.Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{
		Model:         "gpt-4o-mini",
		Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Say something.")},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
		Metadata:      shared.Metadata{llmsim.ExtOutputTokens: "12"},
	})
	var text string
	chunks := 0
	for stream.Next() {
		chunk := stream.Current()
		for _, c := range chunk.Choices {
			if c.Delta.Content != "" {
				text += c.Delta.Content
				chunks++
			}
		}
		if chunk.JSON.Usage.Valid() {
			fmt.Println("completion tokens:", chunk.Usage.CompletionTokens)
		}
	}
	if err := stream.Err(); err != nil {
		panic(err)
	}
	fmt.Println("content chunks:", chunks)
	fmt.Println(len(text) > 0)
	// Output:
	// completion tokens: 12
	// content chunks: 12
	// true
}

func ExamplePresets() {
	for _, name := range llmsim.Presets() {
		p, _ := llmsim.Preset(name)
		fmt.Printf("%-15s ttft %-7v %5.0f tok/s  slots %d\n", name, p.TTFTMedian, p.TokensPerSecond, p.Slots)
	}
	// Output:
	// bursty-batched  ttft 600ms      60 tok/s  slots 0
	// fast-steady     ttft 250ms      80 tok/s  slots 0
	// instant         ttft 0s          0 tok/s  slots 0
	// local-llama     ttft 30ms      130 tok/s  slots 1
	// overloaded      ttft 1.5s       20 tok/s  slots 4
	// slow-reasoning  ttft 1.2s       35 tok/s  slots 0
}

func ExampleText() {
	fmt.Println(llmsim.Text(42, 12))
	// Output:
	// Because their black bell must carry, this deer could know here
}
