package reliability_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tpsmeter/tpsmeter"
	"github.com/tpsmeter/tpsmeter/tpsopenai"
)

// rawJSONString quotes s as a JSON string but leaves every byte >= 0x20
// as it is, invalid UTF-8 included, as a careless server would send it.
func rawJSONString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20:
			fmt.Fprintf(&b, `\u%04x`, c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// badTexts are chunk sequences with invalid UTF-8, NUL bytes and
// characters cut between chunks.
var badTexts = []struct {
	name   string
	chunks []string
}{
	{"stray bytes", []string{"Hello \xff", "\xfe world", "\xc3", "( end"}},
	{"character cut between chunks", []string{"caf", "\xc3", "\xa9 ", "\xe6\x97", "\xa5\xe6\x9c\xac\xe8", "\xaa\x9e"}},
	{"emoji cut in four", []string{"\xf0", "\x9f", "\x98", "\x80!"}},
	{"NUL bytes", []string{"a\x00b", "\x00", " c\x00\x00 d"}},
	{"overlong, surrogate, beyond U+10FFFF", []string{"\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", " ok"}},
	{"continuation bytes only", []string{"\x80\x80\x80", "\xbf"}},
	{"cut at the end of the stream", []string{"word \xe6\x97"}},
	{"special-token text", []string{"<|endoftext|>", "<|im_start|>"}},
}

// TestInvalidUTF8AndNUL: bad text never panics and is counted exactly as
// tiktoken counts the same bytes (one U+FFFD per invalid byte), through
// the Recorder (bytes as they come) and through openai-go (which decodes
// each chunk's JSON first).
func TestInvalidUTF8AndNUL(t *testing.T) {
	for _, tc := range badTexts {
		t.Run(tc.name+"/recorder", func(t *testing.T) {
			m := tpsmeter.New()
			start := time.Unix(0, 0)
			rec := m.StartAt(tpsmeter.RequestInfo{Model: model}, start)
			for i, c := range tc.chunks {
				rec.Chunk(start.Add(time.Duration(i+1) * time.Millisecond))
				rec.Content(0, c)
				rec.Refusal(1, c)
				rec.ToolCall(0, 0, "", c)
				rec.EndChunk()
			}
			rec.FinishReason(0, "stop")
			rec.FinishReason(1, "stop")
			r := rec.End(start.Add(time.Second), nil)
			want := count(t, strings.Join(tc.chunks, ""))
			if r.ContentTokens != want || r.RefusalTokens != want || r.ToolTokens != want || r.OutputTokens != 3*want {
				t.Errorf("content %d, refusal %d, tool %d, output %d; want %d each, %d in all",
					r.ContentTokens, r.RefusalTokens, r.ToolTokens, r.OutputTokens, want, 3*want)
			}
			if r.Status != tpsmeter.StatusComplete {
				t.Errorf("Status %q (%v)", r.Status, r.Err)
			}
		})
		t.Run(tc.name+"/openai-go", func(t *testing.T) {
			srv := newServer(t, "h1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				sseHeaders(w)
				_ = send(w, chatRole)
				for _, c := range tc.chunks {
					_ = send(w, `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":`+rawJSONString(c)+`},"finish_reason":null}]}`+"\n\n")
				}
				_ = send(w, chatEvent("", "stop")+chatDone)
			}))
			m := tpsmeter.New()
			client := newClient(srv)
			s := tpsopenai.NewChatStream(context.Background(), m, client.Chat.Completions.NewStreaming, chatParams("hi"))
			var got strings.Builder
			for s.Next() {
				got.WriteString(chatText(s.Current()))
			}
			if s.Err() != nil {
				t.Fatalf("stream: %v", s.Err())
			}
			r, _ := s.Result()
			if want := count(t, got.String()); r.OutputTokens != want || r.Status != tpsmeter.StatusComplete {
				t.Errorf("OutputTokens %d (%s), want %d: tiktoken's count of the %q openai-go delivered", r.OutputTokens, r.Status, want, got.String())
			}
		})
	}
}
