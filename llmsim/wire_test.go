package llmsim_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/tpsmeter/tpsmeter/llmsim"
)

// sseEvent is one parsed SSE event.
type sseEvent struct {
	typ  string
	data string
}

// parseSSE splits a body into events, checking the framing as it goes.
func parseSSE(t *testing.T, body []byte) []sseEvent {
	t.Helper()
	var out []sseEvent
	var cur sseEvent
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.data != "" {
				out = append(out, cur)
			}
			cur = sseEvent{}
		case strings.HasPrefix(line, "event: "):
			cur.typ = line[len("event: "):]
		case strings.HasPrefix(line, "data: "):
			cur.data += line[len("data: "):]
		case strings.HasPrefix(line, ":"):
		default:
			t.Fatalf("unexpected SSE line %q", line)
		}
	}
	if cur.data != "" {
		out = append(out, cur)
	}
	return out
}

// keyPaths adds the key paths of a JSON value: "choices[].delta.content".
func keyPaths(v any, prefix string, out map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		for k, sub := range x {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			out[p] = true
			keyPaths(sub, p, out)
		}
	case []any:
		for _, sub := range x {
			keyPaths(sub, prefix+"[]", out)
		}
	}
}

// shapes returns the key paths per event type ("" for chat chunks).
func shapes(t *testing.T, evs []sseEvent) map[string]map[string]bool {
	t.Helper()
	out := map[string]map[string]bool{}
	for _, e := range evs {
		if e.data == "[DONE]" {
			continue
		}
		var v any
		if err := json.Unmarshal([]byte(e.data), &v); err != nil {
			t.Fatalf("event %q: %v", e.data, err)
		}
		if out[e.typ] == nil {
			out[e.typ] = map[string]bool{}
		}
		keyPaths(v, "", out[e.typ])
	}
	return out
}

// ignored are fields the simulator leaves out on purpose (docs/llmsim.md):
// OpenAI's random padding, DeepSeek's own cache counters, and the Responses
// field that "summary" replaced in 2025.
var ignored = []string{"obfuscation", "prompt_cache_hit_tokens", "prompt_cache_miss_tokens", "generate_summary"}

