package tokenize_test

import (
	"fmt"
	"strings"

	"github.com/tpsmeter/tpsmeter/tokenize"
)

func ExampleCounter() {
	enc, exact := tokenize.EncodingForModel("gpt-4o-mini-2024-07-18")
	c, err := tokenize.NewCounter(enc)
	if err != nil {
		panic(err)
	}
	// Chunks as a stream delivers them: " tokenization" is two tokens in
	// two chunks, credited once the word is complete, and the "é" of
	// " café" (one token) arrives split in two bytes.
	for _, chunk := range []string{"An", " token", "ization", " caf", "\xc3", "\xa9", "!"} {
		fmt.Printf("%q credited %d\n", chunk, c.Add(chunk))
	}
	fmt.Println("flush:", c.Flush())
	fmt.Println("count:", c.Count(), enc, "exact:", exact)
	// Output:
	// "An" credited 1
	// " token" credited 1
	// "ization" credited 0
	// " caf" credited 2
	// "\xc3" credited 0
	// "\xa9" credited 0
	// "!" credited 1
	// flush: 0
	// count: 5 o200k_base exact: true
}

func ExampleEncodingForModel() {
	for _, model := range []string{"gpt-4o-mini-2024-07-18", "gpt-4-turbo", "o3-mini", "openai/gpt-oss-120b", "llama-3.3-70b-versatile"} {
		enc, exact := tokenize.EncodingForModel(model)
		fmt.Println(model, enc, exact)
	}
	// Output:
	// gpt-4o-mini-2024-07-18 o200k_base true
	// gpt-4-turbo cl100k_base true
	// o3-mini o200k_base true
	// openai/gpt-oss-120b o200k_harmony true
	// llama-3.3-70b-versatile o200k_base false
}

func ExampleNewEstimator() {
	e := tokenize.NewEstimator(0) // DefaultCharsPerToken
	for _, chunk := range []string{"Hello", ", world", "! How are you?"} {
		fmt.Print(e.Add(chunk), " ")
	}
	fmt.Println("=", e.Count())
	// Output: 2 1 4 = 7
}

func ExampleFromFunc() {
	// Any one-shot tokenizer can be plugged in; a word counter stands in
	// for one here.
	words := func(text string) int { return len(strings.Fields(text)) }
	sc := tokenize.FromFunc(words)
	for _, chunk := range []string{"one two", " three\nfour", " five"} {
		sc.Add(chunk)
	}
	fmt.Println(sc.Count())
	// Output: 5
}
