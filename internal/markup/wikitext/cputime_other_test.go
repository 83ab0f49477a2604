//go:build !unix

package wikitext

import "time"

var processStart = time.Now()

// cpuTime falls back to the wall clock where the process's CPU time is
// not read.
func cpuTime() time.Duration { return time.Since(processStart) }
