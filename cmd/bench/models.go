package main

import (
	"fmt"
	"sync"
	"time"

	"github.com/mcpbench/bench/fakecentral"
	"github.com/mcpbench/bench/llm"
	"github.com/mcpbench/bench/llm/anthropic"
	"github.com/mcpbench/bench/llm/baseline"
	"github.com/mcpbench/bench/llm/openai"
	"github.com/mcpbench/bench/recorder"
	"github.com/mcpbench/bench/scenarios"
)

// defaultRequestTimeout bounds each HTTP request to a live model's
// provider (--request-timeout): long enough for a small local model on 2
// CPU cores, which takes up to about 3 minutes for a cold first turn of
// some 3,500 prompt tokens, and short of the run's 15 minutes, so that a
// provider that hangs costs one attempt, not the run.
const defaultRequestTimeout = 5 * time.Minute

// modelFactory returns a constructor of the model for each scenario, and
// the secrets that must never reach a trace. A live model whose key is not
// set is a setup failure naming the variable, unless its base URL is set
// (a local server may need no key). Each request a live model sends is
// bounded by requestTimeout, and retried past it.
func modelFactory(a *app, spec llm.Spec, profile *recorder.Profile, requestTimeout time.Duration) (func(*scenarios.Scenario) (llm.Model, error), []string, error) {
	retry := llm.RetryPolicy{AttemptTimeout: requestTimeout, Sleep: a.retrySleep}
	switch spec.Provider {
	case llm.ProviderOpenAI:
		key := a.getenv("OPENAI_API_KEY")
		if key == "" && a.getenv("OPENAI_BASE_URL") == "" {
			return nil, nil, setupErr(fmt.Errorf("OPENAI_API_KEY is not set: %s needs it (a local OpenAI-compatible server that needs no key is named by OPENAI_BASE_URL)", spec))
		}
		m, err := openai.New(spec.Model, &openai.Options{APIKey: key, BaseURL: a.getenv("OPENAI_BASE_URL"), Retry: retry})
		if err != nil {
			return nil, nil, usageErr(err)
		}
		return func(*scenarios.Scenario) (llm.Model, error) { return m, nil }, []string{key}, nil
	case llm.ProviderAnthropic:
		key := a.getenv("ANTHROPIC_API_KEY")
		if key == "" {
			key = a.getenv("ANTHROPIC_AUTH_TOKEN")
		}
		if key == "" && a.getenv("ANTHROPIC_BASE_URL") == "" {
			return nil, nil, setupErr(fmt.Errorf("ANTHROPIC_API_KEY is not set (nor ANTHROPIC_AUTH_TOKEN): %s needs it", spec))
		}
		m, err := anthropic.New(spec.Model, &anthropic.Options{APIKey: key, BaseURL: a.getenv("ANTHROPIC_BASE_URL"), Retry: retry})
		if err != nil {
			return nil, nil, usageErr(err)
		}
		return func(*scenarios.Scenario) (llm.Model, error) { return m, nil }, []string{key}, nil
	case llm.ProviderBaseline:
		// The model's clock is the fixture's; each fixture is loaded once.
		var mu sync.Mutex
		clocks := map[string]func() time.Time{}
		cache := baseline.NewCache() // the runs' models share what they derive from tool definitions
		return func(sc *scenarios.Scenario) (llm.Model, error) {
			mu.Lock()
			defer mu.Unlock()
			now, ok := clocks[sc.Fixture]
			if !ok {
				fx, err := fakecentral.LoadFixture(sc.Fixture)
				if err != nil {
					return nil, err
				}
				now = fx.Now
				clocks[sc.Fixture] = now
			}
			return baseline.New(&baseline.Options{Now: now, Cache: cache}), nil
		}, nil, nil
	default:
		readOnly, err := innerReadOnly(profile)
		if err != nil {
			return nil, nil, setupErr(err)
		}
		return func(sc *scenarios.Scenario) (llm.Model, error) { return oracleFor(sc, profile, readOnly) }, nil, nil
	}
}

// oracleFor builds the oracle from the scenario's reference plan on the
// profile's server, through the profile's routes.
func oracleFor(sc *scenarios.Scenario, profile *recorder.Profile, readOnly func(string) bool) (llm.Model, error) {
	plan, result, err := recorder.OraclePlan(sc, sc.ExpectedName(profile.Name, profile.VariantOf), profile.Adapter.Routes, readOnly)
	if err != nil {
		return nil, err
	}
	return llm.NewOracle(plan, result)
}

// innerReadOnly reads the profile's inner_tools list, if it names one: which
// inner tools are annotated read-only, for the routes that take only those.
func innerReadOnly(p *recorder.Profile) (func(string) bool, error) {
	path := p.InnerToolsPath()
	if path == "" {
		return nil, nil
	}
	lists, err := scenarios.LoadToolLists(path)
	if err != nil {
		return nil, fmt.Errorf("%s: inner_tools: %w", p.File, err)
	}
	ro := map[string]bool{}
	for _, l := range lists {
		for i := range l.Tools {
			if l.Tools[i].ReadOnly() {
				ro[l.Tools[i].Name] = true
			}
		}
	}
	return func(tool string) bool { return ro[tool] }, nil
}
