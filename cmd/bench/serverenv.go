package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

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
to Central, and the model turns that carried them. ${NAME} in a profile's
cwd or command expands only the variables above, BENCH_* and those passed:
anything else (an API key) is an error, never an argument of the server.

Isolation (--isolation): auto, the default, runs each server in a sandbox of
Linux user, PID, network and mount namespaces when the kernel allows. There
it reaches its fake Central and the fake's proxy and nothing else: no other
loopback port, no other run's fake, no outside address; each connection it
tries to anything else is journaled as egress. It cannot see bench's
processes nor read bench's environment or memory, and nothing it starts
outlives it, not even a process that left its session. kernel requires the
sandbox (exit 4 where there is none); proxy never uses it, leaving only the
proxy variables, which a server may ignore. Each run records which it had
(traces show prints it).`

const passEnvUsage = "pass this variable of your environment to the server too (repeatable; see the server's environment above)"

func addPassEnvFlag(f *pflag.FlagSet, dst *[]string) {
	f.StringSliceVar(dst, "pass-env", nil, passEnvUsage)
}

func addIsolationFlag(f *pflag.FlagSet, dst *string) {
	f.StringVar(dst, "isolation", recorder.IsolationAuto, "how servers are confined: auto, kernel or proxy (see Isolation above)")
}

// probeIsolation refuses an unknown --isolation (exit 2) and, unless it
// is proxy, starts probing the kernel's sandbox in the background, for
// checkIsolation to read later: the probe starts a process, and the
// command loads its scenarios meanwhile.
func probeIsolation(v string) error {
	if err := knownIsolation(v); err != nil {
		return err
	}
	if v != recorder.IsolationProxy {
		recorder.ProbeKernelIsolation()
	}
	return nil
}

func knownIsolation(v string) error {
	if !slices.Contains(recorder.Isolations, v) {
		return usageErr(fmt.Errorf("--isolation %q: want one of %s", v, strings.Join(recorder.Isolations, ", ")))
	}
	return nil
}

// checkIsolation refuses an unknown --isolation (exit 2) and a kernel
// isolation this machine cannot give (exit 4), and notes on w when auto
// falls back to the proxy convention.
func checkIsolation(w io.Writer, v string) error {
	if err := knownIsolation(v); err != nil {
		return err
	}
	if v == recorder.IsolationProxy {
		return nil // no probe: the sandbox is not used
	}
	err := recorder.KernelIsolation()
	switch {
	case err == nil:
		return nil
	case v == recorder.IsolationKernel:
		return setupErr(fmt.Errorf("--isolation kernel: %w", err))
	}
	fmt.Fprintf(w, "note: servers run under the proxy convention only (%v): a server that ignores the proxy variables can reach the network, and a process it starts in a session of its own can outlive it; --isolation proxy silences this note\n", err)
	return nil
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
