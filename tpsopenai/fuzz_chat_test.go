package tpsopenai_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"
	tiktoken "github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"

	"github.com/tpsmeter/tpsmeter"
	"github.com/tpsmeter/tpsmeter/internal/shareddata"
	"github.com/tpsmeter/tpsmeter/tpsopenai"
)

// The oracle for token counts is pkoukk/tiktoken-go with its embedded
// ranks (set in the test process only), independent of package tokenize.
var (
	fzOnce sync.Once
	fzMu   sync.Mutex
	fzEnc  *tiktoken.Tiktoken
	fzErr  error
)

// fzSlow reports whether the oracle would be too slow on text: its BPE is
// quadratic in the length of a piece, so a run of 2,000 bytes without a
// space is left to the package's own tests (tokenize's fuzzers).
func fzSlow(text string) bool {
	run := 0
	for i := 0; i < len(text); i++ {
		if c := text[i]; c == ' ' || c == '\n' {
			run = 0
		} else if run++; run > 2000 {
			return true
		}
	}
	return false
}

func fzCount(t testing.TB, text string) int {
	t.Helper()
	fzOnce.Do(func() {
		tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader())
		fzEnc, fzErr = tiktoken.GetEncoding("o200k_base")
	})
	if fzErr != nil {
		t.Fatalf("oracle: %v", fzErr)
	}
	fzMu.Lock()
	defer fzMu.Unlock()
	return len(fzEnc.EncodeOrdinary(text))
}

// fzStream decodes body with openai-go's own SSE decoder, as NewStreaming
// does once the response headers arrived.
func fzStream[T any](body []byte) *ssestream.Stream[T] {
	res := &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": []string{"text/event-stream"}}, Body: io.NopCloser(bytes.NewReader(body))}
	return ssestream.NewStream[T](ssestream.NewDecoder(res), nil)
}

// fzSeeds adds the recorded real streams of one API as seeds, and fails if
// the shared test data is missing. Bodies over 32 KB are left out: the
// fuzzer minimizes every new interesting input, which takes minutes on a
// large one (TestReplayRealStreams replays them all).
func fzSeeds(f *testing.F, api string) {
	dir := shareddata.RealStreams(f)
	n := 0
	for _, row := range shareddata.Index(f) {
		if !strings.HasSuffix(row["file"], ".sse") || row["api"] != api {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, row["file"]))
		if err != nil {
			f.Fatalf("shared test data missing: %v", err)
		}
		if len(b) > 32<<10 {
			continue
		}
		f.Add(b)
		n++
	}
	if n == 0 {
		f.Fatalf("no recorded %s streams in %s", api, dir)
	}
}

// fzCheckResult checks what must hold of any Result, whatever the input.
func fzCheckResult(t *testing.T, r tpsmeter.Result, chunks int) {
	t.Helper()
	if r.OutputTokens != r.ContentTokens+r.RefusalTokens+r.ToolTokens {
		t.Errorf("OutputTokens %d != content %d + refusal %d + tool %d", r.OutputTokens, r.ContentTokens, r.RefusalTokens, r.ToolTokens)
	}
	for name, v := range map[string]int{"content": r.ContentTokens, "refusal": r.RefusalTokens, "tool": r.ToolTokens,
		"reasoning": r.ReasoningTokens, "summary": r.SummaryTokens, "output chunks": r.OutputChunks, "tool calls": r.ToolCalls} {
		if v < 0 {
			t.Errorf("%s = %d", name, v)
		}
	}
	if r.Chunks != chunks || r.OutputChunks > r.Chunks {
		t.Errorf("Chunks %d (output %d), the caller saw %d", r.Chunks, r.OutputChunks, chunks)
	}
	if r.Duration < 0 || r.TimeToFirstChunk < 0 || r.TTFT < 0 || r.DecodeTime < 0 {
		t.Errorf("negative duration: %v %v %v %v", r.Duration, r.TimeToFirstChunk, r.TTFT, r.DecodeTime)
	}
	if r.OutputChunks > 0 && !(r.TimeToFirstChunk <= r.TTFT && r.TTFT+r.DecodeTime <= r.Duration) {
		t.Errorf("want first chunk %v <= TTFT %v, TTFT + decode %v <= duration %v", r.TimeToFirstChunk, r.TTFT, r.DecodeTime, r.Duration)
	}
	if int(r.TokensPerChunk.Count) != r.OutputChunks {
		t.Errorf("TokensPerChunk has %d samples for %d output chunks", r.TokensPerChunk.Count, r.OutputChunks)
	}
	if r.OutputChunks > 0 {
		sum := r.TokensPerChunk.Mean * float64(r.TokensPerChunk.Count)
		if d := sum - float64(r.OutputTokens); d > 1e-6*max(1, sum) || d < -1e-6*max(1, sum) {
			t.Errorf("per-chunk tokens sum to %v, OutputTokens %d", sum, r.OutputTokens)
		}
	}
	if (r.Err == nil) != (r.Status == tpsmeter.StatusComplete) || (r.Err == nil) != (r.ErrorType == "") {
		t.Errorf("Status %q, ErrorType %q, Err %v", r.Status, r.ErrorType, r.Err)
	}
	if r.Usage != nil && r.UsageDiff != r.Usage.CompletionTokens-int64(r.OutputTokens+r.ReasoningTokens) {
		t.Errorf("UsageDiff %d for usage %+v", r.UsageDiff, r.Usage)
	}
}

