package main

import (
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/mcpbench/bench/internal/escape"
	"github.com/mcpbench/bench/recorder"
)

// serverEnvHelp is the paragraph of record's, replay's and servers check's
// help on the server's environment (docs/adapters.md says the same;
// serverenv_test.go checks that both name every base variable).
const serverEnvHelp = `The server's environment is an allowlist: the profile's env (and
writes_env when a scenario writes), the fake Central's variables (proxies, CA
bundles, FAKECENTRAL_*), and of your environment only PATH, HOME, USER,
LOGNAME, LANG, LANGUAGE, LC_*, TMPDIR, XDG_CACHE_HOME, XDG_CONFIG_HOME,
XDG_DATA_HOME, XDG_STATE_HOME, XDG_RUNTIME_DIR, VIRTUAL_ENV, PYENV_ROOT,
PYENV_VERSION, GOROOT, GOPATH, GOCACHE, GOMODCACHE, GOENV, GOFLAGS and
GOTOOLCHAIN (what Python, Node and Go servers need to start), plus the
variables the profile's pass_env and --pass-env name (PYTHONPATH, say).
Nothing else of your shell reaches the server, whatever its name; proxy and
CA variables are always the fake's. A value of your environment longer than
8 characters that the server was not given, and that the server writes
anyway (it read a .env file, or its parent's environment), is replaced by
[redacted:NAME] wherever it reaches the run: stderr, tool results, requests
to Central, and the model turns that carried them.`

const passEnvUsage = "pass this variable of your environment to the server too (repeatable; see the server's environment above)"

func addPassEnvFlag(f *pflag.FlagSet, dst *[]string) {
	f.StringSliceVar(dst, "pass-env", nil, passEnvUsage)
}

// checkPassEnv refuses names that cannot be passed (usage error, exit 2)
// and notes on w the ones your environment does not set, the profile's
// included, so a typo does not go unseen.
func checkPassEnv(a *app, w io.Writer, p *recorder.Profile, names []string) error {
	if err := recorder.CheckPassEnv(names); err != nil {
		return usageErr(fmt.Errorf("--pass-env: %w", err))
	}
	for _, n := range append(append([]string(nil), p.PassEnv...), names...) {
		if a.getenv(n) == "" {
			fmt.Fprintf(w, "note: %s is to be passed to server %s but is not set in your environment\n", escape.Line(n), escape.Line(p.Name))
		}
	}
	return nil
}
