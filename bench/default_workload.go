package bench

import "github.com/tpsmeter/tpsmeter/stats"

// DefaultMix is the name of the built-in workload.
const DefaultMix = "default mix (20% short, 60% medium, 20% long; half easy, half hard)"

// DefaultWorkload returns the built-in request mix: 20% short, 60% medium
// and 20% long answers (stats.DefaultLengthBuckets), each half "easy"
// (predictable text: counting, reciting, reformatting, which speculative
// decoding accelerates) and half "hard" (original prose). The prompts are
// real questions with max_tokens caps that keep a real model's answers in
// their bucket; for simulated targets (Target.Hints) each also carries an
// intended length: 30-90 tokens (short), 110-220 (medium), 505-545 (long),
// kept small so that the default run finishes quickly.
//
// Every call returns a fresh copy that the caller may modify.
func DefaultWorkload() Workload {
	const (
		short, medium, long = 0.20 / 4, 0.60 / 4, 0.20 / 4
	)
	ps := []Prompt{
		{ID: "short-easy-count", Class: "easy", Bucket: "short", Weight: short, MaxTokens: 96, OutputTokens: 30, OutputTokensMax: 90,
			Prompt: "Count from 1 to 30, separated by commas. Output only the numbers."},
		{ID: "short-easy-days", Class: "easy", Bucket: "short", Weight: short, MaxTokens: 96, OutputTokens: 30, OutputTokensMax: 90,
			Prompt: "List the days of the week and the months of the year, one per line, nothing else."},
		{ID: "short-hard-name", Class: "hard", Bucket: "short", Weight: short, MaxTokens: 96, OutputTokens: 30, OutputTokensMax: 90,
			Prompt: "Invent an unusual name for a lighthouse keeper's cat and explain it in two sentences."},
		{ID: "short-hard-riddle", Class: "hard", Bucket: "short", Weight: short, MaxTokens: 96, OutputTokens: 30, OutputTokensMax: 90,
			Prompt: "Write an original riddle about time zones, with its answer, in at most three sentences."},

		{ID: "medium-easy-alphabet", Class: "easy", Bucket: "medium", Weight: medium, MaxTokens: 480, OutputTokens: 110, OutputTokensMax: 220,
			Prompt: "For each letter of the English alphabet, write one line: the letter, a dash, and a common fruit or vegetable starting with it."},
		{ID: "medium-easy-table", Class: "easy", Bucket: "medium", Weight: medium, MaxTokens: 480, OutputTokens: 110, OutputTokensMax: 220,
			Prompt: "Write the multiplication table of 7 from 7 x 1 to 7 x 25, one equation per line, in the form '7 x 3 = 21'."},
		{ID: "medium-hard-letter", Class: "hard", Bucket: "medium", Weight: medium, MaxTokens: 480, OutputTokens: 110, OutputTokensMax: 220,
			Prompt: "Write a short, heartfelt letter from a retired tugboat to the harbour it worked in for forty years. About 150 words."},
		{ID: "medium-hard-explain", Class: "hard", Bucket: "medium", Weight: medium, MaxTokens: 480, OutputTokens: 110, OutputTokensMax: 220,
			Prompt: "Explain to a curious twelve-year-old why the sky is dark at night even though there are billions of stars. Use an everyday analogy. About 150 words."},

		{ID: "long-easy-json", Class: "easy", Bucket: "long", Weight: long, MaxTokens: 1000, OutputTokens: 505, OutputTokensMax: 545,
			Prompt: "Output a JSON array of 40 objects with the fields id (1 to 40), square (id squared) and even (true or false). No prose, only the JSON."},
		{ID: "long-easy-states", Class: "easy", Bucket: "long", Weight: long, MaxTokens: 1000, OutputTokens: 505, OutputTokensMax: 545,
			Prompt: "List all 50 US states in alphabetical order, one per line, each followed by a colon and its capital city."},
		{ID: "long-hard-story", Class: "hard", Bucket: "long", Weight: long, MaxTokens: 1000, OutputTokens: 505, OutputTokensMax: 545,
			Prompt: "Write an original short story of about 500 words in which a cartographer discovers that one of her maps is changing by itself."},
		{ID: "long-hard-essay", Class: "hard", Bucket: "long", Weight: long, MaxTokens: 1000, OutputTokens: 505, OutputTokensMax: 545,
			Prompt: "Write a balanced essay of about 500 words on whether cities should ban cars from their historic centres, with arguments on both sides and a conclusion."},
	}
	return Workload{Name: DefaultMix, Prompts: ps, Buckets: stats.DefaultLengthBuckets()}
}
