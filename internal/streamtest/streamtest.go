// Package streamtest holds the recorded-shape streams that the overhead
// benchmarks of several packages share, so that their numbers compare.
package streamtest

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"
)

// Chat1000 is a 1,000-chunk Chat Completions stream shaped like OpenAI's:
// a role chunk, 997 chunks of one word (one token) each, a finish chunk and
// a usage chunk, then [DONE]; chunks carry the "obfuscation" padding field.
var Chat1000 = func() []byte {
	words := strings.Fields("the quick brown fox jumps over a lazy dog while seven wizards quietly hum about rivers mountains and old libraries")
	head := `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini-2024-07-18","system_fingerprint":"fp_1",`
	var b bytes.Buffer
	b.WriteString(head + `"choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"abc"}` + "\n\n")
	for i := 0; i < 997; i++ {
		fmt.Fprintf(&b, head+`"choices":[{"index":0,"delta":{"content":" %s"},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"abc"}`+"\n\n", words[i%len(words)])
	}
	b.WriteString(head + `"choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"usage":null}` + "\n\n")
	b.WriteString(head + `"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":997,"total_tokens":1007}}` + "\n\n")
	b.WriteString("data: [DONE]\n\n")
	return b.Bytes()
}()

// DecodeChat decodes body with openai-go's own SSE decoder, as NewStreaming
// does once the response arrived: no network, so a benchmark isolates the
// per-chunk work.
func DecodeChat(body []byte) *ssestream.Stream[openai.ChatCompletionChunk] {
	res := &http.Response{
		StatusCode: http.StatusOK,
		Header:     http.Header{"Content-Type": []string{"text/event-stream"}},
		Body:       io.NopCloser(bytes.NewReader(body)),
	}
	return ssestream.NewStream[openai.ChatCompletionChunk](ssestream.NewDecoder(res), nil)
}
