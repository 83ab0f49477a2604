package diff

import (
	"syscall"
	"time"
)

// threadCPU returns the CPU time the calling thread has used, so that a
// case is timed by the work it did, not by how long a busy machine made it
// wait. Callers lock the goroutine to its thread.
func threadCPU() time.Duration {
	const rusageThread = 1 // RUSAGE_THREAD
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
