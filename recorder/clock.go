package recorder

import (
	"bufio"
	"debug/elf"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The clock settings a profile may name (docs/clock.md).
const (
	// ClockAuto, the default, pins the clock of a server whose command is
	// dynamically linked (Python, Node and the like) when a libfaketime
	// that suits its runtime is installed.
	ClockAuto = "auto"
	// ClockPinned pins it whenever libfaketime is installed, whatever the
	// command looks like: for a launcher (a static binary, a wrapper) that
	// starts a dynamically linked server.
	ClockPinned = "pinned"
	// ClockWall leaves the server on the wall clock.
	ClockWall = "wall"
)

// The values of a manifest's clock field.
const (
	ManifestClockPinned   = "pinned"
	ManifestClockUnpinned = "unpinned"
)

// LibfaketimeVar names the variable that points bench at a libfaketime.so.1
// other than the system's.
const LibfaketimeVar = "BENCH_LIBFAKETIME"

// libfaketimePaths are where distributions install libfaketime.
var libfaketimePaths = []string{
	"/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1",
	"/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1",
	"/usr/lib/faketime/libfaketime.so.1",
	"/usr/lib64/faketime/libfaketime.so.1",
	"/usr/local/lib/faketime/libfaketime.so.1",
}

func checkClock(s string) error {
	switch s {
	case "", ClockAuto, ClockPinned, ClockWall:
		return nil
	}
	return fmt.Errorf("clock: %q is not auto, pinned or wall", s)
}

// ClockPlan is how bench sets the clock of a profile's server.
type ClockPlan struct {
	// Library is the libfaketime.so.1 the server is started under; empty:
	// the server runs on the wall clock.
	Library string
	// Manifest is the runs' manifest clock field: "pinned", "unpinned"
	// (pinning was due and could not be done) or "".
	Manifest string
	// Note says, for people, what bench does with the clock and why; empty
	// when there is nothing to say (a Go server, clock: wall).
	Note string
	// Program is the program the command runs, as resolved (the
	// interpreter of a script); Why says what it is.
	Program, Why string
}

// Pinned reports whether the server runs under a pinned clock.
func (c ClockPlan) Pinned() bool { return c.Library != "" }

// PlanClock decides how the server of p is clocked, given the environment
// bench runs in (environ: the CLI's os.Environ, read for BENCH_LIBFAKETIME).
// A profile that launches nothing (a running HTTP server) is left alone.
func PlanClock(p *Profile, environ []string) ClockPlan {
	argv := p.Argv()
	if len(argv) == 0 || p.Clock == ClockWall {
		return ClockPlan{}
	}
	prog, kind := resolveProgram(argv[0], p.WorkDir(), 0)
	plan := ClockPlan{Program: prog, Why: kind.why()}
	if kind != progDynamic && p.Clock != ClockPinned {
		return plan // a Go or static program: the profile's normalize rules are what holds
	}
	lib, fixed, err := findLibfaketime(environ)
	name := p.Name
	switch {
	case err != nil:
		plan.Manifest = ManifestClockUnpinned
		plan.Note = fmt.Sprintf("server %s runs on the wall clock, NOT pinned: %v. Install libfaketime (apt-get install libfaketime) or set %s; until then a server that prints the time replays stale (docs/clock.md)", name, err, LibfaketimeVar)
	case !fixed && p.Clock != ClockPinned && !isNode(prog):
		plan.Manifest = ManifestClockUnpinned
		plan.Note = fmt.Sprintf("server %s runs on the wall clock, NOT pinned: %s is a libfaketime older than 0.9.11, under which a stopped clock breaks Python's time.sleep (and %s may be Python); install 0.9.11 or later and set %s, or set clock: pinned in the profile to pin anyway (docs/clock.md)", name, lib, prog, LibfaketimeVar)
	case kind != progDynamic:
		plan.Library, plan.Manifest = lib, ManifestClockPinned
		plan.Note = fmt.Sprintf("server %s: clock: pinned preloads libfaketime (%s) although %s is %s; it pins what that starts through libc", name, lib, prog, plan.Why)
	default:
		plan.Library, plan.Manifest = lib, ManifestClockPinned
		plan.Note = fmt.Sprintf("server %s runs with its clock stopped at the fixture's time (libfaketime %s; %s is %s)", name, lib, prog, plan.Why)
	}
	return plan
}

// Env returns env with the variables that start the server under a clock
// stopped at at: libfaketime preloaded (before any LD_PRELOAD the profile
// sets) and configured, and any other FAKETIME* setting removed. Without a
// library it returns env as it is.
//
// Why these settings (docs/clock.md): FAKETIME "YYYY-MM-DD hh:mm:ss" (an
// absolute date, read as UTC) stops the wall clock there, so every reading
// is the same in every run and replay; the monotonic clock stays real
// (FAKETIME_DONT_FAKE_MONOTONIC=1), so event loops (asyncio, libuv), timers
// and timeouts still work; FAKETIME_DISABLE_SHM=1 keeps libfaketime out of
// /dev/shm (0.9.12 and later; earlier ones ignore it).
func (c ClockPlan) Env(env []string, at time.Time) []string {
	if c.Library == "" {
		return env
	}
	preload := c.Library
	out := make([]string, 0, len(env)+4)
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		switch {
		case k == "LD_PRELOAD":
			if v != "" {
				preload = c.Library + ":" + v
			}
			continue
		case strings.HasPrefix(k, "FAKETIME"):
			continue
		}
		out = append(out, kv)
	}
	return append(out, "LD_PRELOAD="+preload,
		"FAKETIME="+at.UTC().Format("2006-01-02 15:04:05"),
		"FAKETIME_DONT_FAKE_MONOTONIC=1",
		"FAKETIME_DISABLE_SHM=1")
}

