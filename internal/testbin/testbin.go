// Package testbin builds the module's programs for tests: each once per
// test process, into one temporary directory that RemoveAll deletes (call
// it from TestMain after the tests ran).
package testbin

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
)

// Fataler is what Build fails when a program does not build.
type Fataler interface {
	Fatalf(format string, args ...any)
}

type built struct {
	once sync.Once
	path string
	err  error
}

var (
	mu     sync.Mutex
	dir    string
	builds = map[string]*built{}
)

// Build returns the path of the program in pkg ("./examples/central-mcp",
// relative to the module's root), built with CGO_ENABLED=0 the first time
// it is asked for. A build failure fails t (a *testing.T, or a testscript
// command's *TestScript).
func Build(t Fataler, pkg string) string {
	if h, ok := t.(interface{ Helper() }); ok {
		h.Helper()
	}
	mu.Lock()
	b := builds[pkg]
	if b == nil {
		b = &built{}
		builds[pkg] = b
	}
	mu.Unlock()
	b.once.Do(func() { b.path, b.err = build(pkg) })
	if b.err != nil {
		t.Fatalf("%v", b.err)
	}
	return b.path
}

func build(pkg string) (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	mu.Lock()
	if dir == "" {
		dir, err = os.MkdirTemp("", "bench-testbin-")
	}
	d := dir
	mu.Unlock()
	if err != nil {
		return "", err
	}
	out := filepath.Join(d, filepath.Base(pkg))
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building %s: %v\n%s", pkg, err, b)
	}
	return out, nil
}

// moduleRoot is the directory of the go.mod above the working directory
// (a package's directory, under go test).
func moduleRoot() (string, error) {
	d, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", errors.New("testbin: no go.mod above the working directory")
		}
		d = parent
	}
}

// ReferenceProfile is a profile of bench's reference server
// (examples/central-mcp) like servers/reference.yaml, whose command is
// command, a YAML flow sequence such as ["/tmp/central-mcp"].
func ReferenceProfile(command string) string {
	return fmt.Sprintf(`name: reference
repo: local
transport: stdio
command: %s
env:
  CENTRAL_BASE_URL: "{central_url}"
  CENTRAL_CLIENT_ID: bench-reference
  CENTRAL_CLIENT_SECRET: bench-reference-secret
  HTTPS_PROXY: "{proxy_url}"
  NO_PROXY: "127.0.0.1,localhost"
  SSL_CERT_FILE: "{ca_file}"
writes_env: {CENTRAL_WRITES: "1"}
`, command)
}

// RemoveAll deletes every program built.
func RemoveAll() {
	mu.Lock()
	defer mu.Unlock()
	if dir != "" {
		os.RemoveAll(dir)
	}
}
