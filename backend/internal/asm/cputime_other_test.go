//go:build !linux

package asm

import "time"

// threadCPU is not available: benchmarks skip their CPU-time metrics.
func threadCPU() time.Duration { return 0 }
