package asm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The level-1 kernels sum in a different order than a plain loop; for
// values in [-1,1] the difference is below n*eps*sum|x_i y_i| <= n*eps*n.
func TestLevel1(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(21, 22))
		sizes := make([]int, 0, 80)
		for n := 0; n <= 64; n++ {
			sizes = append(sizes, n)
		}
		for i := 0; i < 10; i++ {
			sizes = append(sizes, 65+rng.IntN(5000))
		}
		for _, n := range sizes {
			x := randSlice(rng, n+1)[1:] // unaligned start
			y := randSlice(rng, n)
			var wantDot, wantSq float64
			for i := range x {
				wantDot += x[i] * y[i]
				wantSq += x[i] * x[i]
			}
			tol := float64(n+1) * float64(n+1) * 0x1p-52
			if got := ddot(x, y); math.Abs(got-wantDot) > tol {
				t.Fatalf("n=%d: ddot = %v, want %v", n, got, wantDot)
			}
			if got := SumSq(x); math.Abs(got-wantSq) > tol {
				t.Fatalf("n=%d: SumSq = %v, want %v", n, got, wantSq)
			}
			// Axpy and Scal are elementwise: one FMA (or multiply and add)
			// per element, so they agree with the loop within 1 ulp of 2.
			yy, check := guarded(rng, n)
			copy(yy, y)
			Daxpy(-0.75, x, yy)
			check(t)
			for i := range yy {
				if w := y[i] + -0.75*x[i]; math.Abs(yy[i]-w) > 0x1p-51 {
					t.Fatalf("n=%d: Daxpy[%d] = %v, want %v", n, i, yy[i], w)
				}
			}
			xx, check2 := guarded(rng, n)
			copy(xx, x)
			dscal(1.25, xx)
			check2(t)
			for i := range xx {
				if xx[i] != 1.25*x[i] {
					t.Fatalf("n=%d: dscal[%d] = %v, want %v", n, i, xx[i], 1.25*x[i])
				}
			}
		}
		// NaN and Inf propagate.
		x := []float64{1, 2, math.NaN(), 4, 5, 6, 7, 8, 9}
		y := []float64{1, 1, 1, 1, 1, 1, 1, 1, 1}
		if !math.IsNaN(ddot(x, y)) || !math.IsNaN(SumSq(x)) {
			t.Fatal("NaN did not propagate through ddot/SumSq")
		}
		x[2] = math.Inf(-1)
		if !math.IsInf(ddot(x, y), -1) || !math.IsInf(SumSq(x), 1) {
			t.Fatal("Inf did not propagate through ddot/SumSq")
		}
		Daxpy(2, x, y)
		if !math.IsInf(y[2], -1) || y[0] != 3 {
			t.Fatalf("Daxpy with Inf: %v", y)
		}
		// Strided versions.
		xs := []float64{1, 9, 2, 9, 3}
		ys := []float64{4, 5, 6}
		if got := DdotInc(3, xs, 2, ys, 1); got != 1*4+2*5+3*6 {
			t.Fatalf("DdotInc = %v", got)
		}
		if got := DdotInc(3, xs, -2, ys, 1); got != 3*4+2*5+1*6 {
			t.Fatalf("DdotInc negative inc = %v", got)
		}
		DaxpyInc(3, 1, xs, 2, ys, 1)
		if ys[0] != 5 || ys[1] != 7 || ys[2] != 9 {
			t.Fatalf("DaxpyInc: %v", ys)
		}
		DscalInc(3, 0, xs, 2)
		if xs[0] != 0 || xs[1] != 9 || xs[4] != 0 {
			t.Fatalf("DscalInc: %v", xs)
		}
	})
}

func BenchmarkDdot(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	x, y := randSlice(rng, 4096), randSlice(rng, 4096)
	for _, p := range Paths() {
		b.Run(p, func(b *testing.B) {
			prev, _ := SetPath(p)
			defer SetPath(prev)
			b.SetBytes(2 * 8 * 4096)
			for i := 0; i < b.N; i++ {
				ddot(x, y)
			}
		})
	}
}
