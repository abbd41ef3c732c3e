package tpsotel_test

import (
	"context"
	"math"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/tpsmeter/tpsmeter"
	"github.com/tpsmeter/tpsmeter/tpsotel"
)

// FuzzHooks feeds the hooks arbitrary request descriptions and numbers
// (negative, huge, odd strings): they must never panic, must keep the model
// cap, and must record only values they were given (or "other").
func FuzzHooks(f *testing.F) {
	f.Add("gpt-4o", "resp", "openai", "chat", "api.openai.com", 443, int64(20e6), 1, "", int64(5), int64(7))
	f.Add("", "", "", "", "", 0, int64(0), 0, "_OTHER", int64(-1), int64(0))
	f.Add("m\x00\xff", "r\u2028", "p", "o", "[::1]", -5, int64(-1), -3, "429", int64(math.MaxInt64), int64(math.MinInt64))
	f.Fuzz(func(t *testing.T, model, respModel, provider, op, addr string, port int, gapNs int64, tokens int, errType string, prompt, completion int64) {
		for _, mode := range telemetryModes {
			fuzzHooks(t, mode.producer, model, respModel, provider, op, addr, port, gapNs, tokens, errType, prompt, completion)
		}
	})
}

// fuzzHooks is one FuzzHooks case in one mode (per-chunk metrics through
// the SDK, or a ChunkProducer).
func fuzzHooks(t *testing.T, producer bool, model, respModel, provider, op, addr string, port int, gapNs int64, tokens int, errType string, prompt, completion int64) {
	const maxModels = 2
	opts := []tpsotel.Option{tpsotel.WithMaxModels(maxModels), tpsotel.WithTracing(true), tpsotel.WithCountedTokenUsage(true)}
	var readerOpts []sdkmetric.ManualReaderOption
	if producer {
		p := tpsotel.NewChunkProducer()
		readerOpts = append(readerOpts, sdkmetric.WithProducer(p))
		opts = append(opts, tpsotel.WithChunkProducer(p))
	}
	reader := sdkmetric.NewManualReader(readerOpts...)
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { _ = mp.Shutdown(context.Background()) }()
	tel, err := tpsotel.New(append(opts, tpsotel.WithMeterProvider(mp))...)
	if err != nil {
		t.Fatal(err)
	}
	h := tel.Hooks()
	tokens = tokens % 64 // a chunk's credit; the loop per token is bounded by the text in real use
	info := tpsmeter.RequestInfo{Model: model, Provider: provider, Operation: op, ServerAddress: addr, ServerPort: port}
	others := []string{"a", "b", "c"}
	for i, extra := range append([]string{model}, others...) {
		info.Model = extra
		h.Chunk(tpsmeter.ChunkInfo{Request: info, Index: i, Gap: time.Duration(gapNs), Tokens: tokens})
	}
	info.Model = model
	res := tpsmeter.Result{
		Model: model, ResponseModel: respModel, Provider: provider, Operation: op,
		Duration: time.Duration(gapNs), TTFT: time.Duration(gapNs), Chunks: 2, OutputChunks: 1,
		OutputTokens: tokens, ErrorType: errType, DecodeTPS: float64(gapNs),
	}
	if prompt >= 0 {
		res.Usage = &tpsmeter.Usage{PromptTokens: prompt, CompletionTokens: completion}
		res.UsageDiff = completion
	}
	h.FirstToken(tpsmeter.FirstTokenInfo{Context: context.Background(), Request: info, TTFT: time.Duration(gapNs), Tokens: tokens})
	h.Finish(tpsmeter.FinishInfo{Context: context.Background(), Result: res})
	h.Finish(tpsmeter.FinishInfo{Result: res}) // nil context

	ms := collect(t, reader)
	allowed := map[string]bool{tpsotel.OverflowModel: true, model: true, respModel: true, "a": true, "b": true, "c": true}
	seen := map[string]bool{}
	for v := range allAttrValues(ms, semconv.GenAIRequestModelKey) {
		seen[v] = true
	}
	for v := range allAttrValues(ms, semconv.GenAIResponseModelKey) {
		seen[v] = true
	}
	if len(seen) > maxModels+1 {
		t.Errorf("%d distinct model values %v, cap %d", len(seen), seen, maxModels)
	}
	for v := range seen {
		if !allowed[v] {
			t.Errorf("model value %q was never given", v)
		}
	}
}