// FuzzChatSSE feeds arbitrary bytes, as an SSE body, through openai-go's
// decoder and the metered Chat Completions adapter. It never panics; the
// caller sees exactly what openai-go shows without the meter; there is
// exactly one Result and it is consistent; its status follows from what
// arrived; and its content, refusal and tool-call token counts equal
// tiktoken's counts of the texts the caller received.
func FuzzChatSSE(f *testing.F) {
	fzSeeds(f, "chat")
	for _, s := range []string{
		okBody,
		okBody[:len(okBody)/2],
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\\u0000b\"}}]}\n\ndata: {\"error\":{\"message\":\"x\"}}\n\n",
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"caf\xc3\"}},{\"index\":1,\"delta\":{\"refusal\":\"\xff no\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n",
		"data: {\"choices\":[{\"index\":3,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"a\\\":\"}}]}}]}\n\ndata: {\"choices\":[{\"index\":3,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"1}\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\n",
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"hmm\",\"content\":\"ok\"},\"finish_reason\":\"stop\"}],\"usage\":{\"completion_tokens\":9}}\n\n",
		"data: {\"choices\":[{\"index\":-1,\"delta\":{\"content\":\"neg\"}},{\"index\":9223372036854775807,\"delta\":{\"content\":\"big\"},\"finish_reason\":\"stop\"}]}\n\n",
		"data: {\"choices\":[{\"delta\":{\"content\":\"trunc",
		": comment\n\nevent: x\ndata: [DONE]\n\n",
		// n=2: choice 0 finishes before choice 1 sent any text, then the
		// stream ends with choice 1 unfinished.
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\"}},{\"index\":1,\"delta\":{\"role\":\"assistant\"}}]}\n\n" +
			"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"},\"finish_reason\":\"stop\"}]}\n\n" +
			"data: {\"choices\":[{\"index\":1,\"delta\":{\"content\":\"Hello\"}}]}\n\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		// Without the meter.
		plain := fzStream[openai.ChatCompletionChunk](body)
		var plainTexts []string
		for plain.Next() {
			plainTexts = append(plainTexts, chatTextOf(plain.Current()))
		}
		plainErr := plain.Err()

		// With it.
		var finishes atomic.Int32
		m := tpsmeter.New(tpsmeter.WithHooks(tpsmeter.Hooks{Finish: func(tpsmeter.FinishInfo) { finishes.Add(1) }}))
		_, rec := m.Start(context.Background(), tpsmeter.RequestInfo{Model: "gpt-4o-mini"})
		inner := fzStream[openai.ChatCompletionChunk](body)
		s := tpsopenai.WrapChat(rec, inner)
		var texts []string
		content := map[int64]*strings.Builder{}
		refusal := map[int64]*strings.Builder{}
		tools := map[[3]int64]*strings.Builder{} // choice, tool index, 0 name / 1 arguments
		seen, finished := map[int64]bool{}, map[int64]bool{}
		inRange := true
		add := func(m map[int64]*strings.Builder, k int64, s string) {
			if m[k] == nil {
				m[k] = &strings.Builder{}
			}
			m[k].WriteString(s)
		}
		for s.Next() {
			c := s.Current()
			texts = append(texts, chatTextOf(c))
			for _, ch := range c.Choices {
				if ch.Index < 0 || ch.Index >= 64 {
					inRange = false
				}
				d := ch.Delta
				add(content, ch.Index, d.Content)
				add(refusal, ch.Index, d.Refusal)
				if d.Content != "" || d.Refusal != "" {
					seen[ch.Index] = true
				}
				for _, tc := range d.ToolCalls {
					if tc.Index < 0 || tc.Index >= 64 {
						inRange = false
					}
					for i, x := range []string{tc.Function.Name, tc.Function.Arguments} {
						k := [3]int64{ch.Index, tc.Index, int64(i)}
						if tools[k] == nil {
							tools[k] = &strings.Builder{}
						}
						tools[k].WriteString(x)
						if x != "" {
							seen[ch.Index] = true
						}
					}
				}
				if d.FunctionCall.Name != "" || d.FunctionCall.Arguments != "" || len(d.JSON.ExtraFields) > 0 {
					inRange = false // deprecated function_call and reasoning fields: not modelled here
				}
				if ch.FinishReason != "" {
					seen[ch.Index], finished[ch.Index] = true, true
				}
			}
		}
		err := s.Err()

		if strings.Join(texts, "\x1f") != strings.Join(plainTexts, "\x1f") {
			t.Errorf("the caller saw %d chunks, %d without the meter", len(texts), len(plainTexts))
		}
		if err != inner.Err() || errString(err) != errString(plainErr) {
			t.Errorf("Err %v (inner %v), without the meter %v", err, inner.Err(), plainErr)
		}
		r, ok := s.Result()
		if !ok || finishes.Load() != 1 || m.InFlight() != 0 {
			t.Fatalf("Result %v, %d Finish calls, %d in flight", ok, finishes.Load(), m.InFlight())
		}
		fzCheckResult(t, r, len(texts))
		switch {
		case err != nil:
			if r.Err != err {
				t.Errorf("Result.Err %v, want the stream's %v", r.Err, err)
			}
		case inRange && allFinished(seen, finished):
			if r.Err != nil {
				t.Errorf("every choice finished, Result.Err %v", r.Err)
			}
		case inRange:
			if !errors.Is(r.Err, tpsmeter.ErrTruncated) {
				t.Errorf("choices %v, finished %v, and no error: Result.Err %v, want ErrTruncated", seen, finished, r.Err)
			}
		}
		if !inRange || r.TokenBasis != tpsmeter.BasisExact || fzSlow(strings.Join(texts, "")) {
			return
		}
		for _, b := range tools {
			if fzSlow(b.String()) {
				return
			}
		}
		want := map[string]int{}
		for _, b := range content {
			want["content"] += fzCount(t, b.String())
		}
		for _, b := range refusal {
			want["refusal"] += fzCount(t, b.String())
		}
		for _, b := range tools {
			want["tool"] += fzCount(t, b.String())
		}
		if r.ContentTokens != want["content"] || r.RefusalTokens != want["refusal"] || r.ToolTokens != want["tool"] {
			t.Errorf("content/refusal/tool tokens %d/%d/%d, tiktoken %d/%d/%d", r.ContentTokens, r.RefusalTokens, r.ToolTokens,
				want["content"], want["refusal"], want["tool"])
		}
		var reqs, out int64
		for _, g := range m.Snapshot() {
			reqs += g.Requests
			out += g.OutputTokens
		}
		if reqs != 1 || out != int64(r.OutputTokens) {
			t.Errorf("aggregates: %d requests, %d tokens", reqs, out)
		}
	})
}

// allFinished reports whether choices 0 to the highest index that carried
// text or a finish reason all sent a finish reason.
func allFinished(seen, finished map[int64]bool) bool {
	if len(seen) == 0 {
		return false
	}
	var hi int64
	for k := range seen {
		hi = max(hi, k)
	}
	for i := int64(0); i <= hi; i++ {
		if !finished[i] {
			return false
		}
	}
	return true
}

func chatTextOf(c openai.ChatCompletionChunk) string {
	var b strings.Builder
	for _, ch := range c.Choices {
		b.WriteString(ch.Delta.Content)
		b.WriteString(ch.Delta.Refusal)
	}
	return b.String()
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}
