package cores

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// threadNice is the nice value of the calling goroutine's thread, from
// /proc/thread-self/stat (field 19), the goroutine locked to it meanwhile.
func threadNice(t *testing.T) int {
	t.Helper()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b, err := os.ReadFile("/proc/thread-self/stat")
	if err != nil {
		t.Skipf("no /proc/thread-self: %v", err)
	}
	s := string(b)
	// The command name (field 2) is in parentheses and may hold spaces.
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	n, err := strconv.Atoi(f[16]) // field 19; f[0] is field 3
	if err != nil {
		t.Fatalf("nice in %q: %v", s, err)
	}
	return n
}

// A task runs on a thread at nice 19; the caller's priority and that of
// the threads the Go runtime runs other goroutines on are left alone.
func TestBackgroundPriority(t *testing.T) {
	before := threadNice(t)
	b := StartBackground(1)
	var in int
	b.Go(func() { in = threadNice(t) })
	b.Stop()
	if in != 19 {
		t.Fatalf("a background task ran at nice %d, want 19", in)
	}
	// Goroutines started now run on the runtime's other threads, none of
	// them the one that ended with the background's goroutine.
	for range 20 {
		ch := make(chan int)
		go func() { ch <- threadNice(t) }()
		if n := <-ch; n != before {
			t.Fatalf("a goroutine after Stop ran at nice %d, want %d: the background's thread was reused", n, before)
		}
	}
}
