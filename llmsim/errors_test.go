package llmsim_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/tpsmeter/tpsmeter/llmsim"
)

// openAIError is OpenAI's error body.
type openAIError struct {
	Error struct {
		Message *string `json:"message"`
		Type    *string `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	} `json:"error"`
}

func post(t *testing.T, url, path, auth, body string) (*http.Response, openAIError) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	var e openAIError
	if res.StatusCode >= 400 {
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&e); err != nil || e.Error.Message == nil || e.Error.Type == nil {
			t.Fatalf("status %d body %s is not OpenAI's error shape: %v", res.StatusCode, b, err)
		}
		// param and code are present (possibly null)
		var raw map[string]map[string]json.RawMessage
		_ = json.Unmarshal(b, &raw)
		for _, k := range []string{"message", "type", "param", "code"} {
			if _, ok := raw["error"][k]; !ok {
				t.Errorf("error object lacks %q: %s", k, b)
			}
		}
	}
	return res, e
}

func TestBadRequestsGetOpenAIShaped4xx(t *testing.T) {
	srv := start(t, llmsim.Config{MaxBodyBytes: 4096, Models: []string{"gpt-4o-mini"}})
	t.Cleanup(http.DefaultClient.CloseIdleConnections)
	str := func(s string) string { return s }
	msgs := `"messages":[{"role":"user","content":"hi"}]`
	for _, tc := range []struct {
		name, path, body string
		status           int
		param            string
	}{
		{"invalid JSON", "/chat/completions", `{"model":`, 400, ""},
		{"not an object", "/chat/completions", `[1,2]`, 400, ""},
		{"empty body", "/chat/completions", ``, 400, ""},
		{"messages wrong type", "/chat/completions", `{"model":"gpt-4o-mini","messages":5}`, 400, "messages"},
		{"n wrong type", "/chat/completions", `{"model":"gpt-4o-mini",` + msgs + `,"n":"two"}`, 400, "n"},
		{"stream wrong type", "/chat/completions", `{"model":"gpt-4o-mini",` + msgs + `,"stream":"yes"}`, 400, "stream"},
		{"max_tokens wrong type", "/chat/completions", `{"model":"gpt-4o-mini",` + msgs + `,"max_tokens":1.5}`, 400, "max_tokens"},
		{"metadata value not a string", "/chat/completions", `{"model":"gpt-4o-mini",` + msgs + `,"metadata":{"a":1}}`, 400, "metadata"},
		{"missing messages", "/chat/completions", `{"model":"gpt-4o-mini"}`, 400, "messages"},
		{"empty messages", "/chat/completions", `{"model":"gpt-4o-mini","messages":[]}`, 400, "messages"},
		{"bad role", "/chat/completions", `{"model":"gpt-4o-mini","messages":[{"role":"robot","content":"x"}]}`, 400, "messages[0].role"},
		{"bad content", "/chat/completions", `{"model":"gpt-4o-mini","messages":[{"role":"user","content":7}]}`, 400, "messages[0].content"},
		{"missing model", "/chat/completions", `{` + msgs + `}`, 400, "model"},
		{"n too large", "/chat/completions", `{"model":"gpt-4o-mini",` + msgs + `,"n":129}`, 400, "n"},
		{"max_tokens zero", "/chat/completions", `{"model":"gpt-4o-mini",` + msgs + `,"max_tokens":0}`, 400, "max_tokens"},
		{"stream_options without stream", "/chat/completions", `{"model":"gpt-4o-mini",` + msgs + `,"stream_options":{"include_usage":true}}`, 400, "stream_options"},
		{"tool without name", "/chat/completions", `{"model":"gpt-4o-mini",` + msgs + `,"tools":[{"type":"function","function":{}}]}`, 400, "tools[0].function.name"},
		{"tool_choice unknown", "/chat/completions", `{"model":"gpt-4o-mini",` + msgs + `,"tool_choice":"always"}`, 400, "tool_choice"},
		{"bad extension", "/chat/completions", `{"model":"gpt-4o-mini",` + msgs + `,"metadata":{"llmsim_output_tokens":"many"}}`, 400, "metadata.llmsim_output_tokens"},
		{"bad fault", "/chat/completions", `{"model":"gpt-4o-mini",` + msgs + `,"metadata":{"llmsim_fault":"explode"}}`, 400, "metadata.llmsim_fault"},
		{"unknown model", "/chat/completions", `{"model":"gpt-9",` + msgs + `}`, 404, "model"},
		{"body too large", "/chat/completions", `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"` + strings.Repeat("x", 5000) + `"}]}`, 413, ""},
		{"responses missing input", "/responses", `{"model":"gpt-4o-mini"}`, 400, "input"},
		{"responses empty input", "/responses", `{"model":"gpt-4o-mini","input":""}`, 400, "input"},
		{"responses input wrong type", "/responses", `{"model":"gpt-4o-mini","input":3}`, 400, "input"},
		{"responses max_output_tokens too small", "/responses", `{"model":"gpt-4o-mini","input":"x","max_output_tokens":15}`, 400, "max_output_tokens"},
		{"unknown URL", "/completions/legacy", `{}`, 404, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, e := post(t, srv.URL(), tc.path, "", tc.body)
			if res.StatusCode != tc.status {
				t.Fatalf("status %d, want %d (%s)", res.StatusCode, tc.status, str(*e.Error.Message))
			}
			if got := *e.Error.Type; got != "invalid_request_error" {
				t.Errorf("type %q", got)
			}
			got := ""
			if e.Error.Param != nil {
				got = *e.Error.Param
			}
			if got != tc.param {
				t.Errorf("param %q, want %q (message %q)", got, tc.param, *e.Error.Message)
			}
		})
	}
	if st := srv.Stats(); st.BadRequests == 0 || st.Generations != 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestErrorStatusesThroughOpenAIGo(t *testing.T) {
	srv := start(t, llmsim.Config{APIKey: "sk-right"})
	params := openai.ChatCompletionNewParams{Model: "gpt-4o-mini", Messages: userMsg("x")}
	for _, tc := range []struct {
		name   string
		key    string
		fault  string
		status int
		typ    string
		code   string
	}{
		{"missing key", "", "", 401, "invalid_request_error", ""},
		{"wrong key", "sk-wrong", "", 401, "invalid_request_error", "invalid_api_key"},
		{"rate limit", "sk-right", "rate_limit", 429, "requests", "rate_limit_exceeded"},
		{"server error", "sk-right", "error_500", 500, "server_error", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := []option.RequestOption{option.WithAPIKey(tc.key)}
			if tc.key == "" {
				opts = []option.RequestOption{option.WithHeaderDel("Authorization"), option.WithAPIKey("")}
			}
			client := newClient(t, srv, opts...)
			p := params
			if tc.fault != "" {
				p.Metadata = shared.Metadata{llmsim.ExtFault: tc.fault}
			}
			for _, stream := range []bool{false, true} {
				var err error
				if stream {
					s := client.Chat.Completions.NewStreaming(ctxT(t), p)
					for s.Next() {
					}
					err = s.Err()
				} else {
					_, err = client.Chat.Completions.New(ctxT(t), p)
				}
				var ae *openai.Error
				if !errors.As(err, &ae) {
					t.Fatalf("stream=%v: err %v (%T), want *openai.Error", stream, err, err)
				}
				if ae.StatusCode != tc.status || ae.Type != tc.typ || ae.Code != tc.code || ae.Message == "" {
					t.Errorf("stream=%v: status %d type %q code %q message %q", stream, ae.StatusCode, ae.Type, ae.Code, ae.Message)
				}
				if tc.status == 429 && ae.Response.Header.Get("Retry-After") == "" {
					t.Errorf("429 without Retry-After")
				}
			}
		})
	}
	st := srv.Stats()
	if st.Unauthorized != 4 || st.RateLimited != 2 || st.ServerErrors != 2 {
		t.Errorf("stats %+v", st)
	}
}

func TestQueueFullGets429WithRetryAfter(t *testing.T) {
	// One slot, no queue: while a slow stream holds the slot, the next
	// request is refused at once.
	srv := start(t, llmsim.Config{Profile: llmsim.Profile{TokensPerSecond: 200, Slots: 1, QueueLimit: -1, RetryAfter: 1500 * time.Millisecond}})
	client := newClient(t, srv)
	ctx, cancel := context.WithCancel(ctxT(t))
	defer cancel()
	first := client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{Model: "gpt-4o-mini", Messages: userMsg("slow"),
		Metadata: shared.Metadata{llmsim.ExtOutputTokens: "2000"}})
	if !first.Next() { // headers and the first chunk: the slot is taken
		t.Fatalf("first stream: %v", first.Err())
	}
	_, err := client.Chat.Completions.New(ctxT(t), openai.ChatCompletionNewParams{Model: "gpt-4o-mini", Messages: userMsg("next")})
	var ae *openai.Error
	if !errors.As(err, &ae) || ae.StatusCode != 429 {
		t.Fatalf("err %v, want 429", err)
	}
	if ra, ms := ae.Response.Header.Get("Retry-After"), ae.Response.Header.Get("Retry-After-Ms"); ra != "2" || ms != "1500" {
		t.Errorf("Retry-After %q, Retry-After-Ms %q; want 2 and 1500", ra, ms)
	}
	cancel()
	first.Close()
}

func TestModels(t *testing.T) {
	srv := start(t, llmsim.Config{Models: []string{"alpha", "beta"}})
	client := newClient(t, srv)
	page, err := client.Models.List(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range page.Data {
		ids = append(ids, m.ID)
		if m.Object != "model" || m.OwnedBy == "" {
			t.Errorf("model %+v", m)
		}
	}
	if strings.Join(ids, ",") != "alpha,beta" {
		t.Errorf("models %v", ids)
	}
	m, err := client.Models.Get(ctxT(t), "beta")
	if err != nil || m.ID != "beta" {
		t.Errorf("Get(beta) = %v, %v", m, err)
	}
	_, err = client.Models.Get(ctxT(t), "gamma")
	var ae *openai.Error
	if !errors.As(err, &ae) || ae.StatusCode != 404 || ae.Code != "model_not_found" {
		t.Errorf("Get(gamma) err %v", err)
	}
}
