package tokenize

import "strings"

// modelFamily maps model names to an encoding: a name matches if it equals
// prefix or continues it with one of seps.
type modelFamily struct {
	prefix   string
	seps     string
	encoding string
}

// modelFamilies is checked in order; longer, more specific prefixes first.
var modelFamilies = []modelFamily{
	{"gpt-oss", "-", "o200k_harmony"},
	{"gpt-4o", "-", "o200k_base"}, // gpt-4o-mini, gpt-4o-2024-08-06, gpt-4o-audio-preview, ...
	{"chatgpt-4o", "-", "o200k_base"},
	{"gpt-4.1", "-", "o200k_base"},
	{"gpt-4.5", "-", "o200k_base"},
	{"gpt-5", "-.", "o200k_base"}, // gpt-5-mini, gpt-5.1, gpt-5-chat-latest, ...
	{"o1", "-", "o200k_base"},
	{"o3", "-", "o200k_base"},
	{"o4", "-", "o200k_base"}, // o4-mini
	{"codex-mini", "-", "o200k_base"},
	{"gpt-4", "-", "cl100k_base"}, // gpt-4-turbo, gpt-4-0613, gpt-4-32k, ...
	{"gpt-3.5", "-", "cl100k_base"},
	{"gpt-35-turbo", "-", "cl100k_base"}, // Azure's name
	{"text-embedding-3", "-", "cl100k_base"},
	{"text-embedding-ada-002", "", "cl100k_base"},
	{"davinci-002", "", "cl100k_base"},
	{"babbage-002", "", "cl100k_base"},
	{"text-davinci-003", "", "p50k_base"},
	{"text-davinci-002", "", "p50k_base"},
	{"text-davinci-edit-001", "", "p50k_base"}, // p50k_edit: p50k_base ranks
	{"code-davinci-edit-001", "", "p50k_base"},
	{"code-davinci", "-", "p50k_base"},
	{"code-cushman", "-", "p50k_base"},
	{"davinci-codex", "", "p50k_base"},
	{"cushman-codex", "", "p50k_base"},
	{"text-davinci-001", "", "r50k_base"},
	{"text-curie-001", "", "r50k_base"},
	{"text-babbage-001", "", "r50k_base"},
	{"text-ada-001", "", "r50k_base"},
	{"text-similarity", "-", "r50k_base"},
	{"text-search", "-", "r50k_base"},
	{"code-search", "-", "r50k_base"},
	{"davinci", ":", "r50k_base"}, // and legacy fine-tunes, "davinci:ft-..."
	{"curie", ":", "r50k_base"},
	{"babbage", ":", "r50k_base"},
	{"ada", ":", "r50k_base"},
	{"gpt2", "", "r50k_base"}, // tiktoken's gpt2 encoding has the r50k_base ranks
	{"gpt-2", "", "r50k_base"},
}

// FallbackEncoding is what EncodingForModel returns, with exact == false, for
// a model it does not know.
const FallbackEncoding = "o200k_base"

// EncodingForModel returns the encoding of an OpenAI model, and exact ==
// true, for current names and their dated or suffixed variants:
// gpt-3.5*, gpt-4 and gpt-4-* (gpt-4-turbo, ...) use cl100k_base; gpt-4o*,
// chatgpt-4o*, gpt-4.1*, gpt-4.5*, gpt-5*, o1*, o3*, o4* use o200k_base;
// gpt-oss* uses o200k_harmony; legacy completion and embedding models map as
// tiktoken maps them. Matching ignores case and surrounding space, a
// fine-tune's "ft:" wrapper ("ft:gpt-4o-mini-2024-07-18:org::id") and a
// leading "openai/" (as routers such as OpenRouter or Groq name them).
//
// Any other model (Llama, Qwen, Claude, Mistral, an Azure deployment name,
// "") gets FallbackEncoding with exact == false: counts made with it are
// estimates of that model's tokens and must be reported as such.
func EncodingForModel(model string) (encoding string, exact bool) {
	m := strings.ToLower(strings.TrimSpace(model))
	m = strings.TrimPrefix(m, "openai/")
	if rest, ok := strings.CutPrefix(m, "ft:"); ok {
		m, _, _ = strings.Cut(rest, ":")
	}
	for _, f := range modelFamilies {
		rest, ok := strings.CutPrefix(m, f.prefix)
		if ok && (rest == "" || strings.IndexByte(f.seps, rest[0]) >= 0) {
			return f.encoding, true
		}
	}
	return FallbackEncoding, false
}
