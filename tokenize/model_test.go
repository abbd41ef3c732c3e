package tokenize_test

import (
	"testing"

	"github.com/tpsmeter/tpsmeter/tokenize"
)

func TestEncodingForModel(t *testing.T) {
	tests := []struct {
		model    string
		encoding string
		exact    bool
	}{
		{"gpt-3.5-turbo", "cl100k_base", true},
		{"gpt-3.5-turbo-0125", "cl100k_base", true},
		{"gpt-3.5-turbo-instruct", "cl100k_base", true},
		{"gpt-35-turbo", "cl100k_base", true},
		{"gpt-4", "cl100k_base", true},
		{"gpt-4-0613", "cl100k_base", true},
		{"gpt-4-32k", "cl100k_base", true},
		{"gpt-4-turbo", "cl100k_base", true},
		{"gpt-4-turbo-2024-04-09", "cl100k_base", true},
		{"text-embedding-3-small", "cl100k_base", true},
		{"text-embedding-ada-002", "cl100k_base", true},
		{"gpt-4o", "o200k_base", true},
		{"gpt-4o-2024-08-06", "o200k_base", true},
		{"gpt-4o-mini-2024-07-18", "o200k_base", true},
		{"GPT-4o-Mini", "o200k_base", true},
		{" gpt-4o ", "o200k_base", true},
		{"chatgpt-4o-latest", "o200k_base", true},
		{"gpt-4.1", "o200k_base", true},
		{"gpt-4.1-nano-2025-04-14", "o200k_base", true},
		{"gpt-4.5-preview", "o200k_base", true},
		{"o1", "o200k_base", true},
		{"o1-mini", "o200k_base", true},
		{"o1-2024-12-17", "o200k_base", true},
		{"o3", "o200k_base", true},
		{"o3-mini-2025-01-31", "o200k_base", true},
		{"o4-mini", "o200k_base", true},
		{"gpt-5", "o200k_base", true},
		{"gpt-5-nano-2025-08-07", "o200k_base", true},
		{"gpt-5.1", "o200k_base", true},
		{"gpt-5-chat-latest", "o200k_base", true},
		{"ft:gpt-4o-mini-2024-07-18:acme::abc123", "o200k_base", true},
		{"ft:gpt-3.5-turbo-0613:acme::abc123", "cl100k_base", true},
		{"ft:davinci-002:acme::abc123", "cl100k_base", true},
		{"openai/o3", "o200k_base", true},
		{"openai/gpt-oss-120b", "o200k_harmony", true},
		{"gpt-oss-20b", "o200k_harmony", true},
		{"text-davinci-003", "p50k_base", true},
		{"code-davinci-002", "p50k_base", true},
		{"text-davinci-edit-001", "p50k_base", true},
		{"text-davinci-001", "r50k_base", true},
		{"davinci", "r50k_base", true},
		{"davinci:ft-acme-2023-01-01", "r50k_base", true},
		{"gpt2", "r50k_base", true},
		// Not OpenAI tokenizers: an estimate with o200k_base.
		{"", "o200k_base", false},
		{"llama-3.3-70b-versatile", "o200k_base", false},
		{"meta-llama/Llama-3.3-70B-Instruct-Turbo", "o200k_base", false},
		{"qwen3-max", "o200k_base", false},
		{"claude-sonnet-4-5", "o200k_base", false},
		{"mistral-small-latest", "o200k_base", false},
		{"deepseek-chat", "o200k_base", false},
		{"my-azure-deployment", "o200k_base", false},
		{"gpt-4.7", "o200k_base", false},
		{"o10", "o200k_base", false},
		{"gpt-4omni", "o200k_base", false},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			enc, exact := tokenize.EncodingForModel(tt.model)
			if enc != tt.encoding || exact != tt.exact {
				t.Fatalf("EncodingForModel(%q) = %q, %v; want %q, %v", tt.model, enc, exact, tt.encoding, tt.exact)
			}
			if _, err := tokenize.NewCounter(enc); err != nil {
				t.Fatalf("NewCounter(%q): %v", enc, err)
			}
		})
	}
}
