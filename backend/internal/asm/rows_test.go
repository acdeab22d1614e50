package asm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestRows checks DotRows and AxpyRows on every code path against plain
// loops and against the Go fallback (genericImpl's dot and axpy on the same
// rows): row counts 0..6, lengths 0..40 and some long ones (every unrolled
// loop and tail of the dispatched kernels), unaligned starts, a leading
// dimension wider than the rows, guard regions around the outputs. The
// sums differ from the loops only in order and FMA rounding, so
// |got - want| <= (n + 4) 2^-52 sum |terms| (the standard bound of a
// float64 sum of n + 1 terms, with slack for the partial sums).
func TestRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	lengths := make([]int, 0, 48)
	for n := 0; n <= 40; n++ {
		lengths = append(lengths, n)
	}
	for i := 0; i < 4; i++ {
		lengths = append(lengths, 41+rng.IntN(3000))
	}
	gen := genericImpl()
	forEachPath(t, func(t *testing.T) {
		for _, n := range lengths {
			for m := 0; m <= 6; m++ {
				ldk := n + rng.IntN(3)
				k := randSlice(rng, max(0, (m-1)*ldk+n)+1)[1:] // unaligned
				v := randSlice(rng, n)
				tv := randSlice(rng, m)
				dst, checkD := guarded(rng, m)
				DotRows(dst, k, ldk, v)
				checkD(t)
				for i := 0; i < m; i++ {
					want, abs := 0.0, 0.0
					for j := 0; j < n; j++ {
						p := k[i*ldk+j] * v[j]
						want += p
						abs += math.Abs(p)
					}
					ref := gen.dot(k[i*ldk:i*ldk+n], v)
					if d := math.Abs(dst[i] - want); d > float64(n+4)*0x1p-52*abs {
						t.Fatalf("m=%d n=%d: DotRows[%d] = %v, want %v", m, n, i, dst[i], want)
					}
					if d := math.Abs(dst[i] - ref); d > 2*float64(n+4)*0x1p-52*abs {
						t.Fatalf("m=%d n=%d: DotRows[%d] = %v, fallback %v", m, n, i, dst[i], ref)
					}
				}
				acc, checkA := guarded(rng, n)
				acc0 := randSlice(rng, n)
				copy(acc, acc0)
				AxpyRows(acc, k, ldk, tv)
				checkA(t)
				ref := append([]float64(nil), acc0...)
				for i := 0; i < m; i++ {
					gen.axpy(tv[i], k[i*ldk:i*ldk+n], ref)
				}
				for j := 0; j < n; j++ {
					want, abs := acc0[j], math.Abs(acc0[j])
					for i := 0; i < m; i++ {
						p := tv[i] * k[i*ldk+j]
						want += p
						abs += math.Abs(p)
					}
					if d := math.Abs(acc[j] - want); d > float64(m+4)*0x1p-52*abs {
						t.Fatalf("m=%d n=%d: AxpyRows[%d] = %v, want %v", m, n, j, acc[j], want)
					}
					if d := math.Abs(acc[j] - ref[j]); d > 2*float64(m+4)*0x1p-52*abs {
						t.Fatalf("m=%d n=%d: AxpyRows[%d] = %v, fallback %v", m, n, j, acc[j], ref[j])
					}
				}
			}
		}
		// NaN in a row propagates through the dot and (t[i] != 0) the axpy.
		k := []float64{1, 2, math.NaN(), 4, 5}
		d := make([]float64, 1)
		DotRows(d, k, 5, []float64{1, 1, 1, 1, 1})
		a := make([]float64, 5)
		AxpyRows(a, k, 5, []float64{2})
		if !math.IsNaN(d[0]) || !math.IsNaN(a[2]) || a[1] != 4 {
			t.Fatalf("NaN: dot %v, axpy %v", d, a)
		}
	})
}
