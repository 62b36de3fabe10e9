package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/mcpbench/bench/traces"
)

// version is set at link time (-ldflags "-X main.version=...").
var version = "dev"

func newVersionCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print bench's version and the trace format version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(a.stdout, "bench %s\ntrace format %d\n", version, traces.FormatVersion)
			return err
		},
	}
}
