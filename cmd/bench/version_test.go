package main

import (
	"runtime/debug"
	"testing"
)

func TestVersionFromBuildInfo(t *testing.T) {
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	const rev = "6a51e10c3f9b2d4e5f60718293a4b5c6d7e8f901"
	for _, c := range []struct {
		name string
		bi   *debug.BuildInfo
		ok   bool
		want string
	}{
		{"no build info", nil, false, "dev"},
		{"go install @version", &debug.BuildInfo{Main: debug.Module{Path: "github.com/mcpbench/bench", Version: "v1.2.0"}}, true, "v1.2.0"},
		{"go build in a checkout", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20260101120000-6a51e10c3f9b+dirty"}, Settings: vcs(rev, "true")}, true, "v0.0.0-20260101120000-6a51e10c3f9b+dirty"},
		{"revision only", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs(rev, "false")}, true, "6a51e10c3f9b"},
		{"modified revision", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs(rev, "true")}, true, "6a51e10c3f9b-dirty"},
		{"go run, test binary", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, true, "dev"},
	} {
		if got := versionFromBuildInfo(c.bi, c.ok); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
