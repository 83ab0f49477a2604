package jobs

import "golang.org/x/sys/unix"

// setNice sets the calling thread's niceness (Linux keeps one per thread).
func setNice(n int) error {
	return unix.Setpriority(unix.PRIO_PROCESS, unix.Gettid(), n)
}
