package main

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/tpsmeter/tpsmeter/bench"
	"github.com/tpsmeter/tpsmeter/llmsim"
)

// targetSpec is a parsed -target flag.
type targetSpec struct {
	bench.Target
	keyEnv string
	// simulated targets
	sim       string
	cold      time.Duration
	coldAfter time.Duration
	hasCold   bool
}

// defaultBaseURL is used for real targets when neither url= nor
// $OPENAI_BASE_URL gives one.
const defaultBaseURL = "https://api.openai.com/v1"

// parseTarget reads one -target value: "sim:PRESET[,key=value...]", a bare
// URL, or a comma-separated key=value list with the keys name, url, model,
// api, key-env, encoding, max-tokens-field, sim, cold, cold-after.
func parseTarget(spec string) (targetSpec, error) {
	var t targetSpec
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return t, fmt.Errorf("empty -target")
	}
	parts := strings.Split(spec, ",")
	if p, ok := strings.CutPrefix(parts[0], "sim:"); ok {
		parts[0] = "sim=" + p
	} else if !strings.Contains(parts[0], "=") && (strings.HasPrefix(parts[0], "http://") || strings.HasPrefix(parts[0], "https://")) {
		parts[0] = "url=" + parts[0]
	}
	for _, kv := range parts {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			return t, fmt.Errorf("-target %q: %q is not key=value", spec, kv)
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch k {
		case "name":
			t.Name = v
		case "url":
			t.BaseURL = v
		case "model":
			t.Model = v
		case "api":
			t.API = bench.API(v)
		case "key-env":
			t.keyEnv = v
		case "encoding":
			t.Encoding = v
		case "max-tokens-field":
			t.MaxTokensField = v
		case "sim":
			if _, ok := llmsim.Preset(v); !ok {
				return t, fmt.Errorf("-target %q: unknown simulator preset %q (known: %s)", spec, v, strings.Join(llmsim.Presets(), ", "))
			}
			t.sim = v
		case "cold", "cold-after":
			d, err := time.ParseDuration(v)
			if err != nil || d < 0 {
				return t, fmt.Errorf("-target %q: %s=%q is not a duration", spec, k, v)
			}
			if k == "cold" {
				t.cold = d
			} else {
				t.coldAfter = d
			}
			t.hasCold = true
		default:
			return t, fmt.Errorf("-target %q: unknown key %q (known: name, url, model, api, key-env, encoding, max-tokens-field, sim, cold, cold-after)", spec, k)
		}
	}
	if t.sim != "" {
		if t.BaseURL != "" {
			return t, fmt.Errorf("-target %q: a simulated target takes no url", spec)
		}
		if t.Name == "" {
			t.Name = t.sim
		}
		if t.Model == "" {
			t.Model = simModel
		}
		return t, nil
	}
	if t.hasCold {
		return t, fmt.Errorf("-target %q: cold and cold-after apply to simulated targets only", spec)
	}
	if t.BaseURL == "" {
		t.BaseURL = os.Getenv("OPENAI_BASE_URL")
		if t.BaseURL == "" {
			t.BaseURL = defaultBaseURL
		}
	}
	if t.Model == "" {
		return t, fmt.Errorf("-target %q: model= is required for a real endpoint", spec)
	}
	if t.keyEnv == "" {
		t.keyEnv = "OPENAI_API_KEY"
	}
	return t, nil
}

// simModel is the model name sent to simulated targets: the meter counts
// its tokens exactly with o200k_base, the encoding llmsim's vocabulary is
// built for.
const simModel = "gpt-4o-mini"

// resolveKey reads the API key of a real target from its environment
// variable; warn receives a note when it is unset.
func (t *targetSpec) resolveKey(warn func(string)) {
	if t.sim != "" || t.keyEnv == "" {
		return
	}
	t.APIKey = os.Getenv(t.keyEnv)
	if t.APIKey == "" {
		warn(fmt.Sprintf("target %s: $%s is not set; sending no API key", t.Name, t.keyEnv))
	}
}

// simProfile returns the simulator profile of a simulated target.
func (t *targetSpec) simProfile() llmsim.Profile {
	p, _ := llmsim.Preset(t.sim)
	if t.hasCold {
		p.ColdStartPenalty, p.ColdStartAfter = t.cold, t.coldAfter
	}
	return p
}

// parseDurations reads "0s,30s,5m".
func parseDurations(s string) ([]time.Duration, error) {
	var out []time.Duration
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if f == "0" {
			out = append(out, 0)
			continue
		}
		d, err := time.ParseDuration(f)
		if err != nil || d < 0 {
			return nil, fmt.Errorf("%q is not a duration like 0s, 30s or 5m", f)
		}
		out = append(out, d)
	}
	return out, nil
}
