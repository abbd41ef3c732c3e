package llmsim

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
)

// usageJSON is the chat completions usage object, with OpenAI's detail fields.
type usageJSON struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	TotalTokens         int `json:"total_tokens"`
	PromptTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
		AudioTokens  int `json:"audio_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails struct {
		ReasoningTokens          int `json:"reasoning_tokens"`
		AudioTokens              int `json:"audio_tokens"`
		AcceptedPredictionTokens int `json:"accepted_prediction_tokens"`
		RejectedPredictionTokens int `json:"rejected_prediction_tokens"`
	} `json:"completion_tokens_details"`
}

func chatUsage(prompt, completion, reasoning int) usageJSON {
	u := usageJSON{PromptTokens: prompt, CompletionTokens: completion, TotalTokens: prompt + completion}
	u.CompletionTokensDetails.ReasoningTokens = reasoning
	return u
}

// chatStream holds what every chunk of one chat stream repeats.
type chatStream struct {
	prefix []byte // {"id":...,"choices":[
	suffix []byte // ]} or ],"usage":null}
}

func newChatStream(id string, created int64, model string, includeUsage bool) chatStream {
	var p []byte
	p = append(p, `{"id":`...)
	p = appendJSONString(p, id)
	p = append(p, `,"object":"chat.completion.chunk","created":`...)
	p = strconv.AppendInt(p, created, 10)
	p = append(p, `,"model":`...)
	p = appendJSONString(p, model)
	p = append(p, `,"service_tier":"default","system_fingerprint":"`+systemFingerprint+`","choices":[`...)
	s := []byte(`]}`)
	if includeUsage {
		s = []byte(`],"usage":null}`)
	}
	return chatStream{prefix: p, suffix: s}
}

// systemFingerprint identifies the simulator in every answer.
const systemFingerprint = "fp_llmsim"

// appendItems appends items[lo:hi] as one JSON string.
func appendItems(b []byte, items []string, lo, hi int) []byte {
	b = append(b, '"')
	for _, it := range items[lo:hi] {
		b = appendEscaped(b, it)
	}
	return append(b, '"')
}

// chunk appends one chunk with one choice whose delta is the raw JSON body
// built by delta, and the given finish reason ("" = null).
func (cs *chatStream) chunk(b []byte, index int, delta func([]byte) []byte, finish string) []byte {
	b = append(b, cs.prefix...)
	b = append(b, `{"index":`...)
	b = strconv.AppendInt(b, int64(index), 10)
	b = append(b, `,"delta":{`...)
	b = delta(b)
	b = append(b, `},"logprobs":null,"finish_reason":`...)
	b = appendNullableString(b, finish)
	b = append(b, '}')
	return append(b, cs.suffix...)
}

// streamChat writes a chat completion stream following pl.
func (s *Server) streamChat(e *emitter, req *genRequest, pl *plan, id string, created int64, promptTokens int) string {
	cs := newChatStream(id, created, req.model, req.includeUsage)
	if !e.startSSE(id) {
		return OutcomeClientGone
	}
	n := len(pl.choices)
	roleSent := make([]bool, n)
	finished := make([]bool, n)
	openTool := make([]int, n)
	for i := range openTool {
		openTool[i] = -1
	}
	visible := s.profile.ReasoningVisible
	sendRole := func(ci int) bool {
		roleSent[ci] = true
		c := &pl.choices[ci]
		return e.data(func(b []byte) []byte {
			return cs.chunk(b, ci, func(b []byte) []byte {
				if len(c.tools) > 0 {
					return append(b, `"role":"assistant","content":null,"refusal":null`...)
				}
				return append(b, `"role":"assistant","content":"","refusal":null`...)
			}, "")
		})
	}
	if s.profile.EarlyRoleChunk {
		e.begin(0)
		for ci := range roleSent {
			sendRole(ci)
		}
		e.end()
	}
	for si := range pl.steps {
		st := &pl.steps[si]
		if si == pl.failStep {
			return s.chatFault(e, pl, st)
		}
		for _, pt := range st.parts {
			c := &pl.choices[pt.choice]
			sg := c.segs[pt.seg]
			ci := pt.choice
			if sg.kind == segReasoning && !visible {
				continue
			}
			if !e.inStep && !e.begin(st.at) {
				return OutcomeClientGone
			}
			if !roleSent[ci] && !sendRole(ci) {
				return OutcomeClientGone
			}
			if sg.kind == segTool && openTool[ci] != sg.tool {
				openTool[ci] = sg.tool
				tc := c.tools[sg.tool]
				e.data(func(b []byte) []byte {
					return cs.chunk(b, ci, func(b []byte) []byte {
						b = append(b, `"tool_calls":[{"index":`...)
						b = strconv.AppendInt(b, int64(sg.tool), 10)
						b = append(b, `,"id":`...)
						b = appendJSONString(b, tc.id)
						b = append(b, `,"type":"function","function":{"name":`...)
						b = appendJSONString(b, tc.name)
						return append(b, `,"arguments":""}}]`...)
					}, "")
				})
			}
			e.data(func(b []byte) []byte {
				return cs.chunk(b, ci, func(b []byte) []byte {
					switch sg.kind {
					case segReasoning:
						b = append(b, `"content":null,"reasoning_content":`...)
						return appendItems(b, c.items, pt.lo, pt.hi)
					case segTool:
						b = append(b, `"tool_calls":[{"index":`...)
						b = strconv.AppendInt(b, int64(sg.tool), 10)
						b = append(b, `,"function":{"arguments":`...)
						b = appendItems(b, c.items, pt.lo, pt.hi)
						return append(b, `}}]`...)
					}
					b = append(b, `"content":`...)
					return appendItems(b, c.items, pt.lo, pt.hi)
				}, "")
			})
			e.stepTokens += pt.hi - pt.lo
			if pt.seg == len(c.segs)-1 && pt.hi == sg.hi {
				finished[ci] = true
				e.data(func(b []byte) []byte {
					return cs.chunk(b, ci, func(b []byte) []byte { return b }, c.finish)
				})
			}
		}
		e.end()
		if e.err != nil {
			return OutcomeClientGone
		}
	}
	if pl.failStep >= len(pl.steps) {
		return s.chatFault(e, pl, nil)
	}
	// choices with nothing visible left (empty answers) still get their role
	// and finish chunks, at the end of the schedule
	for ci := range finished {
		if finished[ci] {
			continue
		}
		if !e.inStep && !e.begin(pl.end()) {
			return OutcomeClientGone
		}
		if !roleSent[ci] {
			sendRole(ci)
		}
		c := &pl.choices[ci]
		e.data(func(b []byte) []byte {
			return cs.chunk(b, ci, func(b []byte) []byte { return b }, c.finish)
		})
	}
	e.end()
	if req.includeUsage {
		completion, reasoning := pl.usage()
		u, _ := json.Marshal(chatUsage(promptTokens, completion, reasoning))
		e.data(func(b []byte) []byte {
			b = append(b, cs.prefix...)
			b = append(b, `],"usage":`...)
			b = append(b, u...)
			return append(b, '}')
		})
	}
	e.buf = append(e.buf, "data: [DONE]\n\n"...)
	if !e.flush() {
		return OutcomeClientGone
	}
	return OutcomeCompleted
}

// chatFault ends a chat stream with the plan's fault at step st (nil: at the
// end of the schedule).
func (s *Server) chatFault(e *emitter, pl *plan, st *step) string {
	at := pl.end()
	if st != nil {
		at = st.at
	}
	if !e.begin(at) {
		return OutcomeClientGone
	}
	if pl.failKind == faultDrop {
		e.end()
		return OutcomeDropped
	}
	e.data(func(b []byte) []byte { return midStreamError().appendJSON(b) })
	e.end()
	return OutcomeMidStreamError
}

func midStreamError() *apiError {
	return &apiError{status: http.StatusInternalServerError, typ: typeServer,
		message: "The server had an error while processing your request. Sorry about that! (llmsim: injected mid-stream failure)"}
}

// chat.completion (non-streaming) body.
type chatCompletionJSON struct {
	ID                string           `json:"id"`
	Object            string           `json:"object"`
	Created           int64            `json:"created"`
	Model             string           `json:"model"`
	Choices           []chatChoiceJSON `json:"choices"`
	Usage             usageJSON        `json:"usage"`
	ServiceTier       string           `json:"service_tier"`
	SystemFingerprint string           `json:"system_fingerprint"`
}

type chatChoiceJSON struct {
	Index        int             `json:"index"`
	Message      chatMessageOut  `json:"message"`
	Logprobs     json.RawMessage `json:"logprobs"`
	FinishReason string          `json:"finish_reason"`
}

type chatMessageOut struct {
	Role             string         `json:"role"`
	Content          *string        `json:"content"`
	ReasoningContent *string        `json:"reasoning_content,omitempty"`
	Refusal          *string        `json:"refusal"`
	ToolCalls        []toolCallJSON `json:"tool_calls,omitempty"`
	Annotations      []any          `json:"annotations"`
}

type toolCallJSON struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

func joinItems(items []string) string {
	var sb strings.Builder
	for _, it := range items {
		sb.WriteString(it)
	}
	return sb.String()
}

// segText returns the text of the choice's segments of kind k.
func (c *choiceOut) segText(k segKind) (string, bool) {
	var sb strings.Builder
	found := false
	for _, sg := range c.segs {
		if sg.kind == k {
			found = true
			for _, it := range c.items[sg.lo:sg.hi] {
				sb.WriteString(it)
			}
		}
	}
	return sb.String(), found
}

func (s *Server) chatCompletionBody(req *genRequest, pl *plan, id string, created int64, promptTokens int) []byte {
	out := chatCompletionJSON{ID: id, Object: "chat.completion", Created: created, Model: req.model,
		ServiceTier: "default", SystemFingerprint: systemFingerprint}
	completion, reasoning := pl.usage()
	out.Usage = chatUsage(promptTokens, completion, reasoning)
	for ci := range pl.choices {
		c := &pl.choices[ci]
		msg := chatMessageOut{Role: "assistant", Annotations: []any{}}
		if len(c.tools) == 0 {
			text, _ := c.segText(segContent)
			msg.Content = &text
		}
		if r, ok := c.segText(segReasoning); ok && s.profile.ReasoningVisible {
			msg.ReasoningContent = &r
		}
		for _, tc := range c.tools {
			var j toolCallJSON
			j.ID, j.Type = tc.id, "function"
			j.Function.Name = tc.name
			j.Function.Arguments = joinItems(c.items[tc.lo:tc.hi])
			msg.ToolCalls = append(msg.ToolCalls, j)
		}
		out.Choices = append(out.Choices, chatChoiceJSON{Index: ci, Message: msg, Logprobs: json.RawMessage("null"), FinishReason: c.finish})
	}
	b, _ := json.Marshal(out)
	return b
}
