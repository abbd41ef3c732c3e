package bench

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/openai/openai-go/v3/option"
)

// API selects the OpenAI endpoint a target is driven through; the zero value
// means APIChat.
type API string

const (
	// APIChat is POST /chat/completions with stream=true (the default).
	APIChat API = "chat"
	// APIResponses is POST /responses with stream=true.
	APIResponses API = "responses"
)

// Max-tokens field names for Target.MaxTokensField.
const (
	// MaxCompletionTokens sends the cap as max_completion_tokens, which
	// OpenAI requires for its reasoning models (the default).
	MaxCompletionTokens = "max_completion_tokens"
	// MaxTokens sends the cap as max_tokens, for older OpenAI-compatible
	// servers that do not know max_completion_tokens.
	MaxTokens = "max_tokens"
)

// Target is one OpenAI-compatible endpoint and model to benchmark. Several
// targets in one run are measured side by side with the same workload.
// The zero value is not usable: BaseURL and Model are required. A Target is
// a plain value, read-only during a run.
type Target struct {
	// Name labels the target in every report; empty means the Model, made
	// unique by a numeric suffix when two targets share it.
	Name string `json:"name"`
	// BaseURL is the API base, e.g. "https://api.openai.com/v1".
	BaseURL string `json:"base_url"`
	// APIKey is sent as a bearer token; it never appears in results.
	APIKey string `json:"-"`
	// Model is the model name sent with every request.
	Model string `json:"model"`
	// API is APIChat (zero value) or APIResponses.
	API API `json:"api"`
	// MaxTokensField is the Chat Completions field that carries a prompt's
	// MaxTokens: MaxCompletionTokens (zero value) or MaxTokens. The
	// Responses API always uses max_output_tokens.
	MaxTokensField string `json:"max_tokens_field,omitempty"`
	// Encoding names the tiktoken encoding used to count the streamed
	// tokens (tpsmeter.WithEncoding); empty means the one the meter derives
	// from Model, an estimate for models it does not know.
	Encoding string `json:"encoding,omitempty"`
	// Hints sends the simulator's request extensions (X-Llmsim-Output-Tokens,
	// X-Llmsim-Predictability, see package llmsim) so that a simulated
	// server answers with each prompt's intended length and predictability.
	// Leave it false for real endpoints.
	Hints bool `json:"hints,omitempty"`
	// Simulated records that the target is an in-process simulator (set by
	// tools that start one); it changes nothing in the runner.
	Simulated string `json:"simulated,omitempty"`
	// Options are extra openai-go request options for every request of this
	// target (headers, an HTTP client, ...); they are applied after the
	// runner's own.
	Options []option.RequestOption `json:"-"`
}

// label is the target's display name.
func (t Target) label() string {
	if t.Name != "" {
		return t.Name
	}
	return t.Model
}

// validate checks one target.
func (t Target) validate() error {
	if t.BaseURL == "" {
		return fmt.Errorf("%w: target %q: no base URL", ErrConfig, t.label())
	}
	u, err := url.Parse(t.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%w: target %q: base URL %q is not an http(s) URL", ErrConfig, t.label(), t.BaseURL)
	}
	if t.Model == "" {
		return fmt.Errorf("%w: target %q: no model", ErrConfig, t.label())
	}
	switch t.API {
	case "", APIChat, APIResponses:
	default:
		return fmt.Errorf("%w: target %q: unknown API %q (want chat or responses)", ErrConfig, t.label(), t.API)
	}
	switch t.MaxTokensField {
	case "", MaxCompletionTokens, MaxTokens:
	default:
		return fmt.Errorf("%w: target %q: unknown max-tokens field %q", ErrConfig, t.label(), t.MaxTokensField)
	}
	return nil
}

// nameTargets fills in empty names and makes names unique.
func nameTargets(ts []Target) []Target {
	out := make([]Target, len(ts))
	seen := map[string]int{}
	for i, t := range ts {
		if t.API == "" {
			t.API = APIChat
		}
		if t.MaxTokensField == "" {
			t.MaxTokensField = MaxCompletionTokens
		}
		name := strings.TrimSpace(t.label())
		if n := seen[name]; n > 0 {
			t.Name = fmt.Sprintf("%s#%d", name, n+1)
		} else {
			t.Name = name
		}
		seen[name]++
		out[i] = t
	}
	return out
}
