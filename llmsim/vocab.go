package llmsim

import (
	"math/rand/v2"
	"strings"
)

// The vocabulary: every item below is exactly one token under both
// cl100k_base and o200k_base, and consecutive items never merge in either
// encoding's pre-tokenizer (each item is one pre-token piece: a word with its
// leading space, or one punctuation mark). So the token count of generated
// text is the number of items in it. vocab_test.go proves both claims with
// tiktoken as the oracle, on every item and on long generated texts.

// Sentence starters at the very beginning of a text (no leading space).
var startBare = []string{"The", "A", "This", "That", "Every", "Each", "Some", "Our", "Their", "One"}

// Sentence starters after a full stop.
var startSpaced = []string{" The", " A", " This", " That", " Every", " Each", " Some", " Our", " Their", " One"}

// Conjunctions that may open a two-clause sentence (bare and spaced forms).
var conjBare = []string{"When", "After", "Before", "While", "If", "Because"}
var conjSpaced = []string{" When", " After", " Before", " While", " If", " Because"}

var determiners = []string{" the", " a", " every", " each", " this", " that", " our", " their", " its", " one", " some"}

var adjectives = []string{
	" quiet", " calm", " bright", " dark", " warm", " cold", " soft", " hard", " slow", " fast",
	" early", " late", " small", " large", " long", " short", " old", " new", " young", " deep",
	" high", " low", " green", " blue", " red", " white", " black", " gray", " golden", " silver",
	" clear", " simple", " gentle", " strong", " quick", " steady", " careful", " patient", " happy", " sad",
	" kind", " wise", " brave", " ancient", " modern", " whole", " certain", " possible", " important", " public",
	" local", " natural", " general", " special", " common", " real", " free", " full", " main", " major",
	" human", " social", " final", " good", " great", " little", " big", " best", " better", " last",
	" next", " first", " second", " third", " different", " same", " other",
}

var nouns = []string{
	" river", " lake", " stone", " tree", " forest", " mountain", " valley", " road", " city", " town",
	" house", " garden", " window", " door", " light", " night", " day", " morning", " evening", " sun",
	" moon", " star", " sky", " cloud", " rain", " snow", " wind", " storm", " fire", " water",
	" sea", " ocean", " wave", " shore", " island", " bridge", " field", " grass", " flower", " leaf",
	" branch", " root", " seed", " bird", " fish", " horse", " dog", " cat", " wolf", " bear",
	" deer", " fox", " time", " year", " week", " hour", " minute", " moment", " world", " person",
	" friend", " family", " child", " mother", " father", " teacher", " student", " story", " book", " letter",
	" word", " page", " line", " question", " idea", " reason", " place", " point", " part", " side",
	" way", " path", " journey", " step", " game", " team", " group", " system", " model", " number",
	" result", " problem", " process", " method", " test", " value", " level", " area", " form", " state",
	" power", " energy", " space", " future", " history", " music", " art", " voice", " picture", " color",
	" sound", " table", " chair", " glass", " paper", " wall", " floor", " roof", " street", " corner",
	" market", " school", " office", " church", " village", " farm", " harbor", " boat", " ship", " train",
	" car", " wheel", " engine", " machine", " tool", " key", " lamp", " clock", " bell", " coin",
	" ring", " silence", " shadow", " echo", " memory", " promise", " secret", " truth", " song", " poem",
	" dance", " smile", " laugh", " breath", " heart", " mind", " soul", " body", " hand", " face",
	" eye", " summer", " winter", " spring", " autumn",
}

var modals = []string{" will", " can", " must", " should", " may", " might", " could", " would"}

var verbs = []string{
	" walk", " run", " move", " turn", " stay", " leave", " come", " go", " make", " take",
	" give", " find", " keep", " hold", " bring", " carry", " open", " close", " start", " stop",
	" begin", " end", " build", " write", " read", " speak", " listen", " watch", " wait", " learn",
	" teach", " follow", " lead", " help", " show", " tell", " ask", " answer", " think", " know",
	" feel", " see", " hear", " call", " send", " share", " grow", " change", " rise", " fall",
	" stand", " sit", " sleep", " dream", " hope", " plan", " try", " work", " play", " live",
}

var adverbs = []string{
	" quietly", " slowly", " softly", " gently", " carefully", " suddenly", " finally", " nearly", " simply", " clearly",
	" always", " never", " often", " soon", " now", " here", " there", " together", " again", " still",
}

