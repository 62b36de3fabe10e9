package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpbench/bench/scoring"
	"github.com/mcpbench/bench/traces"
)

func runArgs(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	a := &app{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "" }}
	code := runWith(context.Background(), a, args)
	return code, stdout.String(), stderr.String()
}

func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	bad := filepath.Join(dir, "bad.benchpack")
	os.WriteFile(bad, []byte("bench-pack\nnot zstd"), 0o644)
	held, err := traces.Open(filepath.Join(dir, "held"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()

	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"ok", []string{"version"}, exitOK, ""},
		{"unknown command", []string{"frobnicate"}, exitInvalidInput, "unknown command"},
		{"unknown flag", []string{"traces", "ls", "--frob"}, exitInvalidInput, "unknown flag"},
		{"too many args", []string{"--store", store, "traces", "ls", "a", "b"}, exitInvalidInput, "accepts at most 1 arg"},
		{"bad pack", []string{"--store", store, "traces", "import", bad}, exitInvalidInput, "bad pack"},
		{"missing pack", []string{"--store", store, "traces", "import", filepath.Join(dir, "nope")}, exitInvalidInput, "no such file"},
		{"store in use", []string{"--store", filepath.Join(dir, "held"), "traces", "gc"}, exitSetup, "is in use by pid "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runArgs(t, tt.args...)
			if code != tt.code || !strings.Contains(stderr, tt.stderr) {
				t.Errorf("bench %v: exit %d, stderr %q; want exit %d with %q", tt.args, code, stderr, tt.code, tt.stderr)
			}
		})
	}
}

func TestExitCodeMapping(t *testing.T) {
	tests := []struct {
		err  error
		code int
	}{
		{nil, exitOK},
		{usageErr(errors.New("x")), exitInvalidInput},
		{setupErr(errors.New("x")), exitSetup},
		{withCode(exitGateFailed, errors.New("x")), exitGateFailed},
		{withCode(exitSafety, errors.New("x")), exitSafety},
		{withCode(exitInconclusive, errors.New("x")), exitInconclusive},
		{&silentExit{code: exitSafety}, exitSafety},
		{errors.New("unmarked"), exitSetup},
	}
	for _, tt := range tests {
		var buf bytes.Buffer
		if got := exitCode(tt.err, &buf); got != tt.code {
			t.Errorf("exitCode(%v) = %d, want %d", tt.err, got, tt.code)
		}
	}
}

func TestIsArgsError(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{errors.New(`unknown command "x" for "bench"`), true},
		{errors.New("accepts at most 1 arg(s), received 2"), true},
		{setupErr(errors.New("opening store: accepts no writes: invalid argument")), false},
		{&silentExit{code: exitSafety}, false},
		{errors.New("reading blob: invalid argument"), false},
		{nil, false},
	}
	for _, tt := range tests {
		if got := isArgsError(tt.err); got != tt.want {
			t.Errorf("isArgsError(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}

// TestVerdictExit pins the exit code of each gate verdict: CI scripts
// branch on them (README, docs/cli.md).
func TestVerdictExit(t *testing.T) {
	for s, want := range map[scoring.Status]int{
		scoring.StatusPass: 0, scoring.StatusRegression: 1, scoring.StatusSafety: 3, scoring.StatusInconclusive: 5,
	} {
		if got := verdictExit(s); got != want {
			t.Errorf("verdictExit(%s) = %d, want %d", s, got, want)
		}
	}
}
