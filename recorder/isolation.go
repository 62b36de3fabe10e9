package recorder

import (
	"fmt"
	"net"
	"sync"

	"github.com/mcpbench/bench/fakecentral"
	"github.com/mcpbench/bench/internal/sandbox"
)

// The values of Options.Isolation, and what a run's Initialize records
// it had.
const (
	IsolationAuto   = "auto"
	IsolationKernel = "kernel" // user, PID, network and mount namespaces; connect(2) journaled
	IsolationProxy  = "proxy"  // the proxy variables only: a server that ignores them is not stopped
)

// Isolations lists the values Options.Isolation takes.
var Isolations = []string{IsolationAuto, IsolationKernel, IsolationProxy}

// KernelIsolation reports whether servers can run in a sandbox here: nil,
// or why not (another OS, user namespaces disabled).
func KernelIsolation() error { return sandbox.Available() }

// ProbeKernelIsolation starts KernelIsolation's probe (it starts a trivial
// sandbox) in the background, for a command to go on with its own start-up
// meanwhile; KernelIsolation then waits for the answer.
func ProbeKernelIsolation() { go sandbox.Available() }

var nonDumpable sync.Once

// confine returns how to start a server against fake under the recorder's
// isolation, and the isolation the run has (IsolationKernel or
// IsolationProxy). Before the first server, bench makes itself
// non-dumpable: its environment and memory are then closed to servers
// through /proc (see sandbox.SetNonDumpable).
func (r *Recorder) confine(fake *fakecentral.Server) (*confine, string, error) {
	nonDumpable.Do(func() { sandbox.SetNonDumpable() })
	switch r.opts.Isolation {
	case IsolationProxy:
		return nil, IsolationProxy, nil
	case IsolationKernel:
		if err := sandbox.Available(); err != nil {
			return nil, "", fmt.Errorf("--isolation kernel: %w", err)
		}
	case IsolationAuto:
		if sandbox.Available() != nil {
			return nil, IsolationProxy, nil
		}
	default:
		return nil, "", fmt.Errorf("isolation %q: want one of %v", r.opts.Isolation, Isolations)
	}
	api, proxy := fake.Addrs()
	return &confine{
		starter: r.starter,
		listen:  []string{api, proxy},
		attempt: func(a sandbox.Attempt) { fake.Central.RecordEgress(a.Addr, "sandbox") },
		serve:   func(ls []net.Listener) { fake.Serve(ls[0], ls[1]) },
	}, IsolationKernel, nil
}
