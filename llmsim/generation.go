package llmsim

import (
	"context"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
)

// serveGeneration answers POST /v1/chat/completions and POST /v1/responses.
func (s *Server) serveGeneration(w http.ResponseWriter, r *http.Request, responses bool) {
	arrived := s.clock.Now()
	body, e := s.readBody(w, r)
	var req *genRequest
	if e == nil {
		if responses {
			req, e = parseResponsesRequest(body)
		} else {
			req, e = parseChatRequest(body)
		}
	}
	if e == nil {
		e = parseExtensions(req, r.Header)
	}
	if e == nil && s.models != nil && !s.models[req.model] {
		e = modelNotFound(req.model)
	}
	if e == nil {
		e = s.checkSize(req)
	}
	if e != nil {
		s.st.badRequests.Add(1)
		writeAPIError(w, e)
		return
	}

	// Randomness: text from (Seed, body), timing and faults from (Seed, index).
	idx := s.seq.Add(1) - 1
	seed := uint64(s.cfg.Seed)
	textSeed := mix64(seed ^ bodyHash(body))
	textRNG := rand.New(rand.NewPCG(textSeed, mix64(textSeed)))
	timeSeed := mix64(seed ^ mix64(idx+0x100))
	timeRNG := rand.New(rand.NewPCG(timeSeed, mix64(timeSeed)))
	u500, uMid, uDrop := timeRNG.Float64(), timeRNG.Float64(), timeRNG.Float64()
	f := faultNone
	switch p := s.profile; {
	case req.hasFault:
		f = req.fault
	case u500 < p.ErrorRate:
		f = faultServerError
	case uMid < p.MidStreamFailureRate:
		f = faultMidStream
	case uDrop < p.DropRate:
		f = faultDrop
	}
	switch f {
	case faultServerError:
		s.st.serverErrors.Add(1)
		writeAPIError(w, serverError())
		return
	case faultRateLimit:
		s.st.rateLimited.Add(1)
		le := s.errQueueFull()
		le.message = "Rate limit reached for requests (llmsim: injected). Please try again later."
		writeAPIError(w, le)
		return
	}

	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	stop := context.AfterFunc(s.baseCtx, cancel)
	defer stop()

	s.st.inFlight.Add(1)
	defer s.st.inFlight.Add(-1)
	g, qe, err := s.acquire(ctx, arrived)
	if qe != nil {
		s.st.rateLimited.Add(1)
		writeAPIError(w, qe)
		return
	}
	if err != nil {
		s.st.clientGone.Add(1)
		if s.baseCtx.Err() != nil {
			writeAPIError(w, shuttingDown())
		}
		return
	}
	defer s.releaseSlot()

	predict := predictabilityOf(req, s.profile)
	slowdown := 1 + s.profile.LoadSlowdown*float64(g.others)
	prefix := fmt.Sprintf("%016x%08x", mix64(seed+idx), uint32(textSeed))
	pl := buildPlan(s.profile, textRNG, timeRNG, planInput{
		n: req.n, outputTokens: req.outputTokens, maxTokens: req.maxTokens,
		reasoningTokens: req.reasoningTokens, toolNames: toolsToCall(req),
		predictability: predict, slowdown: slowdown, cold: g.cold,
		fault: f, forcedFault: req.hasFault, idPrefix: prefix[:12],
	})
	s.st.stall.Add(uint64(pl.stalls))
	s.st.generations.Add(1)

	promptTokens := 0
	if s.cfg.PromptTokens != nil {
		promptTokens = s.cfg.PromptTokens(req.model, req.prompt)
	} else {
		promptTokens = estimatePromptTokens(req)
	}
	id := "chatcmpl-" + prefix
	endpoint := "chat.completions"
	if responses {
		id = "resp_" + prefix
		endpoint = "responses"
	}
	completion, reasoning := pl.usage()
	rep := &StreamReport{
		ID: id, Index: idx, Endpoint: endpoint, Model: req.model, Stream: req.stream,
		Arrived: arrived, QueueWait: g.queueWait, ColdStart: g.cold, Predictability: predict, Slowdown: slowdown,
		TTFT: g.queueWait + pl.ttft, PromptTokens: promptTokens, CompletionTokens: completion, ReasoningTokens: reasoning,
		FinishReason: pl.choices[0].finish, Stalls: pl.stalls,
	}
	em := &emitter{s: s, w: w, rc: http.NewResponseController(w), ctx: ctx, arrived: arrived, origin: g.at, rep: rep}
	created := arrived.Unix()
	defer func() {
		switch rep.Outcome {
		case OutcomeCompleted:
			s.st.completed.Add(1)
		case OutcomeMidStreamError:
			s.st.midStreamErrors.Add(1)
			rep.FinishReason = ""
		case OutcomeDropped:
			s.st.drops.Add(1)
			rep.FinishReason = ""
		default:
			s.st.clientGone.Add(1)
			rep.FinishReason = ""
		}
		if s.cfg.OnStream != nil {
			s.cfg.OnStream(*rep)
		}
	}()

	if req.stream {
		if responses {
			rep.Outcome = s.streamResponses(em, req, pl, id, created, promptTokens)
		} else {
			rep.Outcome = s.streamChat(em, req, pl, id, created, promptTokens)
		}
	} else {
		rep.Outcome = s.answerWhole(em, req, pl, id, created, promptTokens)
	}
	switch rep.Outcome {
	case OutcomeDropped:
		// Cut the connection without ending the response: net/http closes it
		// (HTTP/1: no terminating chunk; HTTP/2: RST_STREAM) and recovers.
		panic(http.ErrAbortHandler)
	case OutcomeClientGone:
		if !em.wroteHeader && s.baseCtx.Err() != nil {
			writeAPIError(w, shuttingDown())
			return
		}
		// The client left, or the server is shutting down mid-answer: cut the
		// connection so that a truncated answer never looks complete.
		panic(http.ErrAbortHandler)
	}
}