var prepositions = []string{
	" in", " on", " at", " by", " for", " with", " from", " into", " over", " under",
	" about", " across", " through", " between", " around", " without", " within", " along", " behind", " beyond",
	" near", " toward", " upon", " against",
}

// Tool-call arguments are one JSON object with one string field:
// {"query":"river quiet lake"} = `{"` `query` `":"` `river` ` quiet` ` lake` `"}`.
const (
	argsOpen  = `{"`
	argsKey   = `query`
	argsColon = `":"`
	argsClose = `"}`
)

// argsFirstWords are the bare (no leading space) words that may open the value.
var argsFirstWords = []string{
	"river", "lake", "stone", "tree", "forest", "road", "city", "town", "house", "window",
	"door", "light", "night", "day", "sun", "moon", "star", "sky", "cloud", "rain",
	"snow", "wind", "storm", "fire", "water", "sea", "wave", "bridge", "field",
}

// word kinds of a sentence pattern
type wordKind uint8

const (
	kStart wordKind = iota // capitalised determiner
	kConj                  // capitalised conjunction
	kDet
	kAdj
	kNoun
	kModal
	kVerb
	kAdv
	kPrep
	kComma
	kStop
)

var sentencePatterns = [][]wordKind{
	{kStart, kAdj, kNoun, kModal, kVerb, kPrep, kDet, kAdj, kNoun, kStop},
	{kStart, kNoun, kModal, kAdv, kVerb, kDet, kNoun, kStop},
	{kConj, kDet, kAdj, kNoun, kModal, kVerb, kComma, kDet, kNoun, kModal, kVerb, kAdv, kStop},
	{kStart, kAdj, kNoun, kModal, kVerb, kDet, kAdj, kNoun, kPrep, kDet, kNoun, kStop},
	{kStart, kNoun, kModal, kVerb, kComma, kAdv, kPrep, kDet, kAdj, kNoun, kStop},
}

// textGen produces vocabulary items, one token each, forming simple English
// sentences. The zero value is not usable; see newTextGen.
type textGen struct {
	rng     *rand.Rand
	pattern []wordKind
	pos     int
	started bool
}

func newTextGen(rng *rand.Rand) *textGen { return &textGen{rng: rng} }

func (g *textGen) pick(list []string) string { return list[g.rng.IntN(len(list))] }

// next returns the next item (exactly one token).
func (g *textGen) next() string {
	if g.pos >= len(g.pattern) {
		g.pattern = sentencePatterns[g.rng.IntN(len(sentencePatterns))]
		g.pos = 0
	}
	k := g.pattern[g.pos]
	g.pos++
	first := !g.started
	g.started = true
	switch k {
	case kStart:
		if first {
			return g.pick(startBare)
		}
		return g.pick(startSpaced)
	case kConj:
		if first {
			return g.pick(conjBare)
		}
		return g.pick(conjSpaced)
	case kDet:
		return g.pick(determiners)
	case kAdj:
		return g.pick(adjectives)
	case kNoun:
		return g.pick(nouns)
	case kModal:
		return g.pick(modals)
	case kVerb:
		return g.pick(verbs)
	case kAdv:
		return g.pick(adverbs)
	case kPrep:
		return g.pick(prepositions)
	case kComma:
		return ","
	default:
		return "."
	}
}

// appendItems appends n items to dst.
func (g *textGen) appendItems(dst []string, n int) []string {
	for i := 0; i < n; i++ {
		dst = append(dst, g.next())
	}
	return dst
}

// appendToolArgs appends the items of one tool call's arguments, n tokens in
// all (n >= 5 gives complete JSON; callers truncate for a length cut).
func (g *textGen) appendToolArgs(dst []string, n int) []string {
	n = max(n, 5)
	dst = append(dst, argsOpen, argsKey, argsColon, g.pick(argsFirstWords))
	for i := 0; i < n-5; i++ {
		if g.rng.IntN(2) == 0 {
			dst = append(dst, g.pick(adjectives))
		} else {
			dst = append(dst, g.pick(nouns))
		}
	}
	return append(dst, argsClose)
}

// Text returns n tokens of the simulator's deterministic text for seed, the
// same text the server would generate with that seed. Its token count under
// cl100k_base and o200k_base is exactly n.
func Text(seed uint64, n int) string {
	g := newTextGen(rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)))
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString(g.next())
	}
	return b.String()
}
