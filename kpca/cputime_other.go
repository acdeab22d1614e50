//go:build !unix

package kpca

import "time"

// cpuTime is not measured on this platform (always 0).
func cpuTime() time.Duration { return 0 }
