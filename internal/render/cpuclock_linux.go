package render

import (
	"runtime"
	"syscall"
	"time"
	"unsafe"
)

// The render time limit counts the CPU time of the thread the render runs
// on, locked to it for the render: a machine busy with other work must not
// turn a one-second render into a timed-out one. (Garbage collection on
// other threads is not counted.)

const clockThreadCPUTime = 3 // CLOCK_THREAD_CPUTIME_ID

// cpuClock locks the goroutine to its thread and returns a clock of that
// thread's CPU time and the function that unlocks it.
func cpuClock() (now func() time.Duration, unlock func()) {
	if _, ok := threadCPU(); !ok {
		return wallClock()
	}
	runtime.LockOSThread()
	return func() time.Duration {
		d, _ := threadCPU()
		return d
	}, runtime.UnlockOSThread
}

func threadCPU() (time.Duration, bool) {
	var ts syscall.Timespec
	if _, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}
