package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/responses"

	"github.com/tpsmeter/tpsmeter"
	"github.com/tpsmeter/tpsmeter/tpsopenai"
)

// target is a Target with its API clients.
type target struct {
	Target
	index int
	chat  openai.ChatCompletionService
	resp  responses.ResponseService
	meter *tpsmeter.Meter // measures every request to this target
}

// chunkSinkKey is the context key of a request's chunkSink.
type chunkSinkKey struct{}

// chunkSink collects one request's chunk arrivals for its token timeline.
type chunkSink struct{ points []ChunkPoint }

// collectChunks is the target meter's Chunk hook: it appends the chunk to
// the sink that the request's context carries (ChunkInfo.Context is the
// context the request was started with).
func collectChunks(ci tpsmeter.ChunkInfo) {
	if s, ok := ci.Context.Value(chunkSinkKey{}).(*chunkSink); ok && len(s.points) < MaxChunkPoints {
		s.points = append(s.points, ChunkPoint{At: ci.At, Tokens: ci.Tokens})
	}
}

// newTarget builds the clients of one target. openai.NewClient is not
// used: it would read OPENAI_BASE_URL and OPENAI_API_KEY behind the
// caller's back, and a target must be exactly what its Config says.
func newTarget(t Target, index int, cfg *Config) *target {
	hc := cfg.HTTPClient
	if hc == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		// One connection per in-flight request, kept for the next one:
		// the default of 2 idle connections per host would add a TCP (and
		// TLS) handshake to most TTFTs under load.
		tr.MaxIdleConns = 0
		tr.MaxIdleConnsPerHost = max(cfg.Concurrency, cfg.MaxInFlight, 16)
		hc = &http.Client{Transport: tr}
	}
	opts := []option.RequestOption{
		option.WithHTTPClient(hc),
		option.WithBaseURL(t.BaseURL),
		option.WithMaxRetries(cfg.Retries),
	}
	if t.APIKey != "" {
		opts = append(opts, option.WithAPIKey(t.APIKey))
	}
	opts = append(opts, t.Options...)
	mopts := []tpsmeter.Option{
		tpsmeter.WithoutAggregates(), // the runner keeps its own, per phase and cell
		tpsmeter.WithLengthBuckets(cfg.Workload.Buckets),
		tpsmeter.WithHooks(tpsmeter.Hooks{Chunk: collectChunks}),
	}
	if t.Encoding != "" {
		mopts = append(mopts, tpsmeter.WithEncoding(t.Encoding))
	}
	return &target{Target: t, index: index, chat: openai.NewChatCompletionService(opts...), resp: responses.NewResponseService(opts...),
		meter: tpsmeter.New(mopts...)}
}

// Simulator request extensions (package llmsim), sent when Target.Hints.
const (
	hintOutputTokens   = "X-Llmsim-Output-Tokens"
	hintPredictability = "X-Llmsim-Predictability"
)

