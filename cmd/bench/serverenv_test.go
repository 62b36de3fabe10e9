package main

import (
	"os"
	"strings"
	"testing"

	"github.com/mcpbench/bench/recorder"
)

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
