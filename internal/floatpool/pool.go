// Package floatpool recycles []float64 work arrays between calls (the asm
// GEMM's packing buffers, the secular update's O(n m) arrays), so that hot
// paths do not fault in and zero fresh memory on every call.
package floatpool

import "sync"

var pool sync.Pool

// Get returns a slice of length n; its contents are unspecified.
func Get(n int) *[]float64 {
	if p, ok := pool.Get().(*[]float64); ok && cap(*p) >= n {
		*p = (*p)[:n]
		return p
	}
	s := make([]float64, n)
	return &s
}

// Put returns a slice obtained from Get for reuse; the caller must not use
// it afterwards.
func Put(p *[]float64) { pool.Put(p) }