// do sends one request, consumes its stream through a metered tpsopenai
// stream (the target's Meter) and returns its Record; the request's context
// carries the sink its chunk arrivals are collected in.
func (r *Runner) do(ctx context.Context, t *target, phase string, j job, idle time.Duration) Record {
	p := j.prompt
	rec := Record{
		Run: r.runID, Target: t.Name, Phase: phase, Idle: idle, Seq: j.seq,
		PromptID: p.ID, Class: p.Class, ExpectedBucket: p.Bucket,
	}
	sink := &chunkSink{}
	m := t.meter

	rctx, cancel := context.WithTimeout(context.WithValue(ctx, chunkSinkKey{}, sink), r.cfg.RequestTimeout)
	defer cancel()
	rctx = tpsmeter.WithRequestInfo(rctx, tpsmeter.RequestInfo{Provider: t.Name, Class: p.Class})
	ropts := []option.RequestOption{option.WithMiddleware(m.Middleware)}
	if t.Hints {
		if j.length > 0 {
			rec.IntendedTokens = j.length
			ropts = append(ropts, option.WithHeader(hintOutputTokens, strconv.Itoa(j.length)))
		}
		if pr := p.predictability(); pr >= 0 {
			ropts = append(ropts, option.WithHeader(hintPredictability, strconv.FormatFloat(pr, 'g', 4, 64)))
		}
	}

	r.inFlight.Add(1)
	rec.Start = time.Since(r.start)
	var res tpsmeter.Result
	if t.API == APIResponses {
		params := responses.ResponseNewParams{
			Model: t.Model,
			Input: responses.ResponseNewParamsInputUnion{OfString: openai.String(p.Prompt)},
		}
		if p.System != "" {
			params.Instructions = openai.String(p.System)
		}
		if p.MaxTokens > 0 {
			params.MaxOutputTokens = openai.Int(int64(max(p.MaxTokens, 16))) // the API's minimum
		}
		s := tpsopenai.NewResponseStream(rctx, m, t.resp.NewStreaming, params, ropts...)
		for s.Next() {
		}
		_ = s.Close()
		res, _ = s.Result()
	} else {
		var msgs []openai.ChatCompletionMessageParamUnion
		if p.System != "" {
			msgs = append(msgs, openai.SystemMessage(p.System))
		}
		msgs = append(msgs, openai.UserMessage(p.Prompt))
		params := openai.ChatCompletionNewParams{
			Model:         t.Model,
			Messages:      msgs,
			StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
		}
		if p.MaxTokens > 0 {
			if t.MaxTokensField == MaxTokens {
				params.MaxTokens = openai.Int(int64(p.MaxTokens))
			} else {
				params.MaxCompletionTokens = openai.Int(int64(p.MaxTokens))
			}
		}
		s := tpsopenai.NewChatStream(rctx, m, t.chat.NewStreaming, params, ropts...)
		for s.Next() {
		}
		_ = s.Close()
		res, _ = s.Result()
	}
	r.inFlight.Add(-1)

	rec.Result = res
	if !res.Start.IsZero() {
		rec.Start = res.Start.Sub(r.start) // the meter's own start (monotonic)
	}
	rec.Chunks = sink.points
	rec.Interrupted = res.Status != tpsmeter.StatusComplete && ctx.Err() != nil
	switch {
	case p.Bucket != "":
		rec.Bucket = p.Bucket
	case res.OutputTokens > 0:
		rec.Bucket = res.OutputBucket
	default:
		rec.Bucket = "unknown"
	}
	return rec
}

// retryAfter returns the delay a 429 or 503 answer asked for, or 0.
func retryAfter(err error) time.Duration {
	var ae *openai.Error
	if !errors.As(err, &ae) || ae.Response == nil {
		return 0
	}
	h := ae.Response.Header
	if ms, err := strconv.ParseFloat(h.Get("Retry-After-Ms"), 64); err == nil && ms > 0 {
		return time.Duration(ms * float64(time.Millisecond))
	}
	if s, err := strconv.ParseFloat(h.Get("Retry-After"), 64); err == nil && s > 0 {
		return time.Duration(s * float64(time.Second))
	}
	return 0
}

// errorText is a short, single-line description of err for reports. It is
// private by construction: it never copies anything a server wrote (its
// error message, code or type may echo the prompt), only the HTTP status or
// the error's kind; network and context errors, which carry no user text,
// are kept as they are.
func errorText(err error) string {
	if err == nil {
		return ""
	}
	var ae *openai.Error
	var se *ssestream.StreamError
	var ee *tpsopenai.EventError
	var s string
	switch {
	case errors.As(err, &ae):
		s = "HTTP " + strconv.Itoa(ae.StatusCode) + " " + http.StatusText(ae.StatusCode)
	case errors.As(err, &se), errors.As(err, &ee):
		s = "error event in the stream"
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		s = err.Error()
	default:
		var ne net.Error
		if errors.As(err, &ne) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, tpsmeter.ErrTruncated) || errors.Is(err, tpsmeter.ErrClosedEarly) {
			s = err.Error()
		} else {
			s = fmt.Sprintf("error (%T)", err)
		}
	}
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 200 {
		s = s[:197] + "..."
	}
	return s
}
