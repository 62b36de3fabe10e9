//go:build !linux

package sandbox

import (
	"context"
	"errors"
	"net"
	"os"
	"runtime"
	"time"
)

// Spec is what to run in the sandbox.
type Spec struct {
	Path    string
	Args    []string
	Env     []string
	Dir     string
	Listen  []string
	Attempt func(Attempt)
}

// Attempt is a refused connection attempt.
type Attempt struct {
	Network string
	Addr    string
}

// Isolation says what a sandbox had.
type Isolation struct {
	Namespaces, Proc, Seccomp bool
	MaxProcs                  int
	Notes                     []string
}

// Sandbox is never started on this platform.
type Sandbox struct{}

var errUnsupported = errors.New("sandbox: namespaces are Linux only (" + runtime.GOOS + ")")

// Available says why there is no sandbox here.
func Available() error { return errUnsupported }

// Starter starts no sandbox on this platform.
type Starter struct{}

// NewStarter returns a Starter whose Start fails.
func NewStarter() *Starter { return &Starter{} }

func (*Starter) Start() (*Sandbox, error) { return nil, errUnsupported }
func (*Starter) Close()                   {}

func (*Sandbox) Streams() (stdin, stdout, stderr *os.File)      { return nil, nil, nil }
func (*Sandbox) Pid() int                                       { return 0 }
func (*Sandbox) Wait() error                                    { return errUnsupported }
func (*Sandbox) Setup(*Spec, time.Duration) error               { return errUnsupported }
func (*Sandbox) Listeners() []net.Listener                      { return nil }
func (*Sandbox) Isolation() Isolation                           { return Isolation{} }
func (*Sandbox) ExitStatus() string                             { return "" }
func (*Sandbox) Dial(context.Context, string) (net.Conn, error) { return nil, errUnsupported }
func (*Sandbox) Close()                                         {}

// SetNonDumpable does nothing here.
func SetNonDumpable() error { return nil }
