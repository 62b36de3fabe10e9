package sandbox

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// The kernel's structures of seccomp user notification
// (include/uapi/linux/seccomp.h), the same on amd64 and arm64.
type seccompData struct {
	Nr   int32
	Arch uint32
	IP   uint64
	Args [6]uint64
}

type seccompNotif struct {
	ID    uint64
	Pid   uint32
	Flags uint32
	Data  seccompData
}

type seccompNotifResp struct {
	ID    uint64
	Val   int64
	Error int32
	Flags uint32
}

// nativeArch is the audit architecture of this build: connect(2) is
// watched for it; a call made through another ABI (x32, compat) is not
// reported, though the network namespace refuses it all the same.
func nativeArch() (uint32, bool) {
	switch runtime.GOARCH {
	case "amd64":
		return unix.AUDIT_ARCH_X86_64, true
	case "arm64":
		return unix.AUDIT_ARCH_AARCH64, true
	}
	return 0, false
}

// installNotifier installs, on every thread of this process (and so on
// every process it starts), a filter that hands each connect(2) to a
// supervisor, and returns the supervisor's descriptor.
func installNotifier() (int, error) {
	arch, ok := nativeArch()
	if !ok {
		return -1, fmt.Errorf("no filter for %s", runtime.GOARCH)
	}
	insns, err := bpf.Assemble([]bpf.Instruction{
		bpf.LoadAbsolute{Off: 4, Size: 4}, // seccomp_data.arch
		bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: arch, SkipTrue: 2},
		bpf.LoadAbsolute{Off: 0, Size: 4}, // seccomp_data.nr
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.SYS_CONNECT, SkipTrue: 1},
		bpf.RetConstant{Val: unix.SECCOMP_RET_ALLOW},
		bpf.RetConstant{Val: unix.SECCOMP_RET_USER_NOTIF},
	})
	if err != nil {
		return -1, err
	}
	filter := make([]unix.SockFilter, len(insns))
	for i, in := range insns {
		filter[i] = unix.SockFilter{Code: in.Op, Jt: in.Jt, Jf: in.Jf, K: in.K}
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	flags := uintptr(unix.SECCOMP_FILTER_FLAG_NEW_LISTENER | unix.SECCOMP_FILTER_FLAG_TSYNC | unix.SECCOMP_FILTER_FLAG_TSYNC_ESRCH)
	fd, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, flags, uintptr(unsafe.Pointer(&prog)))
	runtime.KeepAlive(filter)
	if errno != 0 {
		return -1, fmt.Errorf("seccomp: %w", errno)
	}
	unix.CloseOnExec(int(fd))
	return int(fd), nil
}

// notifier answers the filter's notifications for one sandbox.
type notifier struct {
	fd   int
	wake int // an eventfd that stops the loop
	done chan struct{}
}

// watch answers every connect(2) of the sandbox: each is let through
// unchanged (the network namespace decides), and those to an address
// nothing in the sandbox listens on are reported to spec.Attempt first —
// but not the init's (process initPid outside): it dials the server's
// own port for the caller, which polls it until the server listens.
func watch(fd int, spec *Spec, initPid int) *notifier {
	wake, err := unix.Eventfd(0, unix.EFD_CLOEXEC)
	if err != nil {
		wake = -1
	}
	n := &notifier{fd: fd, wake: wake, done: make(chan struct{})}
	served := map[string]bool{}
	for _, a := range spec.Listen {
		served[a] = true
	}
	go func() {
		defer close(n.done)
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		if wake >= 0 {
			fds = append(fds, unix.PollFd{Fd: int32(wake), Events: unix.POLLIN})
		}
		for {
			for i := range fds {
				fds[i].Revents = 0
			}
			if _, err := unix.Poll(fds, -1); err != nil {
				if errors.Is(err, unix.EINTR) {
					continue
				}
				return
			}
			if len(fds) > 1 && fds[1].Revents != 0 {
				return
			}
			if fds[0].Revents&unix.POLLIN == 0 {
				return // POLLHUP: no process of the sandbox is left
			}
			var req seccompNotif
			if err := ioctl(fd, unix.SECCOMP_IOCTL_NOTIF_RECV, unsafe.Pointer(&req)); err != nil {
				if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.EINTR) {
					continue // the caller died before we read its call
				}
				return
			}
			a, journal := inspect(&req, served)
			if ioctl(fd, unix.SECCOMP_IOCTL_NOTIF_ID_VALID, unsafe.Pointer(&req.ID)) != nil {
				continue // gone: what we read may belong to another process
			}
			if journal && spec.Attempt != nil && tgid(int(req.Pid)) != initPid {
				spec.Attempt(a)
			}
			resp := seccompNotifResp{ID: req.ID, Flags: unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE}
			ioctl(fd, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&resp))
		}
	}()
	return n
}

