package llm

import (
	"fmt"
	"strings"
)

// Provider names a family of models in a [Spec].
type Provider string

// The providers.
const (
	ProviderOpenAI    Provider = "openai"
	ProviderAnthropic Provider = "anthropic"
	ProviderBaseline  Provider = "baseline"
	ProviderOracle    Provider = "oracle"
)

// Spec is a parsed model spec, as written on the command line.
type Spec struct {
	Provider Provider
	Model    string // empty for baseline and oracle
}

// String returns the spec as ParseSpec accepts it.
func (s Spec) String() string {
	if s.Model == "" {
		return string(s.Provider)
	}
	return string(s.Provider) + ":" + s.Model
}

// Live reports whether the spec names a model behind a network API.
func (s Spec) Live() bool {
	return s.Provider == ProviderOpenAI || s.Provider == ProviderAnthropic
}

const specForms = `"openai:MODEL", "anthropic:MODEL", "baseline" or "oracle"`

// ParseSpec parses "openai:MODEL", "anthropic:MODEL", "baseline" or
// "oracle". The model name is passed to the provider as is (it may contain
// colons and slashes, as in "openai:meta-llama/Llama-3.1-8B:free").
func ParseSpec(s string) (Spec, error) {
	if s == "" {
		return Spec{}, fmt.Errorf("empty model spec: want %s", specForms)
	}
	if strings.TrimSpace(s) != s || strings.ContainsAny(s, " \t\n") {
		return Spec{}, fmt.Errorf("model spec %q contains white space: want %s", s, specForms)
	}
	prov, model, hasColon := strings.Cut(s, ":")
	p := Provider(strings.ToLower(prov))
	switch p {
	case ProviderOpenAI, ProviderAnthropic:
		if !hasColon || model == "" {
			return Spec{}, fmt.Errorf("model spec %q: %s needs a model name, as in %s:MODEL", s, p, p)
		}
		return Spec{Provider: p, Model: model}, nil
	case ProviderBaseline, ProviderOracle:
		if hasColon {
			return Spec{}, fmt.Errorf("model spec %q: %s takes no model name; write %q", s, p, p)
		}
		return Spec{Provider: p}, nil
	}
	if !hasColon {
		return Spec{}, fmt.Errorf("unknown model spec %q: want %s", s, specForms)
	}
	return Spec{}, fmt.Errorf("model spec %q: unknown provider %q: want %s", s, prov, specForms)
}
