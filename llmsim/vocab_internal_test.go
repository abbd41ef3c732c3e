package llmsim

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// Every vocabulary item must be exactly one token in both encodings.
func TestVocabularyItemsAreSingleTokens(t *testing.T) {
	lists := map[string][]string{
		"startBare": startBare, "startSpaced": startSpaced, "conjBare": conjBare, "conjSpaced": conjSpaced,
		"determiners": determiners, "adjectives": adjectives, "nouns": nouns, "modals": modals,
		"verbs": verbs, "adverbs": adverbs, "prepositions": prepositions, "argsFirstWords": argsFirstWords,
		"punctuation": {".", ",", argsOpen, argsKey, argsColon, argsClose},
	}
	for name, enc := range encodings(t) {
		for list, items := range lists {
			t.Run(name+"/"+list, func(t *testing.T) {
				seen := map[string]bool{}
				for _, it := range items {
					if seen[it] {
						t.Errorf("duplicate item %q", it)
					}
					seen[it] = true
					if got := len(enc.Encode(it, nil, nil)); got != 1 {
						t.Errorf("%q is %d tokens, want 1", it, got)
					}
				}
			})
		}
	}
}

// Concatenated items never merge or split: long generated texts, sentences
// and tool-call arguments have exactly one token per item.
func TestGeneratedTextTokenCountIsExact(t *testing.T) {
	for name, enc := range encodings(t) {
		for seed := uint64(0); seed < 6; seed++ {
			t.Run(name, func(t *testing.T) {
				g := newTextGen(rand.New(rand.NewPCG(seed, 7)))
				items := g.appendItems(nil, 3000)
				if got := len(enc.Encode(strings.Join(items, ""), nil, nil)); got != len(items) {
					t.Fatalf("seed %d: text of %d items is %d tokens", seed, len(items), got)
				}
				for _, n := range []int{5, 6, 9, 40} {
					args := g.appendToolArgs(nil, n)
					if len(args) != n {
						t.Fatalf("appendToolArgs(%d) gave %d items", n, len(args))
					}
					s := strings.Join(args, "")
					if got := len(enc.Encode(s, nil, nil)); got != n {
						t.Fatalf("arguments %s are %d tokens, want %d", s, got, n)
					}
				}
			})
		}
	}
}
