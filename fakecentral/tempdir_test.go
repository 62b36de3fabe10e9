package fakecentral

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// deadPID returns the PID of a process that has exited and been reaped.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

func TestSweepStale(t *testing.T) {
	root := t.TempDir()
	ns := pidNamespace()
	mk := func(name string) string {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Join(p, "sub"), 0o700); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(p, "ca.pem"), []byte("x"), 0o600)
		return p
	}
	dead := mk(fmt.Sprintf("%s%d-%d-123", RunDirPrefix, ns, deadPID(t)))
	keep := []string{
		mk(fmt.Sprintf("%s%d-%d-456", RunDirPrefix, ns, os.Getpid())),  // ours
		mk(fmt.Sprintf("%s%d-%d-789", RunDirPrefix, ns, os.Getppid())), // a live process's
		mk(fmt.Sprintf("%s%d-%d-111", RunDirPrefix, ns+1, deadPID(t))), // another PID namespace's
		mk(fmt.Sprintf("%sjunk-%d-1", RunDirPrefix, deadPID(t))),       // not ours to read
		mk("fakecentral-123456"), // not a bench name
	}
	// A file, not a directory, with a bench name: left alone.
	file := filepath.Join(root, fmt.Sprintf("%s%d-%d-222", RunDirPrefix, ns, deadPID(t)))
	os.WriteFile(file, nil, 0o600)
	keep = append(keep, file)

	got := SweepStale(root)
	if !slices.Equal(got, []string{dead}) {
		t.Errorf("SweepStale removed %v, want only %s", got, dead)
	}
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("%s is still there (%v)", dead, err)
	}
	for _, p := range keep {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was removed: %v", p, err)
		}
	}
}

// TestKilledProcessDirSwept kills (SIGKILL) a process while its fake runs,
// so its per-run directory with the CA stays behind; the next process to
// start a fake removes it, and removes its own when it closes the fake.
func TestKilledProcessDirSwept(t *testing.T) {
	root := t.TempDir()
	helper := func(mode string, stdin *os.File) (*exec.Cmd, *bufio.Scanner) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestDirHelper$")
		cmd.Env = append(os.Environ(), "BENCH_FAKECENTRAL_DIR_HELPER="+mode, "TMPDIR="+root)
		cmd.Stdin = stdin
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd, bufio.NewScanner(out)
	}
	// 1. A fake in a process killed with SIGKILL: it holds until its stdin
	// (a pipe whose write end the test keeps) says otherwise.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	victim, sc := helper("hold", r)
	r.Close()
	left := readDir(t, sc)
	victim.Process.Signal(syscall.SIGKILL)
	victim.Wait()
	if _, err := os.Stat(filepath.Join(left, "ca.pem")); err != nil {
		t.Fatalf("the killed process left no CA behind, so the test proves nothing: %v", err)
	}
	// 2. The next process that starts a fake sweeps it, and removes its
	// own directory when it closes the fake.
	next, sc := helper("once", nil)
	own := readDir(t, sc)
	for sc.Scan() {
	}
	if err := next.Wait(); err != nil {
		t.Fatalf("helper: %v", err)
	}
	if _, err := os.Stat(left); !os.IsNotExist(err) {
		t.Errorf("the killed process's directory %s survived the next start (%v)", left, err)
	}
	if _, err := os.Stat(own); !os.IsNotExist(err) {
		t.Errorf("the helper's own directory %s survived Close (%v)", own, err)
	}
	if ents, _ := os.ReadDir(root); len(ents) != 0 {
		t.Errorf("left in %s: %v", root, ents)
	}
}

func readDir(t *testing.T, sc *bufio.Scanner) string {
	t.Helper()
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "DIR "); ok {
			return d
		}
	}
	t.Fatalf("the helper printed no directory (%v)", sc.Err())
	return ""
}

// TestDirHelper is the helper process of TestKilledProcessDirSwept: it
// starts a fake, prints its per-run directory, then either holds (until
// killed, or its stdin closes) or closes the fake and exits.
func TestDirHelper(t *testing.T) {
	mode := os.Getenv("BENCH_FAKECENTRAL_DIR_HELPER")
	if mode == "" {
		t.Skip("helper process of TestKilledProcessDirSwept")
	}
	s, err := Start(&Options{Fixture: MustLoadFixture("site-a")})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("DIR %s\n", filepath.Dir(s.CAFile))
	if mode == "hold" {
		os.Stdin.Read(make([]byte, 1)) // blocks: the test holds the write end
	}
	s.Close()
}
