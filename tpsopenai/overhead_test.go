package tpsopenai_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/tpsmeter/tpsmeter"
	"github.com/tpsmeter/tpsmeter/tpsopenai"
)

// body1000 is a 1,000-chunk Chat Completions stream shaped like OpenAI's
// (role chunk, one token of content per chunk, finish chunk, usage chunk).
var body1000 = func() []byte {
	words := strings.Fields("the quick brown fox jumps over a lazy dog while seven wizards quietly hum about rivers mountains and old libraries")
	var b bytes.Buffer
	b.WriteString(`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini-2024-07-18","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"abc"}` + "\n\n")
	for i := 0; i < 997; i++ {
		fmt.Fprintf(&b, `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini-2024-07-18","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"content":" %s"},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"abc"}`+"\n\n", words[i%len(words)])
	}
	b.WriteString(`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini-2024-07-18","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"usage":null}` + "\n\n")
	b.WriteString(`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini-2024-07-18","system_fingerprint":"fp_1","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":997,"total_tokens":1007}}` + "\n\n")
	b.WriteString("data: [DONE]\n\n")
	return b.Bytes()
}()

// rawStream decodes body1000 with openai-go's own decoder, as NewStreaming
// does after the response arrived (no network: the benchmark isolates the
// per-chunk work).
func rawStream() *ssestream.Stream[openai.ChatCompletionChunk] {
	res := &http.Response{
		StatusCode: 200,
		Header:     http.Header{"Content-Type": []string{"text/event-stream"}},
		Body:       io.NopCloser(bytes.NewReader(body1000)),
	}
	return ssestream.NewStream[openai.ChatCompletionChunk](ssestream.NewDecoder(res), nil)
}

func consumeRaw() int {
	s := rawStream()
	n := 0
	for s.Next() {
		n += len(s.Current().Choices)
	}
	_ = s.Close()
	return n
}

func consumeMetered(m *tpsmeter.Meter) int {
	_, rec := m.Start(context.Background(), tpsmeter.RequestInfo{Model: "gpt-4o-mini", Provider: "openai", Operation: "chat"})
	s := tpsopenai.WrapChat(rec, rawStream())
	n := 0
	for s.Next() {
		n += len(s.Current().Choices)
	}
	_ = s.Close()
	return n
}

// BenchmarkOverhead consumes the same 1,000-chunk stream raw and metered
// (exact counting on). Compare with:
//
//	go test -run '^$' -bench Overhead -count 10 ./tpsopenai | benchstat -col /mode -
func BenchmarkOverhead(b *testing.B) {
	m := tpsmeter.New()
	consumeMetered(m) // load the encoding outside the timed loop
	b.Run("mode=raw", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			consumeRaw()
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1000, "ns/chunk")
	})
	b.Run("mode=metered", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			consumeMetered(m)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1000, "ns/chunk")
	})
}

// TestMeteredAllocsPerChunk pins the allocation budget (a count, not a
// time, so it is deterministic): metering adds at most 2 allocations per
// chunk on average over a 1,000-chunk stream, per-stream setup included.
func TestMeteredAllocsPerChunk(t *testing.T) {
	m := tpsmeter.New()
	consumeMetered(m)
	raw := testing.AllocsPerRun(20, func() { consumeRaw() })
	met := testing.AllocsPerRun(20, func() { consumeMetered(m) })
	extra := (met - raw) / 1000
	t.Logf("allocs per stream: raw %.0f, metered %.0f: %.3f extra per chunk", raw, met, extra)
	if extra > 2 {
		t.Errorf("metering adds %.2f allocations per chunk, budget 2", extra)
	}
}
