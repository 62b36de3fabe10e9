package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestCLIReference keeps docs/cli.md equal to what --help says: the page is
// generated from the command tree. Regenerate with UPDATE_CLI_DOC=1.
func TestCLIReference(t *testing.T) {
	a := &app{stdin: strings.NewReader(""), stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}, getenv: func(string) string { return "" }}
	root := newRootCmd(a)
	root.InitDefaultCompletionCmd()
	var b bytes.Buffer
	b.WriteString("# bench command reference\n\n")
	b.WriteString("Generated from the commands' own help by `cmd/bench/clidoc_test.go`; `bench COMMAND --help`\n")
	b.WriteString("prints the same text. Regenerate with `UPDATE_CLI_DOC=1 go test ./cmd/bench -run TestCLIReference`.\n")
	writeCommandDoc(&b, root)
	const path = "../../docs/cli.md"
	if os.Getenv("UPDATE_CLI_DOC") != "" {
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (generate it with UPDATE_CLI_DOC=1 go test ./cmd/bench -run TestCLIReference)", err)
	}
	if !bytes.Equal(want, b.Bytes()) {
		t.Errorf("docs/cli.md is out of date with the commands' help; regenerate it with UPDATE_CLI_DOC=1 go test ./cmd/bench -run TestCLIReference")
	}
}

func writeCommandDoc(b *bytes.Buffer, c *cobra.Command) {
	if c.Hidden || c.Name() == "help" {
		return
	}
	if c.HasParent() {
		fmt.Fprintf(b, "\n## %s\n\n", c.CommandPath())
		if c.Short != "" {
			fmt.Fprintf(b, "%s.\n\n", strings.TrimSuffix(c.Short, "."))
		}
		if c.Runnable() {
			fmt.Fprintf(b, "```\n%s\n```\n\n", c.UseLine())
		}
		if c.Long != "" {
			fmt.Fprintf(b, "%s\n\n", strings.TrimSpace(c.Long))
		}
		if c.Example != "" {
			fmt.Fprintf(b, "Examples:\n\n```\n%s\n```\n\n", strings.TrimRight(c.Example, "\n"))
		}
		if flags := c.NonInheritedFlags().FlagUsages(); flags != "" {
			fmt.Fprintf(b, "Flags:\n\n```\n%s```\n", flags)
		}
	} else {
		fmt.Fprintf(b, "\n%s\n\nGlobal flags:\n\n```\n%s```\n", strings.TrimSpace(c.Long), c.PersistentFlags().FlagUsages())
	}
	for _, sub := range c.Commands() {
		writeCommandDoc(b, sub)
	}
}
