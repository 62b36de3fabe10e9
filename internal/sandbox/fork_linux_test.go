package sandbox

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// startHelperEnv makes the test binary BenchmarkStartCost's helper: a small
// process that starts /bin/true in the sandbox's namespaces for each line
// it reads, and answers a line when it has exited.
const startHelperEnv = "BENCH_STARTCOST_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(startHelperEnv) != "" {
		in, out := bufio.NewScanner(os.Stdin), bufio.NewWriter(os.Stdout)
		for in.Scan() {
			cmd := exec.Command("/bin/true")
			cmd.SysProcAttr = sysProcAttr()
			fmt.Fprintln(out, cmd.Run())
			out.Flush()
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

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
// the namespaces. The last case asks a small helper process, started once,
// to make each start: what a fork server would cost.
//
//	go test -run XXX -bench StartCost ./internal/sandbox
func BenchmarkStartCost(b *testing.B) {
	if err := Available(); err != nil {
		b.Skipf("no sandbox here: %v", err)
	}
	touch := heapToWrite()
	for _, c := range []struct {
		name   string
		attr   func() *syscall.SysProcAttr
		writes bool
		helper bool
	}{
		{"plain", func() *syscall.SysProcAttr { return nil }, true, false},
		{"namespaces", sysProcAttr, true, false},
		{"namespaces-no-writes", sysProcAttr, false, false},     // the clone alone
		{"user-namespace-only", userNamespaceOnly, true, false}, // what the other namespaces add
		{"namespaces-from-helper", nil, true, true},
	} {
		b.Run(c.name, func(b *testing.B) {
			if c.helper {
				benchHelper(b, touch)
				return
			}
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

// benchHelper makes each start through a helper process started once, the
// benchmark writing its memory between starts as the others do.
func benchHelper(b *testing.B, touch func()) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), startHelperEnv+"=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer cmd.Wait()
	defer stdin.Close()
	answers := bufio.NewScanner(stdout)
	for b.Loop() {
		fmt.Fprintln(stdin)
		if !answers.Scan() {
			b.Fatalf("the helper stopped: %v", answers.Err())
		}
		if a := answers.Text(); a != "<nil>" {
			b.Fatalf("the helper: %s", a)
		}
		touch()
	}
}

// userNamespaceOnly is sysProcAttr with no namespace but the user one.
func userNamespaceOnly() *syscall.SysProcAttr {
	a := sysProcAttr()
	a.Cloneflags = syscall.CLONE_NEWUSER
	return a
}

// BenchmarkSandboxStart measures a whole sandbox of /bin/true (Start,
// Setup, Wait, Close) from a process that holds a heap of 32 MiB and
// writes it between starts, as BenchmarkStartCost does: through a Starter
// that keeps one started ahead, as bench does; through the spawner alone;
// and started by the caller itself. cpu-ms/op is the caller's own CPU
// (getrusage, children excluded): what a fresh server costs the bench
// process, against its wall time.
func BenchmarkSandboxStart(b *testing.B) {
	if err := Available(); err != nil {
		b.Skipf("no sandbox here: %v", err)
	}
	touch := heapToWrite()
	for _, c := range []struct {
		name           string
		ahead, spawner bool
	}{{"ahead", true, true}, {"spawner", false, true}, {"direct", false, false}} {
		b.Run(c.name, func(b *testing.B) {
			defer func(v bool) { useSpawner = v }(useSpawner)
			useSpawner = c.spawner
			if c.spawner {
				if _, err := theSpawner(); err != nil {
					b.Fatal(err)
				}
			}
			st := NewStarter()
			st.ahead = c.ahead
			defer st.Close()
			var ru0, ru1 syscall.Rusage
			syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
			for b.Loop() {
				sb, err := st.Start()
				if err != nil {
					b.Fatal(err)
				}
				if err := sb.Setup(&Spec{Path: "/bin/true", Args: []string{"true"}}, 10*time.Second); err != nil {
					b.Fatal(err)
				}
				if err := sb.Wait(); err != nil {
					b.Fatal(err)
				}
				sb.Close()
				in, out, errs := sb.Streams()
				in.Close()
				out.Close()
				errs.Close()
				touch()
			}
			syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
			cpu := time.Duration(syscall.TimevalToNsec(ru1.Utime) - syscall.TimevalToNsec(ru0.Utime) +
				syscall.TimevalToNsec(ru1.Stime) - syscall.TimevalToNsec(ru0.Stime))
			b.ReportMetric(float64(cpu.Microseconds())/1e3/float64(b.N), "cpu-ms/op")
		})
	}
}

// heapToWrite makes a heap of 32 MiB and returns what writes a byte of
// each of its pages, as a caller of the sandbox writes its memory between
// starts.
func heapToWrite() func() {
	heap := make([][]byte, 32)
	for i := range heap {
		heap[i] = make([]byte, 1<<20)
	}
	return func() {
		for _, p := range heap {
			for j := 0; j < len(p); j += 4096 {
				p[j]++
			}
		}
	}
}
