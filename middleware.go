package tpsmeter

import (
	"io"
	"net/http"
	"sync/atomic"
)

// Middleware records wire timings for the request whose context carries a
// Recorder (see Meter.Start): the time to response headers and to the first
// body byte of the last attempt, and the number of attempts (retries
// included). Requests without a Recorder pass through untouched.
//
// Its signature is openai-go's option.Middleware (and anthropic-sdk-go's),
// so it plugs in directly:
//
//	client := openai.NewClient(option.WithMiddleware(m.Middleware))
//
// The SDKs call middleware once per attempt, before their retry logic sees
// the response, so retries are counted too.
func (m *Meter) Middleware(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	rec := FromContext(req.Context())
	if rec == nil {
		return next(req)
	}
	rec.attempts.Add(1)
	res, err := next(req)
	if err != nil || res == nil {
		return res, err
	}
	rec.observeHeaders(res)
	return res, nil
}

// Transport returns an http.RoundTripper that records the same wire timings
// as Middleware, for clients that take an *http.Client rather than
// middleware. base nil means http.DefaultTransport.
func (m *Meter) Transport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return roundTripper{base: base, m: m}
}

type roundTripper struct {
	base http.RoundTripper
	m    *Meter
}

func (t roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	return t.m.Middleware(req, t.base.RoundTrip)
}

// observeHeaders records the headers time of this attempt and wraps the
// body to catch its first byte.
func (r *Recorder) observeHeaders(res *http.Response) {
	now := r.m.cfg.clock.Now().Sub(r.start)
	r.headersAt.Store(int64(now) + 1)
	r.firstByteAt.Store(0)
	if res.Body != nil && res.Body != http.NoBody {
		res.Body = &firstByteBody{ReadCloser: res.Body, r: r}
	}
}

// firstByteBody stamps the first successful Read of a response body.
type firstByteBody struct {
	io.ReadCloser
	r    *Recorder
	seen atomic.Bool
}

func (b *firstByteBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 && !b.seen.Load() && b.seen.CompareAndSwap(false, true) {
		d := b.r.m.cfg.clock.Now().Sub(b.r.start)
		b.r.firstByteAt.Store(int64(d) + 1)
	}
	return n, err
}
