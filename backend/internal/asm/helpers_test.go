package asm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// forEachPath runs f once per code path available in this build, with the
// path selected; the previous path is restored afterwards.
func forEachPath(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	for _, p := range Paths() {
		t.Run(p, func(t *testing.T) {
			prev, err := SetPath(p)
			if err != nil {
				t.Fatal(err)
			}
			defer SetPath(prev)
			f(t)
		})
	}
}

// guarded returns a slice of length n surrounded by guard NaN sentinels
// (written before and after) and a check function reporting writes to them.
// The returned slice starts one element past a 64-byte boundary at most
// half the time, so unaligned starts are exercised too.
func guarded(rng *rand.Rand, n int) (s []float64, check func(t *testing.T)) {
	return guardedOf[float64](rng, n)
}

// guardedOf is guarded for either precision; the sentinel is a NaN with a
// payload (0x7ff8dead0000beef, or 0x7fc0beef in float32) that no kernel
// produces.
func guardedOf[T float](rng *rand.Rand, n int) (s []T, check func(t *testing.T)) {
	const g = 17
	off := rng.IntN(2)
	buf := make([]T, n+2*g+off)
	sentinel := sentinelOf[T]()
	for i := range buf {
		buf[i] = sentinel
	}
	s = buf[g+off : g+off+n : g+off+n]
	return s, func(t *testing.T) {
		t.Helper()
		for i := 0; i < g+off; i++ {
			if !sameBits(buf[i], sentinel) {
				t.Fatalf("write before the output at offset %d", i-g-off)
			}
		}
		for i := g + off + n; i < len(buf); i++ {
			if !sameBits(buf[i], sentinel) {
				t.Fatalf("write after the output at offset %d", i-g-off-n)
			}
		}
	}
}

func sentinelOf[T float]() T {
	var z T
	if _, ok := any(z).(float32); ok {
		return T(math.Float32frombits(0x7fc0beef))
	}
	return T(math.Float64frombits(0x7ff8dead0000beef))
}

// sameBits reports whether x and y have the same bit pattern (NaN payloads
// included).
func sameBits[T float](x, y T) bool {
	switch xv := any(x).(type) {
	case float32:
		return math.Float32bits(xv) == math.Float32bits(any(y).(float32))
	default:
		return math.Float64bits(any(x).(float64)) == math.Float64bits(any(y).(float64))
	}
}

// epsOf is the unit roundoff of T doubled (2^-52 or 2^-23), the factor
// of the tests' error bounds.
func epsOf[T float]() float64 {
	var z T
	if _, ok := any(z).(float32); ok {
		return 0x1p-23
	}
	return 0x1p-52
}

func randSlice(rng *rand.Rand, n int) []float64 { return randOf[float64](rng, n) }

// randOf returns n values uniform in [-1, 1) (rounded to T).
func randOf[T float](rng *rand.Rand, n int) []T {
	s := make([]T, n)
	for i := range s {
		s[i] = T(rng.Float64()*2 - 1)
	}
	return s
}

// widen returns x as float64 values, for the float64 reference products.
func widen[T float](x []T) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v)
	}
	return out
}

// close reports whether got and want agree to tol relative to scale.
func closeTo(got, want, tol, scale float64) bool {
	if math.IsNaN(want) {
		return math.IsNaN(got)
	}
	if math.IsInf(want, 0) {
		return got == want
	}
	return math.Abs(got-want) <= tol*scale
}
