//go:build unix

package kpca

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time (user + system) used so far by the process,
// all threads included. Timings on a shared machine are reported both as wall
// time and as this, which does not grow while the process waits for a core.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
