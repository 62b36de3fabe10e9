package main

import (
	"fmt"
	"strings"

	"github.com/mcpbench/bench/recorder"
	"github.com/mcpbench/bench/scenarios"
)

// loadProfile loads a server profile, expands its environment from the
// user's and adds the --server-env KEY=VALUE pairs.
func loadProfile(a *app, path string, serverEnv, passEnv []string) (*recorder.Profile, error) {
	p, err := recorder.LoadProfile(path)
	if err != nil {
		return nil, usageErr(err)
	}
	if err := p.ExpandEnv(a.getenv, passEnv); err != nil {
		return nil, usageErr(err)
	}
	for _, kv := range serverEnv {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, usageErr(fmt.Errorf("--server-env %q: want KEY=VALUE", kv))
		}
		if p.Env == nil {
			p.Env = map[string]string{}
		}
		p.Env[k] = v
	}
	noteClock(a, p)
	return p, nil
}

// selectScenarios loads the scenarios (the built-in suite when paths is
// empty) and the stages config when a stage is named, and returns the
// scenarios sel names, with the config.
func selectScenarios(paths []string, config string, sel scenarios.Selection) ([]*scenarios.Scenario, error) {
	list, _, err := selectWithConfig(paths, config, sel)
	return list, err
}

func selectWithConfig(paths []string, config string, sel scenarios.Selection) ([]*scenarios.Scenario, *scenarios.Config, error) {
	all, errs := loadScenarios(paths)
	if len(errs) > 0 {
		return nil, nil, usageErr(fmt.Errorf("loading scenarios: %w", errs))
	}
	var cfg *scenarios.Config
	if sel.Stage != "" {
		var err error
		if cfg, err = loadConfig(config); err != nil {
			return nil, nil, usageErr(err)
		}
	}
	list, err := cfg.Select(all, sel)
	if err != nil {
		return nil, nil, usageErr(err)
	}
	return list, cfg, nil
}
