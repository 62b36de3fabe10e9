package main

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/mcpbench/bench/traces"
)

// version is bench's version, printed by `bench version` and written into
// every trace as the harness. Release builds set it at link time (make build:
// -ldflags "-X main.version=$(git describe --tags --always --dirty)"). A
// build that does not (go install ...@v1.2.0, go build in a git clone) gets
// it from the build information the go command records: see
// versionFromBuildInfo.
var version string

func init() {
	if version == "" {
		version = versionFromBuildInfo(debug.ReadBuildInfo())
	}
}

// versionFromBuildInfo is the version a build records: the main module's
// version (v1.2.0 from go install ...@v1.2.0; a pseudo-version, with
// +dirty for uncommitted changes, from go build in a git clone), else
// the commit the binary was built from (its first 12 digits, -dirty when
// modified), else "dev" (go run, test binaries, -buildvcs=false, and go
// build in a git worktree: the go command takes only a .git directory, not
// a worktree's .git file, for a repository).
func versionFromBuildInfo(bi *debug.BuildInfo, ok bool) string {
	if !ok || bi == nil {
		return "dev"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev == "" {
		return "dev"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if modified == "true" {
		rev += "-dirty"
	}
	return rev
}

func newVersionCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print bench's version and the trace, store and pack format versions",
		Long: `The version is the one the build set (make build sets git describe --tags
--always --dirty), else the one the go command recorded: the module version
for go install github.com/mcpbench/bench/cmd/bench@VERSION, a pseudo-version
for go build in a git clone; else dev. Every trace records it as its
harness. The trace format is the run documents' (their IDs depend on it),
the store format the layout of a store (bench traces migrate converts an
older one), the pack format that of the packs bench traces export writes.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(a.stdout, "bench %s\ntrace format %d\nstore format %d\npack format %d\n",
				version, traces.FormatVersion, traces.StoreFormat, traces.PackFormat)
			return err
		},
	}
}
