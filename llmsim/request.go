package llmsim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// Limits that OpenAI enforces and the simulator copies.
const (
	maxChoices  = 128
	maxTools    = 128
	maxMessages = 100_000
	// maxTotalTokens bounds n x tokens of one request, to bound memory.
	maxTotalTokens = 1_000_000
)

// fault is a failure forced by the llmsim_fault extension or drawn from the
// profile's rates.
type fault uint8

const (
	faultNone fault = iota
	faultServerError
	faultRateLimit
	faultMidStream
	faultDrop
)

var faultNames = map[string]fault{
	"none": faultNone, "error_500": faultServerError, "rate_limit": faultRateLimit,
	"midstream_error": faultMidStream, "drop": faultDrop,
}

// toolChoice modes
const (
	toolsAuto = iota
	toolsNone
	toolsRequired
	toolsNamed
)

// genRequest is a validated generation request, from either endpoint.
type genRequest struct {
	responses    bool // POST /v1/responses (else chat completions)
	model        string
	stream       bool
	includeUsage bool // chat: stream_options.include_usage
	n            int
	maxTokens    int    // 0 = no cap
	prompt       string // all prompt text, for the [easy]/[hard] tags
	promptTexts  int    // number of messages/items, for the prompt-token estimate
	tools        []string
	toolMode     int
	toolNamed    string
	metadata     map[string]string

	// responses only, echoed in the response object
	instructions  *string
	rawTools      json.RawMessage
	rawToolChoice json.RawMessage
	reasoningEff  *string
	reasoningSum  *string
	maxOutputEcho *int
	parallelTools bool
	temperature   float64
	topP          float64

	// extensions
	outputTokens    int // -1 = profile decides
	predictability  float64
	hasPredict      bool
	reasoningTokens int // -1 = profile decides
	toolCalls       int // 0 = default
	fault           fault
	hasFault        bool
}

// chat completions request body (only the fields the simulator reads or
// type-checks; unknown fields are accepted and ignored, as a proxy would).
type chatRequestJSON struct {
	Model         *string         `json:"model"`
	Messages      json.RawMessage `json:"messages"`
	Stream        *bool           `json:"stream"`
	StreamOptions *struct {
		IncludeUsage *bool `json:"include_usage"`
	} `json:"stream_options"`
	N                   *int              `json:"n"`
	MaxTokens           *int              `json:"max_tokens"`
	MaxCompletionTokens *int              `json:"max_completion_tokens"`
	Tools               []chatToolJSON    `json:"tools"`
	ToolChoice          json.RawMessage   `json:"tool_choice"`
	Metadata            map[string]string `json:"metadata"`
	Seed                *int64            `json:"seed"`
	Temperature         *float64          `json:"temperature"`
	TopP                *float64          `json:"top_p"`
	ParallelToolCalls   *bool             `json:"parallel_tool_calls"`
	Stop                json.RawMessage   `json:"stop"`
	User                *string           `json:"user"`
}

type chatToolJSON struct {
	Type     string `json:"type"`
	Function *struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
		Strict      *bool           `json:"strict"`
	} `json:"function"`
}

type chatMessageJSON struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	Name       *string         `json:"name"`
	ToolCallID *string         `json:"tool_call_id"`
	ToolCalls  json.RawMessage `json:"tool_calls"`
}

type contentPartJSON struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

var chatRoles = map[string]bool{"system": true, "developer": true, "user": true, "assistant": true, "tool": true, "function": true}

// decodeJSON decodes body into v and turns decoding errors into OpenAI's 400s.
func decodeJSON(body []byte, v any) *apiError {
	if len(bytes.TrimSpace(body)) == 0 {
		return badRequest("", "", "We could not parse the JSON body of your request: the body is empty. The OpenAI API expects a JSON payload.")
	}
	err := json.Unmarshal(body, v)
	if err == nil {
		return nil
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return badRequest(te.Field, "invalid_type", fmt.Sprintf("Invalid type for '%s': expected %s, but got %s instead.", te.Field, jsonKind(te.Type.Kind().String()), jsonValueKind(te.Value)))
	}
	if errors.As(err, &te) {
		return badRequest("", "invalid_type", "Invalid type for the request body: expected an object, but got "+jsonValueKind(te.Value)+" instead.")
	}
	return badRequest("", "", "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)")
}

