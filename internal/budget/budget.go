// Package budget checks allocations whose size comes from user input against
// a memory budget before they are made, with one message format for the whole
// module.
package budget

import (
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

// Check returns nil when need <= Or(limit), else a *zonal.TooLargeError
// (wrapping zonal.ErrTooLarge) naming what, the bytes needed, the budget and
// the option that raises it (MemoryBudget).
func Check(what string, need, limit int64) error {
	b := Or(limit)
	if need <= b {
		return nil
	}
	return &zonal.TooLargeError{What: what, Setting: "MemoryBudget", Need: need, Budget: b}
}

// Format renders a byte count for messages: "1.5 GiB (1610612736 bytes)".
func Format(b int64) string { return zonal.FormatBytes(b) }
