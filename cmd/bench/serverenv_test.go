package main

import (
	"os"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/mcpbench/bench/recorder"

	"github.com/mcpbench/bench/internal/testbin"
)

// cmdRefServer VAR builds the reference server (once per test binary) and
// sets VAR to its path in the script's environment.
func cmdRefServer(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: refserver VAR")
	}
	ts.Setenv(args[0], testbin.Build(ts, "./examples/central-mcp"))
}

// TestServerEnvDocumented: the help of the commands that start servers
// and docs/adapters.md name every variable a server inherits.
func TestServerEnvDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/adapters.md")
	if err != nil {
		t.Fatal(err)
	}
	help := strings.Join(strings.Fields(serverEnvHelp), " ")
	for _, name := range recorder.BaseEnv() {
		if !strings.Contains(help, name+",") && !strings.Contains(help, name+" ") {
			t.Errorf("the help (serverEnvHelp) does not name %s", name)
		}
		if !strings.Contains(string(doc), "`"+name+"`") {
			t.Errorf("docs/adapters.md does not name `%s`", name)
		}
	}
	if !strings.Contains(string(doc), recorder.RedactedPlaceholder("NAME")) || !strings.Contains(help, recorder.RedactedPlaceholder("NAME")) {
		t.Errorf("the placeholder %s is not documented", recorder.RedactedPlaceholder("NAME"))
	}
}
