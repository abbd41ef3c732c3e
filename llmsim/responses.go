package llmsim

import (
	"encoding/json"
	"strconv"
	"time"
)

// responseJSON is the Responses API response object.
type responseJSON struct {
	ID                 string            `json:"id"`
	Object             string            `json:"object"`
	CreatedAt          int64             `json:"created_at"`
	Status             string            `json:"status"`
	Background         bool              `json:"background"`
	CompletedAt        *int64            `json:"completed_at"`
	Error              json.RawMessage   `json:"error"`
	FrequencyPenalty   float64           `json:"frequency_penalty"`
	IncompleteDetails  *incompleteJSON   `json:"incomplete_details"`
	Instructions       *string           `json:"instructions"`
	MaxOutputTokens    *int              `json:"max_output_tokens"`
	MaxToolCalls       *int              `json:"max_tool_calls"`
	Model              string            `json:"model"`
	Output             []any             `json:"output"`
	ParallelToolCalls  bool              `json:"parallel_tool_calls"`
	PresencePenalty    float64           `json:"presence_penalty"`
	PreviousResponseID *string           `json:"previous_response_id"`
	PromptCacheKey     *string           `json:"prompt_cache_key"`
	PromptCacheRet     string            `json:"prompt_cache_retention"`
	Reasoning          reasoningCfgJSON  `json:"reasoning"`
	SafetyIdentifier   *string           `json:"safety_identifier"`
	ServiceTier        string            `json:"service_tier"`
	Store              bool              `json:"store"`
	Temperature        float64           `json:"temperature"`
	Text               textCfgJSON       `json:"text"`
	ToolChoice         json.RawMessage   `json:"tool_choice"`
	Tools              json.RawMessage   `json:"tools"`
	TopLogprobs        int               `json:"top_logprobs"`
	TopP               float64           `json:"top_p"`
	Truncation         string            `json:"truncation"`
	Usage              *respUsageJSON    `json:"usage"`
	User               *string           `json:"user"`
	Metadata           map[string]string `json:"metadata"`
}

type incompleteJSON struct {
	Reason string `json:"reason"`
}

type reasoningCfgJSON struct {
	Effort  *string `json:"effort"`
	Summary *string `json:"summary"`
}

type textCfgJSON struct {
	Format struct {
		Type string `json:"type"`
	} `json:"format"`
	Verbosity string `json:"verbosity"`
}

type respUsageJSON struct {
	InputTokens        int `json:"input_tokens"`
	InputTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokens        int `json:"output_tokens"`
	OutputTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
	TotalTokens int `json:"total_tokens"`
}

type outputTextJSON struct {
	Type        string `json:"type"`
	Annotations []any  `json:"annotations"`
	Logprobs    []any  `json:"logprobs"`
	Text        string `json:"text"`
}

type messageItemJSON struct {
	ID      string           `json:"id"`
	Type    string           `json:"type"`
	Status  string           `json:"status"`
	Content []outputTextJSON `json:"content"`
	Role    string           `json:"role"`
}

type functionCallItemJSON struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	Status    string `json:"status"`
	Arguments string `json:"arguments"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
}

type summaryTextJSON struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type reasoningItemJSON struct {
	ID               string            `json:"id"`
	Type             string            `json:"type"`
	EncryptedContent *string           `json:"encrypted_content"`
	Summary          []summaryTextJSON `json:"summary"`
}

// respWriter builds the event sequence of one Responses stream.
type respWriter struct {
	e       *emitter
	req     *genRequest
	pl      *plan
	id      string
	created int64
	prompt  int
	seq     int

	openKind   int // -1 none, else segKind (+ tool index for segTool)
	openTool   int
	outIndex   int
	text       []byte // text of the open item
	output     []any  // finished items
	visibleRsn bool
}

func (rw *respWriter) itemID(prefix string) string {
	return prefix + "_" + rw.id[len("resp_"):] + strconv.Itoa(rw.outIndex)
}

// send writes one event; body appends the JSON fields after "type" and before
// "sequence_number".
func (rw *respWriter) send(typ string, fields func([]byte) []byte) bool {
	seq := rw.seq
	rw.seq++
	return rw.e.event(typ, func(b []byte) []byte {
		b = append(b, `{"type":"`...)
		b = append(b, typ...)
		b = append(b, '"', ',')
		b = fields(b)
		b = append(b, `,"sequence_number":`...)
		b = strconv.AppendInt(b, int64(seq), 10)
		return append(b, '}')
	})
}

