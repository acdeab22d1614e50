package asm

import (
	"syscall"
	"time"
)

// threadCPU returns the CPU time used so far by the calling OS thread
// (getrusage RUSAGE_THREAD, which is 1 on Linux); benchmarks lock the
// goroutine to its thread and use it as a measure that other processes on a
// shared machine do not inflate.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
