package asm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestRows32 checks DotRows32 and AxpyRows32 on every code path against
// plain float64 loops on the widened entries, and the assembly against the
// Go fallback: row counts 0..9 (the four-row kernel and its one-row
// remainder), lengths 0..64 and some long ones (every unrolled loop and
// tail), unaligned starts, a leading dimension wider than the rows, and
// guard regions around the outputs. The sums differ from the loops only in
// order and FMA rounding: |got - want| <= (n + 4) 2^-52 sum |k_ij v_j|.
func TestRows32(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	lengths := make([]int, 0, 72)
	for n := 0; n <= 64; n++ {
		lengths = append(lengths, n)
	}
	for i := 0; i < 6; i++ {
		lengths = append(lengths, 65+rng.IntN(3000))
	}
	forEachPath(t, func(t *testing.T) {
		for _, n := range lengths {
			for m := 0; m <= 9; m++ {
				ldk := n + rng.IntN(3)
				k := randOf[float32](rng, max(0, (m-1)*ldk+n)+1)[1:] // unaligned
				v := randSlice(rng, n)
				tv := randSlice(rng, m)
				dst, checkD := guarded(rng, m)
				DotRows32(dst, k, ldk, v)
				checkD(t)
				// The Go fallback on the same block, through the generic
				// kernels whatever the path.
				ref := make([]float64, m)
				for i := range ref {
					ref[i] = generic32.dotRow(k[i*ldk:i*ldk+n], v)
				}
				for i := 0; i < m; i++ {
					want, abs := 0.0, 0.0
					for j := 0; j < n; j++ {
						p := float64(k[i*ldk+j]) * v[j]
						want += p
						abs += math.Abs(p)
					}
					if d := math.Abs(dst[i] - want); d > float64(n+4)*0x1p-52*abs {
						t.Fatalf("m=%d n=%d: DotRows32[%d] = %v, want %v", m, n, i, dst[i], want)
					}
					if d := math.Abs(dst[i] - ref[i]); d > 2*float64(n+4)*0x1p-52*abs {
						t.Fatalf("m=%d n=%d: DotRows32[%d] = %v, fallback %v", m, n, i, dst[i], ref[i])
					}
				}
				acc, checkA := guarded(rng, n)
				acc0 := randSlice(rng, n)
				copy(acc, acc0)
				AxpyRows32(acc, k, ldk, tv)
				checkA(t)
				for j := 0; j < n; j++ {
					want, abs := acc0[j], math.Abs(acc0[j])
					for i := 0; i < m; i++ {
						p := tv[i] * float64(k[i*ldk+j])
						want += p
						abs += math.Abs(p)
					}
					if d := math.Abs(acc[j] - want); d > float64(m+4)*0x1p-52*abs {
						t.Fatalf("m=%d n=%d: AxpyRows32[%d] = %v, want %v", m, n, j, acc[j], want)
					}
				}
			}
		}
		// NaN propagates through both.
		k := []float32{1, 2, float32(math.NaN()), 4, 5}
		d := make([]float64, 1)
		DotRows32(d, k, 5, []float64{1, 1, 1, 1, 1})
		a := make([]float64, 5)
		AxpyRows32(a, k, 5, []float64{2})
		if !math.IsNaN(d[0]) || !math.IsNaN(a[2]) || a[1] != 4 {
			t.Fatalf("NaN: dot %v, axpy %v", d, a)
		}
	})
}
