package cores

import "syscall"

// lowerPriority sets the calling thread's nice value to 19. Linux keeps a
// nice value per thread (setpriority(2) on the thread's ID); raising it
// needs no privilege. If it fails the work runs at normal priority, as it
// did before.
func lowerPriority() {
	_ = syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), 19)
}
