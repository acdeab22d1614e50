package cputime

import (
	"runtime"
	"testing"
	"time"
)

// TestProcessGrows: busy work adds CPU time. The loop runs until 10 ms of CPU
// time have been counted; on a working clock that takes ~10 ms of wall time
// when the process has a core, and the test fails only if 10 s of wall time
// do not suffice (a clock that does not move).
func TestProcessGrows(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" || runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
		t.Skip("not measured on", runtime.GOOS)
	}
	t0 := Process()
	x := 1.0
	for start := time.Now(); Process()-t0 < 10*time.Millisecond; {
		if time.Since(start) > 10*time.Second {
			t.Fatalf("CPU time %v -> %v after 10 s of work (x = %g)", t0, Process(), x)
		}
		for i := 0; i < 10000; i++ {
			x = x*1.0000001 + 1e-9
		}
	}
	if t1 := Process(); t1 < t0 {
		t.Fatalf("CPU time went back: %v -> %v", t0, t1)
	}
}
