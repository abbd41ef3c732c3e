package llmsim_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/tpsmeter/tpsmeter/llmsim"
)

func TestExtensionHeadersAndPromptTokens(t *testing.T) {
	var got reports
	srv := start(t, llmsim.Config{
		Profile:      llmsim.Profile{TokensPerChunk: 1, SpeculativeMaxBurst: 4},
		PromptTokens: func(model, prompt string) int { return len(model) + len(prompt) },
		OnStream:     got.add,
	})
	client := newClient(t, srv, option.WithHeader("X-Llmsim-Output-Tokens", "9"), option.WithHeader("X-Llmsim-Predictability", "1"))
	r := readChat(t, client.Chat.Completions.NewStreaming(ctxT(t), openai.ChatCompletionNewParams{
		Model: "gpt-4o", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("abc")}, StreamOptions: includeUsage,
		Metadata: shared.Metadata{llmsim.ExtOutputTokens: "100"}, // the header wins
	}), 1)
	if r.err != nil || r.usage == nil {
		t.Fatalf("err %v", r.err)
	}
	if r.usage.CompletionTokens != 9 || r.usage.PromptTokens != int64(len("gpt-4o")+len("abc\n")) {
		t.Errorf("usage %+v", r.usage)
	}
	rep := got.wait(t, 1)[0]
	if rep.Predictability != 1 || r.contentChunk != 3 { // 4 + 4 + 1
		t.Errorf("predictability %v, %d chunks", rep.Predictability, r.contentChunk)
	}
}

func TestBadRequestThroughOpenAIGo(t *testing.T) {
	srv := start(t, llmsim.Config{})
	client := newClient(t, srv)
	_, err := client.Chat.Completions.New(ctxT(t), openai.ChatCompletionNewParams{Model: "gpt-4o", Messages: userMsg("x"), N: openai.Int(0)})
	var ae *openai.Error
	if !errors.As(err, &ae) || ae.StatusCode != 400 || ae.Param != "n" || ae.Type != "invalid_request_error" {
		t.Fatalf("err %v", err)
	}
	_, err = client.Chat.Completions.New(ctxT(t), openai.ChatCompletionNewParams{Model: "gpt-4o"})
	if !errors.As(err, &ae) || ae.StatusCode != 400 || ae.Param != "messages" {
		t.Fatalf("missing messages: err %v", err)
	}
}

func TestStatsEndpoint(t *testing.T) {
	srv := start(t, llmsim.Config{Profile: llmsim.Profile{Name: "p", TokensPerSecond: 1000}})
	client := newClient(t, srv)
	chatOnce(t, client, "x", shared.Metadata{llmsim.ExtOutputTokens: "5"})
	waitIdle(t, srv)
	res, err := http.Get(srv.URL()[:len(srv.URL())-len("/v1")] + "/llmsim/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	t.Cleanup(http.DefaultClient.CloseIdleConnections)
	b, _ := io.ReadAll(res.Body)
	var v struct {
		Profile  llmsim.Profile `json:"profile"`
		Stats    llmsim.Stats   `json:"stats"`
		Lateness struct{ Count uint64 }
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	if v.Profile.Name != "p" || v.Stats.Generations != 1 || v.Stats.Completed != 1 || v.Lateness.Count < 5 {
		t.Errorf("stats %s", b)
	}
	if l := srv.Lateness(); l.Count != v.Lateness.Count || l.Max < l.P99 || l.P99 < l.P50 {
		t.Errorf("Lateness() %+v", l)
	}
}