func missing(want, got map[string]bool) []string {
	var out []string
	for k := range want {
		skip := false
		for _, ig := range ignored {
			if k == ig || strings.HasSuffix(k, "."+ig) {
				skip = true
			}
		}
		if !skip && !got[k] {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func readRecorded(t *testing.T, name string) []byte {
	t.Helper()
	p := filepath.Join(sharedDir(t), "testdata", "real-streams", name)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("missing recorded stream %s: %v", p, err)
	}
	return b
}

func simBody(t *testing.T, srv *llmsim.Server, path, body string) []byte {
	t.Helper()
	res, err := http.Post(srv.URL()+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("status %d err %v body %s", res.StatusCode, err, b)
	}
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Errorf("Content-Type %q", ct)
	}
	return b
}

func TestChatWireShapeMatchesRecordedStreams(t *testing.T) {
	t.Cleanup(http.DefaultClient.CloseIdleConnections)
	// every key the simulator sends must exist in some real OpenAI-format stream
	known := map[string]bool{}
	for _, f := range []string{"001-openai-gpt-3.5-turbo-pomeranian.sse", "004-openai-gpt-4o-mini-n2-choices.sse",
		"005-openai-gpt-4o-mini-parallel-tool-calls.sse", "007-openai-gpt-4o-tool-call.sse", "014-openai-gpt-4.1-nano-holiday.sse",
		"035-deepseek-reasoner-reasoning-content.sse"} {
		for k := range shapes(t, parseSSE(t, readRecorded(t, f)))[""] {
			known[k] = true
		}
	}
	msgs := `"messages":[{"role":"user","content":"hi"}],"stream":true,"stream_options":{"include_usage":true}`
	tools := `,"tools":[{"type":"function","function":{"name":"get_current_weather","parameters":{"type":"object"}}},{"type":"function","function":{"name":"get_time"}}]`
	for _, tc := range []struct {
		name, recorded, body string
		profile              llmsim.Profile
	}{
		{"text", "001-openai-gpt-3.5-turbo-pomeranian.sse", `{"model":"gpt-3.5-turbo",` + msgs + `}`, llmsim.Profile{}},
		{"n=2", "004-openai-gpt-4o-mini-n2-choices.sse", `{"model":"gpt-4o-mini","n":2,` + msgs + `}`, llmsim.Profile{}},
		{"parallel tools", "005-openai-gpt-4o-mini-parallel-tool-calls.sse", `{"model":"gpt-4o-mini",` + msgs + tools + `,"metadata":{"llmsim_tool_calls":"2"}}`, llmsim.Profile{}},
		{"reasoning_content", "035-deepseek-reasoner-reasoning-content.sse", `{"model":"deepseek-reasoner",` + msgs + `}`, llmsim.Profile{ReasoningTokens: 20, ReasoningVisible: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := start(t, llmsim.Config{Profile: tc.profile})
			body := simBody(t, srv, "/chat/completions", tc.body)
			if !bytes.HasSuffix(body, []byte("\n\ndata: [DONE]\n\n")) || !bytes.HasPrefix(body, []byte("data: {")) {
				t.Errorf("framing: body must be data: events ending with data: [DONE]")
			}
			evs := parseSSE(t, body)
			real := parseSSE(t, readRecorded(t, tc.recorded))
			got, want := shapes(t, evs)[""], shapes(t, real)[""]
			if m := missing(want, got); len(m) > 0 {
				t.Errorf("fields of %s the simulator never sends: %v", tc.recorded, m)
			}
			if m := missing(got, known); len(m) > 0 {
				t.Errorf("fields the simulator sends that no recorded stream has: %v", m)
			}
			// first chunk: the role; last before [DONE]: usage with no choices
			var first, last map[string]any
			_ = json.Unmarshal([]byte(evs[0].data), &first)
			_ = json.Unmarshal([]byte(evs[len(evs)-2].data), &last)
			delta := first["choices"].([]any)[0].(map[string]any)["delta"].(map[string]any)
			if delta["role"] != "assistant" {
				t.Errorf("first chunk %s has no role", evs[0].data)
			}
			if c, ok := last["choices"].([]any); !ok || len(c) != 0 || last["usage"] == nil {
				t.Errorf("last chunk %s is not the usage chunk", evs[len(evs)-2].data)
			}
		})
	}
}

func TestResponsesWireShapeMatchesRecordedStreams(t *testing.T) {
	t.Cleanup(http.DefaultClient.CloseIdleConnections)
	for _, tc := range []struct {
		name, recorded, body string
		profile              llmsim.Profile
		// event types whose key sets must match exactly (others: the
		// recorded keys must be present)
	}{
		{"text", "025-openai-responses-gpt-4o-mini-short.sse", `{"model":"gpt-4o-mini","input":"hi","stream":true,"instructions":"You are a helpful assistant."}`, llmsim.Profile{}},
		{"function call", "024-openai-responses-gpt-4o-function-call.sse", `{"model":"gpt-4o","input":"hi","stream":true,"tools":[{"type":"function","description":null,"name":"get_capital","parameters":{"additionalProperties":false,"properties":{"country":{"type":"string"}},"required":["country"],"type":"object"},"strict":true}]}`, llmsim.Profile{}},
		{"reasoning summary", "026-openai-responses-o3-mini-reasoning.sse", `{"model":"o3-mini","input":"hi","stream":true,"reasoning":{"effort":"low","summary":"detailed"}}`, llmsim.Profile{ReasoningTokens: 30, ReasoningVisible: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := start(t, llmsim.Config{Profile: tc.profile})
			evs := parseSSE(t, simBody(t, srv, "/responses", tc.body))
			real := parseSSE(t, readRecorded(t, tc.recorded))
			typesOf := func(evs []sseEvent) []string {
				var out []string
				for _, e := range evs {
					out = append(out, e.typ)
				}
				return out
			}
			// the recorded reasoning stream has four summary parts; the
			// simulator sends one: compare the sequences with parts merged
			norm := func(s string) string {
				const part = "response.reasoning_summary_part.added response.reasoning_summary_text.delta+ response.reasoning_summary_text.done response.reasoning_summary_part.done"
				for strings.Contains(s, part+" "+part) {
					s = strings.ReplaceAll(s, part+" "+part, part)
				}
				return s
			}
			if g, w := norm(compact(typesOf(evs))), norm(compact(typesOf(real))); g != w {
				t.Errorf("event sequence:\n got %s\nwant %s", g, w)
			}
			for _, e := range evs {
				var v map[string]any
				if err := json.Unmarshal([]byte(e.data), &v); err != nil || v["type"] != e.typ {
					t.Errorf("event %s: data type %v, err %v", e.typ, v["type"], err)
				}
			}
			got, want := shapes(t, evs), shapes(t, real)
			for typ, keys := range want {
				if m := missing(keys, got[typ]); len(m) > 0 {
					t.Errorf("%s: fields the simulator never sends: %v", typ, m)
				}
			}
			if !slices.Contains(typesOf(evs), "response.completed") {
				t.Errorf("no response.completed")
			}
		})
	}
}