// clockPlan is PlanClock for a server this Recorder launches (none with
// Options.Connect: the server is the caller's).
func (o *Options) clockPlan(p *Profile) ClockPlan {
	if o.Connect != nil {
		return ClockPlan{}
	}
	return PlanClock(p, o.Environ)
}

// progKind is what kind of program a command runs.
type progKind int

const (
	progUnknown progKind = iota // not found, or not ELF nor a script
	progStatic                  // a statically linked ELF
	progGo                      // a Go program: it reads the clock without libc
	progDynamic                 // a dynamically linked ELF, or a script run by one
)

func (k progKind) why() string {
	switch k {
	case progStatic:
		return "statically linked: libfaketime cannot pin it"
	case progGo:
		return "a Go program: Go reads the clock without libc, so libfaketime cannot pin it"
	case progDynamic:
		return "dynamically linked"
	}
	return "not found or not a program bench can inspect"
}

// resolveProgram finds the program argv0 runs, from dir: the file itself
// for an ELF binary, the interpreter for a script ("#!/usr/bin/env node"
// is node). depth bounds interpreters of interpreters.
func resolveProgram(argv0, dir string, depth int) (string, progKind) {
	path := argv0
	if !strings.Contains(path, "/") {
		lp, err := exec.LookPath(path)
		if err != nil {
			return argv0, progUnknown
		}
		path = lp
	} else if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	if f, err := elf.Open(path); err == nil {
		defer f.Close()
		if f.Section(".go.buildinfo") != nil || f.Section(".note.go.buildid") != nil {
			return path, progGo
		}
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				return path, progDynamic
			}
		}
		return path, progStatic
	}
	interp, args := shebang(path)
	if interp == "" || depth >= 4 {
		return path, progUnknown
	}
	if filepath.Base(interp) == "env" {
		// #!/usr/bin/env [-S] [NAME=VALUE...] PROGRAM: the program is what
		// runs the script (env itself would be pinned, and pass it on).
		for _, a := range args {
			if strings.HasPrefix(a, "-") || strings.Contains(a, "=") {
				continue
			}
			return resolveProgram(a, dir, depth+1)
		}
	}
	return resolveProgram(interp, dir, depth+1)
}

