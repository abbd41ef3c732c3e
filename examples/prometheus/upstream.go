package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The simulated upstream is a tiny OpenAI-compatible Chat Completions
// server on 127.0.0.1 with a known time-to-first-token distribution, so the
// example runs offline and its numbers can be checked.

// upstreamModel is the model the simulated server reports.
const upstreamModel = "gpt-4o-mini-2024-07-18"

// TTFTFor returns the server-side delay before the first token of request
// number i: 30 ms plus a uniform spread of 0 to 297 ms over 100 steps,
// visited in a shuffled order (37 is coprime with 100). Its P95 is about
// 0.31 s, well inside one TTFT bucket.
func TTFTFor(i int) time.Duration {
	step := (i * 37) % 100
	return 30*time.Millisecond + time.Duration(step)*3*time.Millisecond
}

// answerWords is what the simulated model answers, one word per chunk.
var answerWords = strings.Fields("Streaming lets people read the answer while it is still being written, so the first words matter more than the last ones for how fast it feels to them today")

// tokenInterval is the delay between output chunks.
const tokenInterval = 4 * time.Millisecond

// upstream serves /chat/completions streams; the request number is read
// from the "request N" text of the last message.
type upstream struct {
	srv *http.Server
	ln  net.Listener
}

func startUpstream() (*upstream, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	u := &upstream{ln: ln, srv: &http.Server{Handler: http.HandlerFunc(serveChat), ReadHeaderTimeout: 5 * time.Second}}
	go func() { _ = u.srv.Serve(ln) }()
	return u, nil
}

// URL is the base URL to give openai-go (option.WithBaseURL).
func (u *upstream) URL() string { return "http://" + u.ln.Addr().String() + "/" }

func (u *upstream) Close() error { return u.srv.Close() }

func serveChat(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.NotFound(w, r)
		return
	}
	var req struct {
		Messages []struct {
			Content string `json:"content"`
		} `json:"messages"`
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err := json.Unmarshal(body, &req); err != nil || len(req.Messages) == 0 {
		http.Error(w, `{"error":{"message":"bad request","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	n := 0
	if f := strings.Fields(req.Messages[len(req.Messages)-1].Content); len(f) > 0 {
		n, _ = strconv.Atoi(f[len(f)-1])
	}
	fl, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	send := func(s string) bool {
		if _, err := io.WriteString(w, s); err != nil {
			return false
		}
		if fl != nil {
			fl.Flush()
		}
		return true
	}
	head := `data: {"id":"chatcmpl-sim","object":"chat.completion.chunk","created":1,"model":"` + upstreamModel + `",`
	if !sleep(r, TTFTFor(n)) || !send(head+`"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`+"\n\n") {
		return
	}
	for i, word := range answerWords {
		if i > 0 && !sleep(r, tokenInterval) {
			return
		}
		if i > 0 {
			word = " " + word
		}
		if !send(fmt.Sprintf(head+`"choices":[{"index":0,"delta":{"content":%q},"finish_reason":null}]}`+"\n\n", word)) {
			return
		}
	}
	send(head + `"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n")
	send(head + fmt.Sprintf(`"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":%d,"total_tokens":%d}}`, len(answerWords)+1, len(answerWords)+13) + "\n\n")
	send("data: [DONE]\n\n")
}

// sleep waits d unless the client went away.
func sleep(r *http.Request, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}