// answerWhole writes a non-streaming answer once the whole schedule is due.
func (s *Server) answerWhole(e *emitter, req *genRequest, pl *plan, id string, created int64, promptTokens int) string {
	if pl.failKind != faultNone {
		if !e.begin(pl.failAt()) {
			return OutcomeClientGone
		}
		if pl.failKind == faultDrop {
			e.end()
			return OutcomeDropped
		}
		writeAPIError(e.w, serverError())
		e.wroteHeader = true
		e.last = s.clock.Now()
		e.stepTokens = 0
		e.end()
		return OutcomeMidStreamError
	}
	if !e.begin(pl.end()) {
		return OutcomeClientGone
	}
	var body []byte
	if req.responses {
		body = s.responseBody(req, pl, id, created, promptTokens, e)
	} else {
		body = s.chatCompletionBody(req, pl, id, created, promptTokens)
	}
	e.w.Header().Set("Content-Type", "application/json")
	e.w.Header().Set("X-Request-Id", id)
	e.w.WriteHeader(http.StatusOK)
	e.wroteHeader = true
	e.buf = append(append(e.buf, body...), '\n')
	ok := e.flush()
	for i := range pl.choices {
		e.stepTokens += pl.choices[i].contentTokens + pl.choices[i].toolTokens
		if s.profile.ReasoningVisible {
			e.stepTokens += pl.choices[i].reasoningTokens
		}
	}
	e.end()
	if !ok {
		return OutcomeClientGone
	}
	return OutcomeCompleted
}

// checkSize bounds n x tokens.
func (s *Server) checkSize(req *genRequest) *apiError {
	per := req.outputTokens
	if per < 0 {
		per = s.profile.OutputTokens.Max
		if per == 0 {
			per = MaxOutputTokens
			if s.profile.OutputTokens.Spread == 0 {
				per = max(s.profile.OutputTokens.Median, s.profile.OutputTokens.Min, DefaultOutputTokens)
			}
		}
	}
	rt := req.reasoningTokens
	if rt < 0 {
		rt = s.profile.ReasoningTokens
	}
	per += rt
	if req.maxTokens > 0 {
		per = min(per, req.maxTokens)
	}
	if per*req.n > maxTotalTokens {
		return badRequest("n", "invalid_value", "llmsim: n x tokens per choice exceeds "+strconv.Itoa(maxTotalTokens)+"; lower n or the answer length.")
	}
	return nil
}

// toolsToCall picks the tools the answer calls: none when no tools are
// offered or tool_choice is "none"; the named tool when one is forced;
// otherwise the first llmsim_tool_calls tools (default 1), cycling.
func toolsToCall(req *genRequest) []string {
	if len(req.tools) == 0 || req.toolMode == toolsNone {
		return nil
	}
	n := max(req.toolCalls, 1)
	out := make([]string, n)
	for i := range out {
		if req.toolMode == toolsNamed {
			out[i] = req.toolNamed
		} else {
			out[i] = req.tools[i%len(req.tools)]
		}
	}
	return out
}

func itoa64(v int64) string { return strconv.FormatInt(v, 10) }

// newErrorLog adapts a func(string) to the *log.Logger http.Server wants.
func newErrorLog(fn func(string)) *log.Logger {
	if fn == nil {
		return log.New(io.Discard, "", 0)
	}
	return log.New(logWriter(fn), "", 0)
}

type logWriter func(string)

func (f logWriter) Write(p []byte) (int, error) {
	f(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