func appendField(b []byte, name string, v any) []byte {
	j, _ := json.Marshal(v)
	b = append(b, '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	return append(b, j...)
}

func (rw *respWriter) response(status string) responseJSON {
	r := rw.req
	out := responseJSON{ID: rw.id, Object: "response", CreatedAt: rw.created, Status: status,
		Error: json.RawMessage("null"), Instructions: r.instructions, MaxOutputTokens: r.maxOutputEcho,
		Model: r.model, Output: rw.output, ParallelToolCalls: r.parallelTools,
		Reasoning:   reasoningCfgJSON{Effort: r.reasoningEff, Summary: r.reasoningSum},
		ServiceTier: "default", Store: true, Temperature: r.temperature, ToolChoice: r.rawToolChoice,
		Tools: r.rawTools, TopP: r.topP, Truncation: "disabled", Metadata: r.metadata}
	if out.Output == nil {
		out.Output = []any{}
	}
	out.Text.Format.Type = "text"
	out.Text.Verbosity = "medium"
	out.PromptCacheRet = "in_memory"
	if len(out.ToolChoice) == 0 {
		out.ToolChoice = json.RawMessage(`"auto"`)
	}
	if len(out.Tools) == 0 {
		out.Tools = json.RawMessage(`[]`)
	}
	if out.Metadata == nil {
		out.Metadata = map[string]string{}
	}
	return out
}

func (rw *respWriter) finalResponse() responseJSON {
	c := &rw.pl.choices[0]
	status := "completed"
	if c.finish == "length" {
		status = "incomplete"
	}
	out := rw.response(status)
	if status == "incomplete" {
		out.IncompleteDetails = &incompleteJSON{Reason: "max_output_tokens"}
	} else {
		done := rw.created + int64(rw.pl.end().Seconds()+rw.e.origin.Sub(rw.e.arrived).Seconds())
		out.CompletedAt = &done
	}
	completion, reasoning := rw.pl.usage()
	u := &respUsageJSON{InputTokens: rw.prompt, OutputTokens: completion, TotalTokens: rw.prompt + completion}
	u.OutputTokensDetails.ReasoningTokens = reasoning
	out.Usage = u
	return out
}

// open starts the output item of segment sg.
func (rw *respWriter) open(c *choiceOut, sg segment) bool {
	rw.openKind, rw.openTool, rw.text = int(sg.kind), sg.tool, rw.text[:0]
	oi := rw.outIndex
	var item any
	switch sg.kind {
	case segReasoning:
		item = reasoningItemJSON{ID: rw.itemID("rs"), Type: "reasoning", Summary: []summaryTextJSON{}}
	case segContent:
		item = messageItemJSON{ID: rw.itemID("msg"), Type: "message", Status: "in_progress", Content: []outputTextJSON{}, Role: "assistant"}
	default:
		tc := c.tools[sg.tool]
		item = functionCallItemJSON{ID: rw.itemID("fc"), Type: "function_call", Status: "in_progress", CallID: tc.id, Name: tc.name}
	}
	ok := rw.send("response.output_item.added", func(b []byte) []byte {
		b = appendField(b, "item", item)
		b = append(b, `,"output_index":`...)
		return strconv.AppendInt(b, int64(oi), 10)
	})
	switch {
	case sg.kind == segReasoning && rw.visibleRsn:
		ok = rw.send("response.reasoning_summary_part.added", func(b []byte) []byte {
			b = rw.itemRef(b, "rs")
			return append(b, `,"summary_index":0,"part":{"type":"summary_text","text":""}`...)
		}) && ok
	case sg.kind == segContent:
		ok = rw.send("response.content_part.added", func(b []byte) []byte {
			b = append(b, `"content_index":0,`...)
			b = rw.itemRef(b, "msg")
			return append(b, `,"part":{"type":"output_text","annotations":[],"logprobs":[],"text":""}`...)
		}) && ok
	}
	return ok
}

// itemRef appends "item_id":...,"output_index":N.
func (rw *respWriter) itemRef(b []byte, prefix string) []byte {
	b = append(b, `"item_id":`...)
	b = appendJSONString(b, rw.itemID(prefix))
	b = append(b, `,"output_index":`...)
	return strconv.AppendInt(b, int64(rw.outIndex), 10)
}

// delta writes the delta event of part pt.
func (rw *respWriter) delta(c *choiceOut, sg segment, pt part) bool {
	start := len(rw.text)
	for _, it := range c.items[pt.lo:pt.hi] {
		rw.text = append(rw.text, it...)
	}
	d := string(rw.text[start:])
	switch sg.kind {
	case segReasoning:
		return rw.send("response.reasoning_summary_text.delta", func(b []byte) []byte {
			b = append(b, `"delta":`...)
			b = appendJSONString(b, d)
			b = append(b, ',')
			b = rw.itemRef(b, "rs")
			return append(b, `,"summary_index":0`...)
		})
	case segContent:
		return rw.send("response.output_text.delta", func(b []byte) []byte {
			b = append(b, `"content_index":0,"delta":`...)
			b = appendJSONString(b, d)
			b = append(b, ',')
			b = rw.itemRef(b, "msg")
			return append(b, `,"logprobs":[]`...)
		})
	}
	return rw.send("response.function_call_arguments.delta", func(b []byte) []byte {
		b = append(b, `"delta":`...)
		b = appendJSONString(b, d)
		b = append(b, ',')
		return rw.itemRef(b, "fc")
	})
}

// close finishes the open item.
func (rw *respWriter) close(c *choiceOut) bool {
	text := string(rw.text)
	ok := true
	var item any
	switch segKind(rw.openKind) {
	case segReasoning:
		it := reasoningItemJSON{ID: rw.itemID("rs"), Type: "reasoning", Summary: []summaryTextJSON{}}
		if rw.visibleRsn {
			ok = rw.send("response.reasoning_summary_text.done", func(b []byte) []byte {
				b = rw.itemRef(b, "rs")
				b = append(b, `,"summary_index":0,"text":`...)
				return appendJSONString(b, text)
			})
			ok = rw.send("response.reasoning_summary_part.done", func(b []byte) []byte {
				b = rw.itemRef(b, "rs")
				b = append(b, `,"summary_index":0,"part":{"type":"summary_text","text":`...)
				b = appendJSONString(b, text)
				return append(b, '}')
			}) && ok
			it.Summary = []summaryTextJSON{{Type: "summary_text", Text: text}}
		}
		item = it
	case segContent:
		ok = rw.send("response.output_text.done", func(b []byte) []byte {
			b = append(b, `"content_index":0,`...)
			b = rw.itemRef(b, "msg")
			b = append(b, `,"logprobs":[],"text":`...)
			return appendJSONString(b, text)
		})
		part := outputTextJSON{Type: "output_text", Annotations: []any{}, Logprobs: []any{}, Text: text}
		ok = rw.send("response.content_part.done", func(b []byte) []byte {
			b = append(b, `"content_index":0,`...)
			b = rw.itemRef(b, "msg")
			b = append(b, ',')
			return appendField(b, "part", part)
		}) && ok
		status := "completed"
		if c.finish == "length" {
			status = "incomplete"
		}
		item = messageItemJSON{ID: rw.itemID("msg"), Type: "message", Status: status, Content: []outputTextJSON{part}, Role: "assistant"}
	default:
		tc := c.tools[rw.openTool]
		ok = rw.send("response.function_call_arguments.done", func(b []byte) []byte {
			b = rw.itemRef(b, "fc")
			b = append(b, `,"arguments":`...)
			return appendJSONString(b, text)
		})
		item = functionCallItemJSON{ID: rw.itemID("fc"), Type: "function_call", Status: "completed", Arguments: text, CallID: tc.id, Name: tc.name}
	}
	oi := rw.outIndex
	ok = rw.send("response.output_item.done", func(b []byte) []byte {
		b = appendField(b, "item", item)
		b = append(b, `,"output_index":`...)
		return strconv.AppendInt(b, int64(oi), 10)
	}) && ok
	rw.output = append(rw.output, item)
	rw.outIndex++
	rw.openKind = -1
	return ok
}

// streamResponses writes a Responses API event stream following pl.
func (s *Server) streamResponses(e *emitter, req *genRequest, pl *plan, id string, created int64, promptTokens int) string {
	rw := &respWriter{e: e, req: req, pl: pl, id: id, created: created, prompt: promptTokens,
		openKind: -1, visibleRsn: s.profile.ReasoningVisible}
	if !e.startSSE(id) {
		return OutcomeClientGone
	}
	// created and in_progress go out at once, as OpenAI sends them
	e.begin(0)
	inProgress := rw.response("in_progress")
	rw.send("response.created", func(b []byte) []byte { return appendField(b, "response", inProgress) })
	rw.send("response.in_progress", func(b []byte) []byte { return appendField(b, "response", inProgress) })
	e.end()
	c := &pl.choices[0]
	for si := range pl.steps {
		st := &pl.steps[si]
		if si == pl.failStep {
			return rw.fault(st.at)
		}
		for _, pt := range st.parts {
			sg := c.segs[pt.seg]
			first := rw.openKind != int(sg.kind) || (sg.kind == segTool && rw.openTool != sg.tool)
			last := pt.hi == sg.hi
			hidden := sg.kind == segReasoning && !rw.visibleRsn
			if hidden && !first && !last {
				continue
			}
			if !e.inStep && !e.begin(st.at) {
				return OutcomeClientGone
			}
			if first {
				rw.open(c, sg)
			}
			if !hidden {
				rw.delta(c, sg, pt)
				e.stepTokens += pt.hi - pt.lo
			}
			if last {
				rw.close(c)
			}
		}
		e.end()
		if e.err != nil {
			return OutcomeClientGone
		}
	}
	if pl.failStep >= len(pl.steps) {
		return rw.fault(pl.end())
	}
	if !e.begin(pl.end()) {
		return OutcomeClientGone
	}
	final := rw.finalResponse()
	typ := "response.completed"
	if final.Status == "incomplete" {
		typ = "response.incomplete"
	}
	rw.send(typ, func(b []byte) []byte { return appendField(b, "response", final) })
	e.end()
	if e.err != nil {
		return OutcomeClientGone
	}
	return OutcomeCompleted
}

// fault ends the stream with the plan's fault at offset at.
func (rw *respWriter) fault(at time.Duration) string {
	if !rw.e.begin(at) {
		return OutcomeClientGone
	}
	defer rw.e.end()
	if rw.pl.failKind == faultDrop {
		return OutcomeDropped
	}
	me := midStreamError()
	rw.send("error", func(b []byte) []byte {
		b = append(b, `"code":"server_error","message":`...)
		b = appendJSONString(b, me.message)
		return append(b, `,"param":null`...)
	})
	return OutcomeMidStreamError
}

// responseBody is the non-streaming Responses answer.
func (s *Server) responseBody(req *genRequest, pl *plan, id string, created int64, promptTokens int, e *emitter) []byte {
	rw := &respWriter{e: e, req: req, pl: pl, id: id, created: created, prompt: promptTokens,
		openKind: -1, visibleRsn: s.profile.ReasoningVisible}
	c := &pl.choices[0]
	for _, sg := range c.segs {
		text := joinItems(c.items[sg.lo:sg.hi])
		switch sg.kind {
		case segReasoning:
			it := reasoningItemJSON{ID: rw.itemID("rs"), Type: "reasoning", Summary: []summaryTextJSON{}}
			if rw.visibleRsn {
				it.Summary = []summaryTextJSON{{Type: "summary_text", Text: text}}
			}
			rw.output = append(rw.output, it)
		case segContent:
			status := "completed"
			if c.finish == "length" {
				status = "incomplete"
			}
			rw.output = append(rw.output, messageItemJSON{ID: rw.itemID("msg"), Type: "message", Status: status,
				Content: []outputTextJSON{{Type: "output_text", Annotations: []any{}, Logprobs: []any{}, Text: text}}, Role: "assistant"})
		default:
			tc := c.tools[sg.tool]
			rw.output = append(rw.output, functionCallItemJSON{ID: rw.itemID("fc"), Type: "function_call", Status: "completed",
				Arguments: text, CallID: tc.id, Name: tc.name})
		}
		rw.outIndex++
	}
	b, _ := json.Marshal(rw.finalResponse())
	return b
}
