//go:build !linux

package render

import "time"

// cpuClock is the wall clock where the thread's CPU time is not read.
func cpuClock() (now func() time.Duration, unlock func()) { return wallClock() }
