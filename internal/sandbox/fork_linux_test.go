package sandbox

import (
	"os/exec"
	"syscall"
	"testing"
)

// BenchmarkStartCost measures what starting a process in new namespaces
// costs the process that starts it, against a plain start in the same run:
// /bin/true, started with the sandbox's clone flags and id mappings
// (sysProcAttr) or with none, by a process that holds a heap of 32 MiB and
// writes to it between starts, as bench does. Go's os/exec clones with
// CLONE_VFORK|CLONE_VM unless the clone makes a user namespace
// (syscall/exec_linux.go: the child waits for its id mappings); without
// them the clone copies the parent's page tables and marks its memory
// copy-on-write, and each page the parent writes next takes a fault. The
// per-start cost then grows with the memory the starter writes, not with
// the namespaces.
//
//	go test -run XXX -bench StartCost ./internal/sandbox
func BenchmarkStartCost(b *testing.B) {
	if err := Available(); err != nil {
		b.Skipf("no sandbox here: %v", err)
	}
	heap := make([][]byte, 32)
	for i := range heap {
		heap[i] = make([]byte, 1<<20)
	}
	touch := func() {
		for _, p := range heap {
			for j := 0; j < len(p); j += 4096 {
				p[j]++
			}
		}
	}
	for _, c := range []struct {
		name   string
		attr   func() *syscall.SysProcAttr
		writes bool
	}{
		{"plain", func() *syscall.SysProcAttr { return nil }, true},
		{"namespaces", sysProcAttr, true},
		{"namespaces-no-writes", sysProcAttr, false}, // the clone alone
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				cmd := exec.Command("/bin/true")
				cmd.SysProcAttr = c.attr()
				if err := cmd.Run(); err != nil {
					b.Fatal(err)
				}
				if c.writes {
					touch()
				}
			}
		})
	}
}
