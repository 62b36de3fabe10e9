// Package sandbox runs a server under test where the kernel, not a
// convention, decides what it can reach and see.
//
// On Linux, Start launches the server in new user, PID, network and mount
// namespaces:
//
//   - network: the namespace has nothing but its own loopback. The only
//     sockets listening there are the ones Start was asked to open (the fake
//     Central's API and proxy ports, at the same addresses as outside), and
//     the caller serves them; a connection to any other port, another run's
//     fake or any outside address is refused by the kernel.
//   - seccomp: every connect(2) the server's processes make is reported to
//     the caller (a user-notification filter; the kernel then carries the
//     call out unchanged), so each refused attempt can be journaled as
//     egress with its address.
//   - PID: a small init (this package, re-executed from the caller's own
//     binary) is process 1; when the server exits, the kernel kills every
//     process left in the namespace, including descendants that called
//     setsid(2) and left the server's process group.
//   - user: the server's capabilities are confined to its namespaces. With
//     the caller non-dumpable (SetNonDumpable), it cannot read the caller's
//     environment or memory through /proc; with /proc remounted for the new
//     PID namespace (when the kernel allows), it cannot even see the caller.
//
// The init is the caller's binary run again: any program that starts a
// sandbox must import this package (its init function takes over the
// process when it is the sandbox's init). Each init is cloned by the
// caller's spawner (spawner_linux.go), the same binary run once more as a
// small long-lived helper: a clone that makes a user namespace cannot share
// its parent's memory, so made from the caller's large heap it would copy
// its page tables and fault on every page the caller writes next. A
// Starter keeps one sandbox started ahead (its init up, in its namespaces
// and pids cgroup, its loopback up, /proc remounted and connect(2)
// watched), so that a start waits only for the spec's listeners and the
// server's exec. Where the kernel refuses the
// namespaces (another OS, user namespaces disabled), Available says why and
// the caller falls back to the proxy convention.
package sandbox
