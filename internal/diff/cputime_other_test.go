//go:build !linux

package diff

import "time"

var processStart = time.Now()

// threadCPU falls back to the wall clock where the thread's CPU time is
// not available.
func threadCPU() time.Duration { return time.Since(processStart) }
