package llmsim

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func FuzzParseRequest(f *testing.F) {
	for _, s := range []string{
		`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"stream":true,"stream_options":{"include_usage":true},"n":2}`,
		`{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"a"}]}],"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":{"type":"function","function":{"name":"f"}}}`,
		`{"model":"m","input":[{"role":"user","content":"x"}],"max_output_tokens":16,"tools":[{"type":"function","name":"g"}],"tool_choice":"required"}`,
		`{"model":"m","input":"x","reasoning":{"effort":"low","summary":"auto"},"metadata":{"llmsim_output_tokens":"3"}}`,
		`{"messages":5}`, `{"n":"two"}`, `[]`, `null`, ``, `{"model":"m","messages":[{"role":"tool","content":null}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, parse := range []func([]byte) (*genRequest, *apiError){parseChatRequest, parseResponsesRequest} {
			r, e := parse(body)
			if (r == nil) == (e == nil) {
				t.Fatalf("want exactly one of request, error: %v %v", r, e)
			}
			if e != nil {
				if e.status != 400 || e.message == "" {
					t.Fatalf("error %+v", e)
				}
				var v map[string]map[string]any
				if err := json.Unmarshal(e.appendJSON(nil), &v); err != nil || v["error"]["type"] != typeInvalidRequest {
					t.Fatalf("error JSON %s: %v", e.appendJSON(nil), err)
				}
				continue
			}
			if r.model == "" || r.n < 1 || r.n > maxChoices || r.maxTokens < 0 {
				t.Fatalf("accepted an invalid request: %+v", r)
			}
		}
	})
}

// The whole handler never panics (except the deliberate abort of an
// injected drop) and always answers valid JSON or SSE.
func FuzzServeHTTP(f *testing.F) {
	f.Add("/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true,"n":3,"max_tokens":7}`, "")
	f.Add("/v1/responses", `{"model":"m","input":"hi","stream":true,"tools":[{"type":"function","name":"f"}]}`, "2")
	f.Add("/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"}],"metadata":{"llmsim_fault":"drop"}}`, "")
	f.Add("/v1/models", ``, "")
	srv := New(Config{Profile: Profile{ReasoningTokens: 3, ReasoningVisible: true, TokensPerChunk: 2, SpeculativeMaxBurst: 4}, MaxBodyBytes: 1 << 16})
	f.Fuzz(func(t *testing.T, path, body, outTokens string) {
		if !strings.HasPrefix(path, "/") {
			path = "/" + path
		}
		for _, method := range []string{http.MethodPost, http.MethodGet} {
			req, err := http.NewRequest(method, "http://x"+path, strings.NewReader(body))
			if err != nil {
				return
			}
			if outTokens != "" {
				req.Header.Set("X-Llmsim-Output-Tokens", outTokens)
			}
			rec := httptest.NewRecorder()
			func() {
				defer func() {
					if p := recover(); p != nil {
						if err, ok := p.(error); !ok || !errors.Is(err, http.ErrAbortHandler) {
							t.Fatalf("panic: %v", p)
						}
					}
				}()
				srv.ServeHTTP(rec, req)
			}()
			ct := rec.Header().Get("Content-Type")
			switch {
			case rec.Code >= 400 || strings.HasPrefix(ct, "application/json"):
				if !json.Valid(rec.Body.Bytes()) {
					t.Fatalf("status %d: invalid JSON %q", rec.Code, rec.Body.String())
				}
			case strings.HasPrefix(ct, "text/event-stream"):
				for _, line := range strings.Split(rec.Body.String(), "\n") {
					if d, ok := strings.CutPrefix(line, "data: "); ok && d != "[DONE]" && !json.Valid([]byte(d)) {
						t.Fatalf("invalid event data %q", d)
					}
				}
			}
		}
	})
}
