//go:build !unix

package backend_test

import "time"

func cpuTime() (time.Duration, bool) { return 0, false }
