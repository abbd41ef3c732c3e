package llmsim

import "strings"

// Encoding names the simulator knows. Its vocabulary is valid in both, so the
// choice never changes a count; it is reported for clients that tokenize.
const (
	EncodingCL100k = "cl100k_base"
	EncodingO200k  = "o200k_base"
)

// EncodingForModel returns the tiktoken encoding that applies to model:
// cl100k_base for gpt-3.5*, gpt-35* (Azure spelling), gpt-4 and gpt-4-turbo
// (and their dated snapshots), o200k_base for everything else (gpt-4o, gpt-4.1,
// o-series, gpt-5, unknown names). It is safe for concurrent use.
func EncodingForModel(model string) string {
	m := strings.ToLower(model)
	if i := strings.LastIndexByte(m, '/'); i >= 0 { // "openai/gpt-4"
		m = m[i+1:]
	}
	switch {
	case strings.HasPrefix(m, "gpt-3.5"), strings.HasPrefix(m, "gpt-35"):
		return EncodingCL100k
	case m == "gpt-4", strings.HasPrefix(m, "gpt-4-"):
		// gpt-4-0613, gpt-4-32k, gpt-4-turbo, gpt-4-turbo-2024-04-09, gpt-4-1106-preview
		return EncodingCL100k
	}
	return EncodingO200k
}