func (n *notifier) close() {
	if n.wake >= 0 {
		var one [8]byte
		binary.NativeEndian.PutUint64(one[:], 1)
		unix.Write(n.wake, one[:])
		<-n.done
		unix.Close(n.wake)
	}
	unix.Close(n.fd)
}

func ioctl(fd int, req uint, arg unsafe.Pointer) error {
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(req), uintptr(arg))
	if errno != 0 {
		return errno
	}
	return nil
}

// inspect reads the address of a connect(2) from the caller's memory and
// says whether it is an attempt to journal: an internet address that is
// not one the sandbox serves, and not a loopback port some process of the
// sandbox listens on (a server talking to itself).
func inspect(req *seccompNotif, served map[string]bool) (Attempt, bool) {
	pid := int(req.Pid)
	size := req.Data.Args[2]
	if size > 128 {
		size = 128
	}
	if size < 2 {
		return Attempt{}, false
	}
	buf := make([]byte, size)
	local := []unix.Iovec{{Base: &buf[0]}}
	local[0].SetLen(len(buf))
	remote := []unix.RemoteIovec{{Base: uintptr(req.Data.Args[1]), Len: int(size)}}
	n, err := unix.ProcessVMReadv(pid, local, remote, 0)
	if err != nil || n < 2 {
		return Attempt{}, false
	}
	buf = buf[:n]
	var ip net.IP
	var port int
	network := ""
	switch binary.NativeEndian.Uint16(buf[0:2]) {
	case unix.AF_INET:
		if len(buf) < 8 {
			return Attempt{}, false
		}
		port = int(binary.BigEndian.Uint16(buf[2:4]))
		ip = net.IP(append([]byte(nil), buf[4:8]...))
		network = "inet"
	case unix.AF_INET6:
		if len(buf) < 24 {
			return Attempt{}, false
		}
		port = int(binary.BigEndian.Uint16(buf[2:4]))
		ip = net.IP(append([]byte(nil), buf[8:24]...))
		network = "inet6"
	default:
		return Attempt{}, false // unix sockets, netlink, AF_UNSPEC (disconnect)
	}
	addr := net.JoinHostPort(ip.String(), strconv.Itoa(port))
	if v4 := ip.To4(); v4 != nil && served[net.JoinHostPort(v4.String(), strconv.Itoa(port))] {
		return Attempt{}, false
	}
	if (ip.IsLoopback() || ip.IsUnspecified()) && listening(pid, port) {
		return Attempt{}, false
	}
	return Attempt{Network: network, Addr: addr}, true
}

// listening reports whether a socket of pid's network namespace listens on
// TCP port (from /proc/PID/net/tcp and tcp6, which show that namespace).
func listening(pid, port int) bool {
	want := fmt.Sprintf(":%04X", port)
	for _, name := range []string{"tcp", "tcp6"} {
		f, err := os.Open(fmt.Sprintf("/proc/%d/net/%s", pid, name))
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			// sl local_address rem_address st ...; st 0A is LISTEN.
			if len(fields) > 3 && fields[3] == "0A" && strings.HasSuffix(fields[1], want) {
				f.Close()
				return true
			}
		}
		f.Close()
	}
	return false
}

// tgid is the process (thread group) of thread tid, or 0.
func tgid(tid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", tid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "Tgid:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return 0
}
