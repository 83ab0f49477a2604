//go:build unix

package wikitext

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time the test process has used: the bounds on a
// render's cost are on it, not on the wall clock, which a busy machine
// stretches.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
