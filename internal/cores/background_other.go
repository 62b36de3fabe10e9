//go:build !linux

package cores

// lowerPriority leaves the thread's priority as it is: setpriority(2) on a
// thread is Linux's.
func lowerPriority() {}
