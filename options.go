package tpsmeter

import (
	"github.com/tpsmeter/tpsmeter/perceive"
	"github.com/tpsmeter/tpsmeter/stats"
	"github.com/tpsmeter/tpsmeter/tokenize"
)

// Option configures a Meter. Options are applied in order; a nil argument
// to an option is ignored and leaves the default in place.
type Option interface {
	apply(*config)
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// TokenizerFunc returns a fresh token counter for one output of a request
// to model, and the basis its counts have.
type TokenizerFunc func(model string) (tokenize.StreamCounter, Basis)

type config struct {
	clock        Clock
	hooks        hookSet
	tokenizer    TokenizerFunc
	encoding     string
	buckets      stats.LengthBuckets
	maxGroups    int
	perceive     perceive.Config
	classifier   ErrorClassifier
	panicHandler func(any)
	noAggregates bool
}

func defaultConfig() config {
	return config{
		clock:     systemClock{},
		buckets:   stats.DefaultLengthBuckets(),
		maxGroups: 64,
		perceive:  perceive.DefaultConfig(),
	}
}

// WithClock sets the clock (default: the system's monotonic clock).
func WithClock(c Clock) Option {
	return optionFunc(func(cfg *config) {
		if c != nil {
			cfg.clock = c
		}
	})
}

// WithHooks adds callbacks. It may be given several times; all are called.
func WithHooks(h Hooks) Option {
	return optionFunc(func(cfg *config) { cfg.hooks.add(h) })
}

// WithEncoding makes the meter count every request's tokens with the named
// tiktoken encoding (see tokenize.Encodings) and call the count exact, for
// servers whose models use it but whose names the meter does not know. By
// default the encoding follows the model name (tokenize.EncodingForModel).
// An unknown name is ignored at New and reported by the returned error of
// Meter.Err.
func WithEncoding(name string) Option {
	return optionFunc(func(cfg *config) { cfg.encoding = name })
}

// WithTokenizer plugs in another tokenizer (for example a Hugging Face one
// adapted with tokenize.FromFunc). It takes precedence over WithEncoding.
func WithTokenizer(f TokenizerFunc) Option {
	return optionFunc(func(cfg *config) {
		if f != nil {
			cfg.tokenizer = f
		}
	})
}

// WithLengthBuckets sets the output-length buckets used to group aggregates
// (default stats.DefaultLengthBuckets: short < 100, medium 100-499, long >= 500).
func WithLengthBuckets(b stats.LengthBuckets) Option {
	return optionFunc(func(cfg *config) {
		if len(b.Names) > 0 {
			cfg.buckets = b
		}
	})
}

// WithMaxGroups caps the number of distinct aggregate groups (model x
// provider x bucket x class); further groups fold into one "other" group.
// Default 64; n <= 0 keeps the default.
func WithMaxGroups(n int) Option {
	return optionFunc(func(cfg *config) {
		if n > 0 {
			cfg.maxGroups = n
		}
	})
}

// WithPerceived sets the perceived-responsiveness model's thresholds (stall
// threshold, renderer, reading speed). Zero fields keep their defaults.
func WithPerceived(c perceive.Config) Option {
	return optionFunc(func(cfg *config) { cfg.perceive = c })
}

// WithErrorClassifier adds a classifier consulted before the built-in rules
// to name errors in Result.ErrorType. Keep its answers to a small set. A
// panic in f is recovered and counted like a hook's (Meter.HookPanics), and
// the built-in rules then name the error.
func WithErrorClassifier(f ErrorClassifier) Option {
	return optionFunc(func(cfg *config) {
		if f != nil {
			prev := cfg.classifier
			if prev == nil {
				cfg.classifier = f
				return
			}
			cfg.classifier = func(err error) string {
				if s := f(err); s != "" {
					return s
				}
				return prev(err)
			}
		}
	})
}

// WithPanicHandler sets a function that receives the value of a panic
// recovered from a Hooks callback (default: the panic is only counted).
func WithPanicHandler(f func(any)) Option {
	return optionFunc(func(cfg *config) { cfg.panicHandler = f })
}

// WithoutAggregates turns off the meter's in-process aggregates (for
// applications that only use callbacks or telemetry); Snapshot is then empty.
func WithoutAggregates() Option {
	return optionFunc(func(cfg *config) { cfg.noAggregates = true })
}