func jsonKind(goKind string) string {
	switch goKind {
	case "int", "int64", "int32":
		return "an integer"
	case "float64", "float32":
		return "a number"
	case "bool":
		return "a boolean"
	case "string":
		return "a string"
	case "slice", "array":
		return "an array"
	case "map", "struct":
		return "an object"
	}
	return "a value of another type"
}

// jsonValueKind names the JSON kind encoding/json reports ("string",
// "number", "array", "object", "bool") with an article, as OpenAI does.
func jsonValueKind(v string) string {
	switch {
	case v == "array" || v == "object":
		return "an " + v
	case v == "bool":
		return "a boolean"
	case strings.HasPrefix(v, "number"):
		return "a number"
	case v == "string":
		return "a string"
	}
	return v
}

// isNull reports whether raw is absent or JSON null.
func isNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || bytes.Equal(t, []byte("null"))
}

// contentText extracts the text of a message content: a string, an array of
// parts (text parts are read, others ignored) or null.
func contentText(raw json.RawMessage, param string) (string, *apiError) {
	if isNull(raw) {
		return "", nil
	}
	t := bytes.TrimSpace(raw)
	switch t[0] {
	case '"':
		var s string
		if err := json.Unmarshal(t, &s); err != nil {
			return "", badRequest(param, "invalid_type", "Invalid type for '"+param+"': expected a string or an array of content parts.")
		}
		return s, nil
	case '[':
		var parts []contentPartJSON
		if err := json.Unmarshal(t, &parts); err != nil {
			return "", badRequest(param, "invalid_type", "Invalid type for '"+param+"': expected an array of content parts.")
		}
		var b strings.Builder
		for _, p := range parts {
			b.WriteString(p.Text)
		}
		return b.String(), nil
	}
	return "", badRequest(param, "invalid_type", "Invalid type for '"+param+"': expected a string or an array of content parts.")
}

// parseChatRequest validates a chat completions body.
func parseChatRequest(body []byte) (*genRequest, *apiError) {
	var in chatRequestJSON
	if e := decodeJSON(body, &in); e != nil {
		return nil, e
	}
	if in.Model == nil || *in.Model == "" {
		return nil, badRequest("model", "", "you must provide a model parameter")
	}
	if isNull(in.Messages) {
		return nil, badRequest("messages", "", "Missing required parameter: 'messages'.")
	}
	var msgs []chatMessageJSON
	if err := json.Unmarshal(in.Messages, &msgs); err != nil {
		return nil, badRequest("messages", "invalid_type", "Invalid type for 'messages': expected an array of objects.")
	}
	if len(msgs) == 0 {
		return nil, badRequest("messages", "empty_array", "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.")
	}
	if len(msgs) > maxMessages {
		return nil, badRequest("messages", "array_above_max_length", "Invalid 'messages': array too long.")
	}
	r := &genRequest{model: *in.Model, n: 1, outputTokens: -1, reasoningTokens: -1, metadata: in.Metadata}
	var prompt strings.Builder
	for i, m := range msgs {
		p := "messages[" + strconv.Itoa(i) + "]"
		if !chatRoles[m.Role] {
			if m.Role == "" {
				return nil, badRequest(p+".role", "", "Missing required parameter: '"+p+".role'.")
			}
			return nil, badRequest(p+".role", "invalid_value", "Invalid value: '"+m.Role+"'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.")
		}
		text, e := contentText(m.Content, p+".content")
		if e != nil {
			return nil, e
		}
		prompt.WriteString(text)
		prompt.WriteByte('\n')
	}
	r.prompt = prompt.String()
	r.promptTexts = len(msgs)
	if in.Stream != nil {
		r.stream = *in.Stream
	}
	if in.StreamOptions != nil {
		if !r.stream {
			return nil, badRequest("stream_options", "invalid_value", "The 'stream_options' parameter is only allowed when 'stream' is enabled.")
		}
		r.includeUsage = in.StreamOptions.IncludeUsage != nil && *in.StreamOptions.IncludeUsage
	}
	if in.N != nil {
		if *in.N < 1 || *in.N > maxChoices {
			return nil, badRequest("n", "integer_out_of_range", fmt.Sprintf("Invalid 'n': integer out of range. Expected a value between 1 and %d, but got %d instead.", maxChoices, *in.N))
		}
		r.n = *in.N
	}
	for _, mt := range []struct {
		name string
		v    *int
	}{{"max_tokens", in.MaxTokens}, {"max_completion_tokens", in.MaxCompletionTokens}} {
		if mt.v == nil {
			continue
		}
		if *mt.v < 1 {
			return nil, badRequest(mt.name, "integer_below_min_value", fmt.Sprintf("Invalid '%s': integer below minimum value. Expected a value >= 1, but got %d instead.", mt.name, *mt.v))
		}
		if r.maxTokens == 0 || *mt.v < r.maxTokens {
			r.maxTokens = *mt.v
		}
	}
	if len(in.Tools) > maxTools {
		return nil, badRequest("tools", "array_above_max_length", fmt.Sprintf("Invalid 'tools': array too long. Expected an array with maximum length %d.", maxTools))
	}
	for i, t := range in.Tools {
		p := "tools[" + strconv.Itoa(i) + "]"
		if t.Type != "function" {
			return nil, badRequest(p+".type", "invalid_value", "Invalid value: '"+t.Type+"'. Supported values are: 'function'.")
		}
		if t.Function == nil || t.Function.Name == "" {
			return nil, badRequest(p+".function.name", "", "Missing required parameter: '"+p+".function.name'.")
		}
		r.tools = append(r.tools, t.Function.Name)
	}
	if e := parseToolChoice(r, in.ToolChoice, false); e != nil {
		return nil, e
	}
	return r, nil
}

