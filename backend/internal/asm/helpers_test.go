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
	const g = 17
	off := rng.IntN(2)
	buf := make([]float64, n+2*g+off)
	sentinel := math.Float64frombits(0x7ff8dead0000beef)
	for i := range buf {
		buf[i] = sentinel
	}
	s = buf[g+off : g+off+n : g+off+n]
	return s, func(t *testing.T) {
		t.Helper()
		for i := 0; i < g+off; i++ {
			if math.Float64bits(buf[i]) != 0x7ff8dead0000beef {
				t.Fatalf("write before the output at offset %d", i-g-off)
			}
		}
		for i := g + off + n; i < len(buf); i++ {
			if math.Float64bits(buf[i]) != 0x7ff8dead0000beef {
				t.Fatalf("write after the output at offset %d", i-g-off-n)
			}
		}
	}
}

func randSlice(rng *rand.Rand, n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = rng.Float64()*2 - 1
	}
	return s
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
