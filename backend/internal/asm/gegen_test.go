package asm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestGegenbauerClosedForms: d = 2 gives Chebyshev T_l(t) = cos(l*acos t),
// d = 3 Legendre polynomials (P_2 = (3t^2-1)/2, P_3 = (5t^3-3t)/2), and
// P_d^l(1) = 1 for every d. The recurrence is stable on [-1, 1]; errors grow
// at most linearly in l, so 64*q*eps bounds them.
func TestGegenbauerClosedForms(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(41, 42))
		for _, n := range []int{0, 1, 3, 4, 5, 17, 64, 129} {
			tt := make([]float64, n)
			for i := range tt {
				tt[i] = rng.Float64()*2 - 1
			}
			if n > 0 {
				tt[0] = 1
			}
			const q = 20
			out, check := guarded(rng, (q+1)*n)
			GegenbauerRecurrence(out, tt, q, 2)
			check(t)
			for l := 0; l <= q; l++ {
				for i, x := range tt {
					if w := math.Cos(float64(l) * math.Acos(x)); math.Abs(out[l*n+i]-w) > 64*q*0x1p-52 {
						t.Fatalf("Chebyshev T_%d(%v) = %v, want %v", l, x, out[l*n+i], w)
					}
				}
			}
			GegenbauerRecurrence(out, tt, q, 3)
			for i, x := range tt {
				if w := (3*x*x - 1) / 2; math.Abs(out[2*n+i]-w) > 1e-15 {
					t.Fatalf("Legendre P_2(%v) = %v, want %v", x, out[2*n+i], w)
				}
				if w := (5*x*x*x - 3*x) / 2; math.Abs(out[3*n+i]-w) > 1e-15 {
					t.Fatalf("Legendre P_3(%v) = %v, want %v", x, out[3*n+i], w)
				}
			}
			for _, d := range []int{2, 3, 5, 16, 100} {
				GegenbauerRecurrence(out, tt, q, d)
				if n > 0 {
					for l := 0; l <= q; l++ {
						if math.Abs(out[l*n]-1) > 64*q*0x1p-52 {
							t.Fatalf("d=%d: P_%d(1) = %v, want 1", d, l, out[l*n])
						}
					}
				}
			}
		}
	})
}

// TestGegenbauerPathsAgree: the vector step uses the fallback's exact
// roundings, so all paths give identical bits, NaN propagating per point.
func TestGegenbauerPathsAgree(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 44))
	for _, n := range []int{1, 2, 3, 4, 7, 8, 15, 16, 17, 33, 64, 1001} {
		tt := randSlice(rng, n)
		tt[n/2] = math.NaN()
		const q, d = 12, 7
		want := make([]float64, (q+1)*n)
		// Back to the path in use, not to the best one: a run under
		// ZONAL_ASM_PATH=avx2 or ZONAL_NOASM=1 keeps its path for the
		// tests after this one.
		prev, _ := SetPath("generic")
		GegenbauerRecurrence(want, tt, q, d)
		SetPath(prev)
		forEachPath(t, func(t *testing.T) {
			got := make([]float64, (q+1)*n)
			GegenbauerRecurrence(got, tt, q, d)
			for i := range got {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) && !(math.IsNaN(got[i]) && math.IsNaN(want[i])) {
					t.Fatalf("n=%d: element %d = %v, fallback %v", n, i, got[i], want[i])
				}
			}
			for l := 1; l <= q; l++ {
				if !math.IsNaN(got[l*n+n/2]) {
					t.Fatalf("NaN point did not propagate to degree %d", l)
				}
			}
		})
	}
}

func BenchmarkGegenbauer(b *testing.B) {
	const n, q = 1 << 16, 10
	rng := rand.New(rand.NewPCG(1, 1))
	tt := randSlice(rng, n)
	out := make([]float64, (q+1)*n)
	for _, p := range Paths() {
		b.Run(fmt.Sprint(p), func(b *testing.B) {
			prev, _ := SetPath(p)
			defer SetPath(prev)
			b.SetBytes(8 * n * q)
			for i := 0; i < b.N; i++ {
				GegenbauerRecurrence(out, tt, q, 5)
			}
		})
	}
}