// parseToolChoice reads tool_choice: "none" | "auto" | "required" |
// {"type":"function","function":{"name":...}} (chat) or
// {"type":"function","name":...} (responses).
func parseToolChoice(r *genRequest, raw json.RawMessage, responses bool) *apiError {
	if isNull(raw) {
		return nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		switch s {
		case "none":
			r.toolMode = toolsNone
		case "auto":
			r.toolMode = toolsAuto
		case "required":
			r.toolMode = toolsRequired
		default:
			return badRequest("tool_choice", "invalid_value", "Invalid value: '"+s+"'. Supported values are: 'none', 'auto', and 'required'.")
		}
		if r.toolMode == toolsRequired && len(r.tools) == 0 {
			return badRequest("tool_choice", "", "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.")
		}
		return nil
	}
	var obj struct {
		Type     string `json:"type"`
		Name     string `json:"name"`
		Function *struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil {
		return badRequest("tool_choice", "invalid_type", "Invalid type for 'tool_choice': expected a string or an object.")
	}
	name := obj.Name
	if !responses && obj.Function != nil {
		name = obj.Function.Name
	}
	if obj.Type != "function" || name == "" {
		return badRequest("tool_choice", "invalid_value", "Invalid value for 'tool_choice': expected {\"type\":\"function\", ...} naming a function.")
	}
	for _, t := range r.tools {
		if t == name {
			r.toolMode, r.toolNamed = toolsNamed, name
			return nil
		}
	}
	return badRequest("tool_choice", "invalid_value", "Invalid value for 'tool_choice': function '"+name+"' is not in 'tools'.")
}

// responses request body.
type responsesRequestJSON struct {
	Model           *string           `json:"model"`
	Input           json.RawMessage   `json:"input"`
	Instructions    *string           `json:"instructions"`
	Stream          *bool             `json:"stream"`
	MaxOutputTokens *int              `json:"max_output_tokens"`
	Tools           json.RawMessage   `json:"tools"`
	ToolChoice      json.RawMessage   `json:"tool_choice"`
	Metadata        map[string]string `json:"metadata"`
	Reasoning       *struct {
		Effort  *string `json:"effort"`
		Summary *string `json:"summary"`
	} `json:"reasoning"`
	ParallelToolCalls *bool    `json:"parallel_tool_calls"`
	Temperature       *float64 `json:"temperature"`
	TopP              *float64 `json:"top_p"`
	Store             *bool    `json:"store"`
	User              *string  `json:"user"`
}

type responsesToolJSON struct {
	Type string `json:"type"`
	Name string `json:"name"`
}

type responsesInputItemJSON struct {
	Type    string          `json:"type"`
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
	Output  json.RawMessage `json:"output"`
}

// minMaxOutputTokens is OpenAI's lower bound for max_output_tokens.
const minMaxOutputTokens = 16

// parseResponsesRequest validates a /v1/responses body.
func parseResponsesRequest(body []byte) (*genRequest, *apiError) {
	var in responsesRequestJSON
	if e := decodeJSON(body, &in); e != nil {
		return nil, e
	}
	if in.Model == nil || *in.Model == "" {
		return nil, badRequest("model", "", "Missing required parameter: 'model'.")
	}
	r := &genRequest{responses: true, model: *in.Model, n: 1, outputTokens: -1, reasoningTokens: -1,
		metadata: in.Metadata, instructions: in.Instructions, parallelTools: true, temperature: 1, topP: 1}
	if isNull(in.Input) {
		return nil, badRequest("input", "", "Missing required parameter: 'input'.")
	}
	var prompt strings.Builder
	if in.Instructions != nil {
		prompt.WriteString(*in.Instructions)
		prompt.WriteByte('\n')
	}
	t := bytes.TrimSpace(in.Input)
	switch t[0] {
	case '"':
		var s string
		if err := json.Unmarshal(t, &s); err != nil {
			return nil, badRequest("input", "invalid_type", "Invalid type for 'input': expected a string or an array of input items.")
		}
		if s == "" {
			return nil, badRequest("input", "empty_string", "Invalid 'input': empty string. Expected a string with minimum length 1, but got an empty string instead.")
		}
		prompt.WriteString(s)
		r.promptTexts = 1
	case '[':
		var items []responsesInputItemJSON
		if err := json.Unmarshal(t, &items); err != nil {
			return nil, badRequest("input", "invalid_type", "Invalid type for 'input': expected a string or an array of input items.")
		}
		if len(items) == 0 {
			return nil, badRequest("input", "empty_array", "Invalid 'input': empty array. Expected an array with minimum length 1, but got an empty array instead.")
		}
		if len(items) > maxMessages {
			return nil, badRequest("input", "array_above_max_length", "Invalid 'input': array too long.")
		}
		for i, it := range items {
			p := "input[" + strconv.Itoa(i) + "]"
			if it.Role != "" && !chatRoles[it.Role] {
				return nil, badRequest(p+".role", "invalid_value", "Invalid value: '"+it.Role+"'. Supported values are: 'assistant', 'system', 'developer', and 'user'.")
			}
			text, e := contentText(it.Content, p+".content")
			if e != nil {
				return nil, e
			}
			prompt.WriteString(text)
			if !isNull(it.Output) {
				prompt.Write(it.Output)
			}
			prompt.WriteByte('\n')
		}
		r.promptTexts = len(items)
	default:
		return nil, badRequest("input", "invalid_type", "Invalid type for 'input': expected a string or an array of input items.")
	}
	r.prompt = prompt.String()
	if in.Stream != nil {
		r.stream = *in.Stream
	}
	if in.MaxOutputTokens != nil {
		if *in.MaxOutputTokens < minMaxOutputTokens {
			return nil, badRequest("max_output_tokens", "integer_below_min_value", fmt.Sprintf("Invalid 'max_output_tokens': integer below minimum value. Expected a value >= %d, but got %d instead.", minMaxOutputTokens, *in.MaxOutputTokens))
		}
		r.maxTokens = *in.MaxOutputTokens
		r.maxOutputEcho = in.MaxOutputTokens
	}
	if !isNull(in.Tools) {
		var tools []responsesToolJSON
		if err := json.Unmarshal(in.Tools, &tools); err != nil {
			return nil, badRequest("tools", "invalid_type", "Invalid type for 'tools': expected an array of tool objects.")
		}
		if len(tools) > maxTools {
			return nil, badRequest("tools", "array_above_max_length", fmt.Sprintf("Invalid 'tools': array too long. Expected an array with maximum length %d.", maxTools))
		}
		for i, tl := range tools {
			p := "tools[" + strconv.Itoa(i) + "]"
			if tl.Type != "function" {
				// built-in tools (web_search, file_search, ...) are accepted and never called
				continue
			}
			if tl.Name == "" {
				return nil, badRequest(p+".name", "", "Missing required parameter: '"+p+".name'.")
			}
			r.tools = append(r.tools, tl.Name)
		}
		r.rawTools = in.Tools
	}
	if e := parseToolChoice(r, in.ToolChoice, true); e != nil {
		return nil, e
	}
	r.rawToolChoice = in.ToolChoice
	if in.Reasoning != nil {
		r.reasoningEff, r.reasoningSum = in.Reasoning.Effort, in.Reasoning.Summary
	}
	if in.ParallelToolCalls != nil {
		r.parallelTools = *in.ParallelToolCalls
	}
	if in.Temperature != nil {
		r.temperature = *in.Temperature
	}
	if in.TopP != nil {
		r.topP = *in.TopP
	}
	return r, nil
}

// Extension names: request metadata keys, and the equivalent HTTP headers.
const (
	ExtOutputTokens    = "llmsim_output_tokens"    // exact answer length in tokens (per choice)
	ExtPredictability  = "llmsim_predictability"   // 0..1, drives speculative bursts
	ExtReasoningTokens = "llmsim_reasoning_tokens" // reasoning tokens before the answer
	ExtFault           = "llmsim_fault"            // none|error_500|rate_limit|midstream_error|drop
	ExtToolCalls       = "llmsim_tool_calls"       // number of tool calls (1..16) when tools are offered
)

// extensionHeader maps an extension name to its header: llmsim_output_tokens
// -> X-Llmsim-Output-Tokens.
func extensionHeader(name string) string {
	parts := strings.Split(name, "_")
	for i, p := range parts {
		parts[i] = strings.ToUpper(p[:1]) + p[1:]
	}
	return "X-" + strings.Join(parts, "-")
}

// parseExtensions reads the llmsim_* metadata keys and X-Llmsim-* headers;
// a header wins over metadata.
func parseExtensions(r *genRequest, h http.Header) *apiError {
	get := func(name string) (string, string, bool) {
		if v := h.Get(extensionHeader(name)); v != "" {
			return v, extensionHeader(name), true
		}
		v, ok := r.metadata[name]
		return v, "metadata." + name, ok
	}
	intExt := func(name string, lo, hi int) (int, bool, *apiError) {
		v, param, ok := get(name)
		if !ok {
			return 0, false, nil
		}
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < lo || n > hi {
			return 0, false, badRequest(param, "invalid_value", fmt.Sprintf("Invalid '%s': expected an integer between %d and %d, got %q.", param, lo, hi, v))
		}
		return n, true, nil
	}
	if n, ok, e := intExt(ExtOutputTokens, 0, MaxOutputTokens); e != nil {
		return e
	} else if ok {
		r.outputTokens = n
	}
	if n, ok, e := intExt(ExtReasoningTokens, 0, MaxOutputTokens); e != nil {
		return e
	} else if ok {
		r.reasoningTokens = n
	}
	if n, ok, e := intExt(ExtToolCalls, 1, 16); e != nil {
		return e
	} else if ok {
		r.toolCalls = n
	}
	if v, param, ok := get(ExtPredictability); ok {
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || !(f >= 0 && f <= 1) {
			return badRequest(param, "invalid_value", fmt.Sprintf("Invalid '%s': expected a number between 0 and 1, got %q.", param, v))
		}
		r.predictability, r.hasPredict = f, true
	}
	if v, param, ok := get(ExtFault); ok {
		f, known := faultNames[strings.TrimSpace(v)]
		if !known {
			return badRequest(param, "invalid_value", fmt.Sprintf("Invalid '%s': %q; supported values are none, error_500, rate_limit, midstream_error, drop.", param, v))
		}
		r.fault, r.hasFault = f, true
	}
	return nil
}

// predictabilityOf returns the request's predictability: the extension, else
// an "[easy]" (0.9) or "[hard]" (0.1) tag in the prompt, else the profile's.
func predictabilityOf(r *genRequest, p Profile) float64 {
	switch {
	case r.hasPredict:
		return r.predictability
	case strings.Contains(r.prompt, "[easy]"):
		return 0.9
	case strings.Contains(r.prompt, "[hard]"):
		return 0.1
	case p.Predictability > 0:
		return p.Predictability
	}
	return DefaultPredictability
}

// estimatePromptTokens approximates the prompt's token count: 4 bytes per
// token plus OpenAI's chat overhead of 3 tokens per message and 3 for the
// reply. Config.PromptTokens replaces it with an exact count.
func estimatePromptTokens(r *genRequest) int {
	return (len(r.prompt)+3)/4 + 3*r.promptTexts + 3
}
