package llmsim_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/tpsmeter/tpsmeter/llmsim"
)

// discard is a flushable ResponseWriter that keeps nothing.
type discard struct {
	h http.Header
	n int
}

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(b []byte) (int, error) { d.n += len(b); return len(b), nil }
func (d *discard) WriteHeader(int)             {}
func (d *discard) Flush()                      {}

// BenchmarkServeChatStream is the server's CPU cost of one 1,000-token chat
// stream (instant profile, no network): parsing, planning, building and
// writing 1,000+ chunks. Divide by 1,000 for the cost per chunk.
func BenchmarkServeChatStream(b *testing.B) {
	for _, tc := range []struct{ name, path, body string }{
		{"chat", "/v1/chat/completions", `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"stream":true,"stream_options":{"include_usage":true},"metadata":{"llmsim_output_tokens":"1000"}}`},
		{"responses", "/v1/responses", `{"model":"gpt-4o-mini","input":"hi","stream":true,"metadata":{"llmsim_output_tokens":"1000"}}`},
	} {
		b.Run(tc.name, func(b *testing.B) {
			srv := llmsim.New(llmsim.Config{})
			defer srv.Close()
			w := &discard{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				req, _ := http.NewRequest(http.MethodPost, tc.path, strings.NewReader(tc.body))
				clear(w.h)
				srv.ServeHTTP(w, req)
			}
			b.ReportMetric(float64(w.n)/float64(b.N), "bytes/stream")
		})
	}
}
