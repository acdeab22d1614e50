package asm

import (
	"sync"

	"github.com/zonal-ml/zonal/internal/floatpool"
)

// pool32 recycles the float32 packing buffers of Sgemm, as floatpool does
// for float64.
var pool32 sync.Pool

// getBuf returns a work slice of length n (contents unspecified) from the
// pool of its element type; putBuf gives it back.
func getBuf[T float](n int) *[]T {
	var zero T
	if _, ok := any(zero).(float64); ok {
		return any(floatpool.Get(n)).(*[]T)
	}
	p, _ := pool32.Get().(*[]T)
	if p == nil || cap(*p) < n {
		s := make([]T, n)
		return &s
	}
	*p = (*p)[:n]
	return p
}

func putBuf[T float](p *[]T) {
	if d, ok := any(p).(*[]float64); ok {
		floatpool.Put(d)
		return
	}
	pool32.Put(p)
}

// addTo sets y[i] += x[i] for i < len(x) (the vector kernel for float64).
func addTo[T float](x, y []T) {
	if xd, ok := any(x).([]float64); ok {
		cur().axpy(1, xd, any(y).([]float64))
		return
	}
	y = y[:len(x)]
	for i, v := range x {
		y[i] += v
	}
}
