package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// DefaultMaxProcs bounds the processes (threads included) of one sandbox:
// a server that forks without end fails to fork past it, and the machine
// keeps its pids.
const DefaultMaxProcs = 4096

var cgroupSeq atomic.Int64

// sweep removes the cgroups of sandboxes whose bench is gone (killed
// before it could remove them), at each new sandbox: they are empty once
// the kernel has finished killing their processes with their init.
func sweep(parent string) {
	dirs, _ := filepath.Glob(filepath.Join(parent, "bench-sandbox-*-*"))
	for _, d := range dirs {
		f := strings.Split(filepath.Base(d), "-")
		pid, err := strconv.Atoi(f[2])
		if err != nil || pid == os.Getpid() {
			continue
		}
		if benchRuns(pid) {
			continue // that bench still runs
		}
		os.Remove(d)
	}
}

// pidsCgroup is a pids cgroup of one sandbox, made beside (cgroup v1) or
// under (v2) the caller's own.
type pidsCgroup struct{ dir string }

// newPidsCgroup makes a pids cgroup limited to max processes, or says why
// it cannot (no pids controller, no permission).
func newPidsCgroup(max int) (*pidsCgroup, error) {
	parent, err := pidsParent()
	if err != nil {
		return nil, err
	}
	sweep(parent)
	dir := filepath.Join(parent, fmt.Sprintf("bench-sandbox-%d-%d", os.Getpid(), cgroupSeq.Add(1)))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("making a pids cgroup: %w", err)
	}
	c := &pidsCgroup{dir: dir}
	if err := c.limit(max); err != nil {
		c.remove()
		return nil, err
	}
	return c, nil
}

// limit sets the most processes the cgroup may hold.
func (c *pidsCgroup) limit(max int) error {
	if err := os.WriteFile(filepath.Join(c.dir, "pids.max"), []byte(strconv.Itoa(max)), 0o644); err != nil {
		return fmt.Errorf("limiting a pids cgroup: %w", err)
	}
	return nil
}

// pidsParent is the directory under which this process may make a pids
// cgroup: its own pids cgroup (v1), or its own cgroup where pids is among
// the controllers it hands to children (v2).
func pidsParent() (string, error) {
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	var v2 string
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			if c == "pids" {
				dir := filepath.Join("/sys/fs/cgroup/pids", parts[2])
				if _, err := os.Stat(filepath.Join(dir, "pids.max")); err == nil || parts[2] == "/" {
					return dir, nil
				}
			}
		}
		if parts[0] == "0" && parts[1] == "" {
			v2 = filepath.Join("/sys/fs/cgroup", parts[2])
		}
	}
	if v2 != "" {
		b, err := os.ReadFile(filepath.Join(v2, "cgroup.subtree_control"))
		if err == nil && strings.Contains(" "+strings.TrimSpace(string(b))+" ", " pids ") {
			return v2, nil
		}
	}
	return "", errors.New("no pids cgroup this process may make children in")
}

// add moves pid into the cgroup; its children are born in it.
func (c *pidsCgroup) add(pid int) error {
	return os.WriteFile(filepath.Join(c.dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644)
}

// remove deletes the cgroup once its processes are gone (the kernel
// refuses while one is left: the last may be dying still).
func (c *pidsCgroup) remove() {
	for i := 0; i < 200; i++ {
		if err := os.Remove(c.dir); err == nil || errors.Is(err, os.ErrNotExist) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// benchRuns reports whether pid is a live process: a zombie (a killed bench
// its parent has not reaped) is not.
func benchRuns(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i < 0 || i+2 >= len(b) || b[i+2] != 'Z'
}