// shebang returns a script's interpreter and its arguments, or "".
func shebang(path string) (string, []string) {
	f, err := os.Open(path)
	if err != nil {
		return "", nil
	}
	defer f.Close()
	line, err := bufio.NewReader(io.LimitReader(f, 512)).ReadString('\n')
	if err != nil && line == "" {
		return "", nil
	}
	rest, ok := strings.CutPrefix(line, "#!")
	if !ok {
		return "", nil
	}
	fields := strings.Fields(rest)
	if len(fields) == 0 {
		return "", nil
	}
	return fields[0], fields[1:]
}

// isNode reports whether prog is Node.js, which a stopped clock suits
// under any libfaketime.
func isNode(prog string) bool {
	b := filepath.Base(prog)
	return b == "node" || b == "nodejs"
}

// libfaketime is what was found of a library, by path.
type libfaketime struct {
	fixed bool // 0.9.11 or later: its clock_nanosleep keeps a real monotonic clock
	err   error
}

var libfaketimes sync.Map // path -> libfaketime

// findLibfaketime returns the libfaketime to use (BENCH_LIBFAKETIME, else
// the first of libfaketimePaths that exists) and whether it is 0.9.11 or
// later.
func findLibfaketime(environ []string) (string, bool, error) {
	var path string
	for _, kv := range environ {
		if v, ok := strings.CutPrefix(kv, LibfaketimeVar+"="); ok {
			path = v
		}
	}
	if path == "" {
		for _, p := range libfaketimePaths {
			if _, err := os.Stat(p); err == nil {
				path = p
				break
			}
		}
		if path == "" {
			return "", false, fmt.Errorf("libfaketime is not installed (looked in %s)", strings.Join(libfaketimePaths, ", "))
		}
	}
	if l, ok := libfaketimes.Load(path); ok {
		l := l.(libfaketime)
		return path, l.fixed, l.err
	}
	l := inspectLibfaketime(path)
	libfaketimes.Store(path, l)
	return path, l.fixed, l.err
}

// inspectLibfaketime checks that path is a shared library exporting
// libfaketime's clock_gettime, and tells 0.9.11 or later (it added
// sem_clockwait, in the release that fixed clock_nanosleep under a real
// monotonic clock) from earlier ones.
func inspectLibfaketime(path string) libfaketime {
	f, err := elf.Open(path)
	if err != nil {
		return libfaketime{err: fmt.Errorf("%s: %v", path, err)}
	}
	defer f.Close()
	syms, err := f.DynamicSymbols()
	if err != nil {
		return libfaketime{err: fmt.Errorf("%s: not a shared library: %v", path, err)}
	}
	var clock, own, semClockwait bool
	for _, s := range syms {
		if s.Section == elf.SHN_UNDEF {
			continue
		}
		switch s.Name {
		case "clock_gettime":
			clock = true
		case "ft_mode", "needs_forced_monotonic_fix": // libfaketime's own
			own = true
		case "sem_clockwait":
			semClockwait = true
		}
	}
	if !clock || !own {
		return libfaketime{err: fmt.Errorf("%s does not look like libfaketime (it does not define clock_gettime and ft_mode)", path)}
	}
	return libfaketime{fixed: semClockwait}
}

// dropFaketimeShm removes what libfaketime older than 0.9.12 (which
// ignores FAKETIME_DISABLE_SHM) leaves in /dev/shm for the server's
// process when it does not exit cleanly (a signal, or an exec that skips
// its destructor): a semaphore and a segment named by the pid of the first
// process that loaded it, the server's leader. Called once the server has
// stopped; nothing to do for other servers.
func (p *process) dropFaketimeShm() {
	if p == nil || p.pgid <= 0 {
		return
	}
	pid := strconv.Itoa(p.pgid)
	os.Remove("/dev/shm/faketime_shm_" + pid)
	os.Remove("/dev/shm/sem.faketime_sem_" + pid)
}
