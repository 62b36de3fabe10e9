package fakecentral

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// RunDirPrefix starts the name of every per-run directory a Server makes
// under os.TempDir (its CA, and what a profile puts beside it):
// bench-fakecentral-<pid namespace>-<pid>-<random>, naming the process
// that owns it. Close removes it; one that a killed process left behind
// (kill -9 skips Close) is removed by the next Server any process starts
// (SweepStale).
const RunDirPrefix = "bench-fakecentral-"

var sweepOnce sync.Once

// makeRunDir makes this process's next per-run directory, after removing,
// once per process, those of processes that are gone.
func makeRunDir() (string, error) {
	sweepOnce.Do(func() { SweepStale(os.TempDir()) })
	return os.MkdirTemp("", fmt.Sprintf("%s%d-%d-", RunDirPrefix, pidNamespace(), os.Getpid()))
}

// SweepStale removes the per-run directories under root whose owning
// process is no longer running, and returns their paths, sorted. It skips
// directories of another PID namespace (a container sharing /tmp: their
// PIDs mean nothing here), of another user, and anything it cannot read;
// it never fails.
func SweepStale(root string) []string {
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil
	}
	ns := pidNamespace()
	var removed []string
	for _, e := range ents {
		owner, pid, ok := parseRunDir(e.Name())
		if !ok || owner != ns || pid == os.Getpid() || processRunning(pid) {
			continue
		}
		path := filepath.Join(root, e.Name())
		fi, err := os.Lstat(path)
		if err != nil || !fi.IsDir() {
			continue
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
			continue
		}
		if os.RemoveAll(path) == nil {
			removed = append(removed, path)
		}
	}
	return removed
}

// parseRunDir reads the PID namespace and the PID out of a per-run
// directory's name.
func parseRunDir(name string) (ns uint64, pid int, ok bool) {
	rest, found := strings.CutPrefix(name, RunDirPrefix)
	if !found {
		return 0, 0, false
	}
	f := strings.SplitN(rest, "-", 3)
	if len(f) != 3 {
		return 0, 0, false
	}
	ns, err1 := strconv.ParseUint(f[0], 10, 64)
	pid, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil || pid <= 0 {
		return 0, 0, false
	}
	return ns, pid, true
}

// processRunning reports whether pid names a process (a zombie counts:
// its parent may yet clean up after it).
func processRunning(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// pidNamespace is the inode of this process's PID namespace, 0 when it
// cannot be read.
func pidNamespace() uint64 {
	link, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return 0
	}
	// "pid:[4026531836]"
	n, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimPrefix(link, "pid:["), "]"), 10, 64)
	if err != nil {
		return 0
	}
	return n
}
