// Command chatbackend is a chat backend that streams an LLM answer to a
// browser over server-sent events and meters every answer: what a team puts
// in production to know the TTFT and speed its users see.
//
//	go run ./examples/chatbackend            # offline: the simulated server
//	open http://127.0.0.1:8081/              # a small page that streams an answer
//	curl -N 'http://127.0.0.1:8081/chat?q=hello'
//	curl http://127.0.0.1:8081/stats         # the meter's aggregates as JSON
//
// Set OPENAI_BASE_URL, OPENAI_API_KEY and MODEL to use a real endpoint.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/tpsmeter/tpsmeter"
	"github.com/tpsmeter/tpsmeter/llmsim"
	"github.com/tpsmeter/tpsmeter/tpsopenai"
)

// Backend serves the chat endpoints.
type Backend struct {
	Meter  *tpsmeter.Meter
	Client openai.Client
	Model  string
}

// NewBackend returns a Backend whose meter logs each finished answer.
func NewBackend(baseURL, key, model string, logf func(string, ...any)) *Backend {
	m := tpsmeter.New(tpsmeter.WithHooks(tpsmeter.Hooks{
		Finish: func(f tpsmeter.FinishInfo) {
			r := f.Result
			logf("answer: status=%s ttft=%v tokens=%d decode=%.1f tok/s stalls=%d", r.Status, r.TTFT.Round(time.Millisecond), r.OutputTokens, r.DecodeTPS, r.Perceived.Stalls)
		},
	}))
	client := openai.NewClient(option.WithBaseURL(baseURL), option.WithAPIKey(key), option.WithMiddleware(m.Middleware))
	return &Backend{Meter: m, Client: client, Model: model}
}

// Handler routes / (page), /chat (SSE) and /stats (JSON).
func (b *Backend) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, page)
	})
	mux.HandleFunc("GET /chat", b.chat)
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(b.Meter.Snapshot())
	})
	return mux
}

// chat streams the answer to ?q= as SSE "data:" lines (JSON strings), then
// an "event: done" with the measurement. The browser's disconnect cancels
// the upstream request through r.Context(); the meter then records a
// partial Result.
func (b *Backend) chat(w http.ResponseWriter, r *http.Request) {
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	if q == "" {
		http.Error(w, "missing q", http.StatusBadRequest)
		return
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	stream := tpsopenai.NewChatStream(r.Context(), b.Meter, b.Client.Chat.Completions.NewStreaming, openai.ChatCompletionNewParams{
		Model:         b.Model,
		Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage(q)},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	})
	defer stream.Close()
	for stream.Next() {
		c := stream.Current()
		if len(c.Choices) == 0 || c.Choices[0].Delta.Content == "" {
			continue
		}
		data, _ := json.Marshal(c.Choices[0].Delta.Content)
		if _, err := fmt.Fprintf(w, "data: %s\n\n", data); err != nil {
			return // the browser went away; Close records a partial Result
		}
		fl.Flush()
	}
	if err := stream.Err(); err != nil {
		fmt.Fprintf(w, "event: error\ndata: %q\n\n", err.Error())
		fl.Flush()
		return
	}
	res, _ := stream.Result()
	summary, _ := json.Marshal(map[string]any{
		"ttft_ms": res.TTFT.Milliseconds(), "tokens": res.OutputTokens, "basis": res.TokenBasis,
		"decode_tps": res.DecodeTPS, "stalls": res.Perceived.Stalls,
	})
	fmt.Fprintf(w, "event: done\ndata: %s\n\n", summary)
	fl.Flush()
}

const page = `<!doctype html><meta charset="utf-8"><title>tpsmeter chat backend</title>
<form id="f"><input id="q" value="Tell me about rivers" size="40"> <button>Ask</button></form>
<pre id="out" style="white-space:pre-wrap"></pre><pre id="m"></pre>
<script>
document.getElementById('f').onsubmit = e => {
  e.preventDefault();
  const out = document.getElementById('out'), m = document.getElementById('m');
  out.textContent = ''; m.textContent = '';
  const es = new EventSource('/chat?q=' + encodeURIComponent(document.getElementById('q').value));
  es.onmessage = ev => { out.textContent += JSON.parse(ev.data); };
  es.addEventListener('done', ev => { m.textContent = ev.data; es.close(); });
  es.addEventListener('error', () => es.close());
};
</script>`

func main() {
	addr := flag.String("addr", "127.0.0.1:8081", "listen address")
	flag.Parse()
	baseURL, key, model := os.Getenv("OPENAI_BASE_URL"), os.Getenv("OPENAI_API_KEY"), os.Getenv("MODEL")
	if model == "" {
		model = "gpt-4o-mini"
	}
	if baseURL == "" {
		profile, _ := llmsim.Preset("bursty-batched")
		srv, err := llmsim.Start(llmsim.Config{Profile: profile})
		if err != nil {
			log.Fatal(err)
		}
		defer srv.Close()
		baseURL, key = srv.URL(), "offline"
		log.Printf("no OPENAI_BASE_URL: using the simulated server at %s", baseURL)
	}
	b := NewBackend(baseURL, key, model, log.Printf)
	hs := &http.Server{Addr: *addr, Handler: b.Handler(), ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(sctx)
	}()
	log.Printf("chat backend on http://%s/", *addr)
	if err := hs.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
}
