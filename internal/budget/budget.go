// Package budget checks allocations whose size comes from user input against
// a memory budget before they are made, with one message format for the whole
// module.
package budget

import (
	"fmt"
	"math"

	"github.com/zonal-ml/zonal"
)

// Or returns limit, or zonal.DefaultMemoryBudget when limit <= 0.
func Or(limit int64) int64 {
	if limit <= 0 {
		return zonal.DefaultMemoryBudget
	}
	return limit
}

// Floats returns the bytes of n float64 values, saturating at math.MaxInt64
// (so a product of absurd sizes is still refused, never wrapped around).
// Negative factors count as zero.
func Floats(factors ...int) int64 {
	return Bytes(8, factors...)
}

// Bytes returns elem * the product of factors in bytes, saturating at
// math.MaxInt64; negative factors count as zero.
func Bytes(elem int64, factors ...int) int64 {
	p := float64(elem)
	for _, f := range factors {
		if f < 0 {
			f = 0
		}
		p *= float64(f)
	}
	if p >= math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(p)
}

// Check returns nil when need <= Or(limit), else an error wrapping
// zonal.ErrTooLarge: "<what> needs N, the memory budget is B (set
// Options.MemoryBudget; zonal: -memory)".
func Check(what string, need, limit int64) error {
	b := Or(limit)
	if need <= b {
		return nil
	}
	return fmt.Errorf("%w: %s needs %s, the memory budget is %s (raise it with Options.MemoryBudget, or -memory on the command line)",
		zonal.ErrTooLarge, what, Format(need), Format(b))
}

// Format renders a byte count for messages: "1.5 GiB (1610612736 bytes)".
func Format(b int64) string {
	const unit = 1024
	if b < unit {
		return fmt.Sprintf("%d B", b)
	}
	div, exp := int64(unit), 0
	for n := b / unit; n >= unit; n /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB (%d bytes)", float64(b)/float64(div), "KMGTPE"[exp], b)
}
