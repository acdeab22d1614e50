package asm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
)

func TestDsyrk(t *testing.T) {
	forEachPath(t, func(t *testing.T) { testSyrk(t, Dsyrk) })
}

// syrkFunc is Dsyrk or Ssyrk.
type syrkFunc[T float] func(ul blas.Uplo, t blas.Transpose, n, k int, alpha T, a []T, lda int, beta T, c []T, ldc int)

// testSyrk checks both triangles and transposes of syrk over sizes around
// the tile sizes, against the full product by the triple loop in float64.
func testSyrk[T float](t *testing.T, syrk syrkFunc[T]) {
	rng := rand.New(rand.NewPCG(5, 6))
	sizes := []int{0, 1, 2, 3, 5, 7, 8, 9, 13, 16, 23, 24, 25, 31, 33, 48, 49, 64, 100, 257}
	for _, n := range sizes {
		for _, k := range []int{0, 1, 3, 17, 300, 2100} {
			if k == 2100 && n > 64 || k == 300 && n > 100 {
				continue // keep the reference products cheap
			}
			for _, tt := range []blas.Transpose{blas.NoTrans, blas.Trans} {
				pad := rng.IntN(3)
				ar, ac := n, k
				if tt == blas.Trans {
					ar, ac = k, n
				}
				lda := max(1, ac) + pad
				a := randOf[T](rng, max(0, (ar-1)*lda+ac))
				// The full product op(A) op(A)^T by the triple loop.
				prod := make([]float64, n*n)
				if n > 0 {
					a64 := widen(a)
					refGemm(tt == blas.Trans, tt == blas.NoTrans, n, n, k, 1, a64, lda, a64, lda, 0, prod, n)
				}
				for _, ul := range []blas.Uplo{blas.Lower, blas.Upper} {
					for _, beta := range []T{0, 1, -0.5} {
						checkSyrk(t, rng, syrk, ul, tt, n, k, 0.75, beta, a, lda, prod)
					}
				}
			}
		}
	}
}

// checkSyrk compares syrk with alpha*prod + beta*C on the triangle (prod is
// the full product from the triple loop) and checks that the other strict
// triangle and the padding of C are untouched. Tolerance as in
// checkGemmCase.
func checkSyrk[T float](t *testing.T, rng *rand.Rand, syrk syrkFunc[T], ul blas.Uplo, tt blas.Transpose, n, k int, alpha, beta T, a []T, lda int, prod []float64) {
	t.Helper()
	ldc := max(1, n) + rng.IntN(3)
	clen := max(0, (n-1)*ldc+n)
	c, check := guardedOf[T](rng, clen)
	c0 := randOf[T](rng, clen)
	if beta == 0 {
		for i := range c0 {
			if rng.IntN(2) == 0 {
				c0[i] = T(math.NaN())
			}
		}
	}
	copy(c, c0)
	syrk(ul, tt, n, k, alpha, a, lda, beta, c, ldc)
	check(t)
	tol := 4 * float64(k+2) * epsOf[T]()
	scale := float64(alpha)*float64(k) + math.Abs(float64(beta)) + 1
	for i := 0; i < n; i++ {
		for j := 0; j < ldc && i*ldc+j < clen; j++ {
			idx := i*ldc + j
			in := j < n && (ul == blas.Lower && j <= i || ul == blas.Upper && j >= i)
			if !in {
				if !sameBits(c[idx], c0[idx]) {
					t.Fatalf("n=%d k=%d %c %c: C[%d,%d] outside the triangle changed", n, k, ul, tt, i, j)
				}
				continue
			}
			want := float64(alpha) * prod[i*n+j]
			if beta != 0 {
				want += float64(beta) * float64(c0[idx])
			}
			if !closeTo(float64(c[idx]), want, tol, scale) {
				t.Fatalf("n=%d k=%d %c %c beta=%v: C[%d,%d] = %v, want %v", n, k, ul, tt, beta, i, j, c[idx], want)
			}
		}
	}
}

// spd returns a random symmetric positive definite n x n matrix M M^T/n + I.
func spd(rng *rand.Rand, n, ld int) []float64 {
	m := randSlice(rng, n*n)
	a := make([]float64, max(0, (n-1)*ld+n))
	if n == 0 {
		return a
	}
	refGemm(false, true, n, n, n, 1/float64(n), m, n, m, n, 0, a, ld)
	for i := 0; i < n; i++ {
		a[i*ld+i] += 1
	}
	return a
}

func TestDpotrf(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(7, 8))
		sizes := []int{0, 1, 2, 5, 17, 47, 48, 49, 64, 97, 150, 333}
		for _, n := range sizes {
			ld := n + rng.IntN(3)
			a := spd(rng, n, ld)
			l := append([]float64(nil), a...)
			// Poison the strict upper triangle: it must not be read.
			for i := 0; i < n; i++ {
				for j := i + 1; j < n; j++ {
					l[i*ld+j] = math.NaN()
				}
			}
			if p, v := Dpotrf(n, l, ld); p >= 0 {
				t.Fatalf("n=%d: reported pivot %d (%v) on an SPD matrix", n, p, v)
			}
			// Reconstruct L L^T and compare with A. The backward error of
			// Cholesky is bounded by c*n*eps*|L||L^T|; entries of A are O(1)
			// with a unit diagonal shift, so 8*n*eps is a safe bound.
			for i := 0; i < n; i++ {
				for j := 0; j <= i; j++ {
					var s float64
					for p := 0; p <= j; p++ {
						s += l[i*ld+p] * l[j*ld+p]
					}
					if math.Abs(s-a[i*ld+j]) > 8*float64(n+1)*0x1p-52*(1+math.Abs(a[i*ld+j])) {
						t.Fatalf("n=%d: (LL^T)[%d,%d] = %v, want %v", n, i, j, s, a[i*ld+j])
					}
				}
			}
		}
	})
}

func TestDpotrfNotPD(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(9, 10))
		for _, n := range []int{3, 60, 200} {
			for _, bad := range []int{0, n / 3, n - 1} {
				a := spd(rng, n, n)
				// Make the leading (bad+1) x (bad+1) block singular-indefinite by
				// a negative diagonal entry large enough to dominate.
				a[bad*n+bad] = -10
				p, v := Dpotrf(n, a, n)
				if p != bad || !(v <= 0) {
					t.Fatalf("n=%d: pivot = %d (%v), want %d with a non-positive value", n, p, v, bad)
				}
			}
			a := spd(rng, n, n)
			a[(n/2)*n+n/2] = math.NaN()
			if p, _ := Dpotrf(n, a, n); p != n/2 {
				t.Fatalf("NaN pivot: got %d, want %d", p, n/2)
			}
		}
	})
}

func TestDtrsmLL(t *testing.T) { testDtrsmLeft(t, false) }

// TestDtrsmLU: the upper triangular solve, whose strict lower triangle is
// NaN and must not be read.
func TestDtrsmLU(t *testing.T) { testDtrsmLeft(t, true) }

func testDtrsmLeft(t *testing.T, upper bool) {
	forEachPath(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(11, 12))
		for _, m := range []int{0, 1, 2, 7, 48, 49, 100, 211} {
			for _, n := range []int{0, 1, 5, 33} {
				for _, tt := range []blas.Transpose{blas.NoTrans, blas.Trans} {
					for _, diag := range []blas.Diag{blas.NonUnit, blas.Unit} {
						ldl, ldb := max(1, m)+rng.IntN(3), max(1, n)+rng.IntN(3)
						// Well-conditioned triangle: unit-ish diagonal, small
						// off-diagonal; the other strict triangle is NaN.
						in := func(i, j int) bool { return j < i }
						if upper {
							in = func(i, j int) bool { return j > i }
						}
						l := make([]float64, max(0, (m-1)*ldl+m))
						for i := 0; i < m; i++ {
							for j := 0; j < m; j++ {
								switch {
								case i == j:
									l[i*ldl+i] = 1 + rng.Float64()
								case in(i, j):
									l[i*ldl+j] = (rng.Float64() - 0.5) / float64(m)
								default:
									l[i*ldl+j] = math.NaN() // never read
								}
							}
						}
						// op(T)[i,p], with the unit diagonal when asked.
						op := func(i, p int) float64 {
							if tt == blas.Trans {
								i, p = p, i
							}
							if i == p && diag == blas.Unit {
								return 1
							}
							if i == p || in(i, p) {
								return l[i*ldl+p]
							}
							return 0
						}
						x := randSlice(rng, max(0, (m-1)*ldb+n))
						// b = 2 * op(T) x so that alpha = 0.5 recovers x.
						b := make([]float64, len(x))
						for i := 0; i < m; i++ {
							for j := 0; j < n; j++ {
								var s float64
								for p := 0; p < m; p++ {
									s += op(i, p) * x[p*ldb+j]
								}
								b[i*ldb+j] = 2 * s
							}
						}
						if upper {
							DtrsmLU(tt, diag, m, n, 0.5, l, ldl, b, ldb)
						} else {
							DtrsmLL(tt, diag, m, n, 0.5, l, ldl, b, ldb)
						}
						for i := 0; i < m; i++ {
							for j := 0; j < n; j++ {
								// The triangle is diagonally dominant (cond = O(1)): 64*m*eps.
								if math.Abs(b[i*ldb+j]-x[i*ldb+j]) > 64*float64(m+1)*0x1p-52 {
									t.Fatalf("upper=%v m=%d n=%d %c %c: X[%d,%d] = %v, want %v", upper, m, n, tt, diag, i, j, b[i*ldb+j], x[i*ldb+j])
								}
							}
						}
					}
				}
			}
		}
	})
}

func BenchmarkDpotrf(b *testing.B) {
	for _, p := range Paths() {
		for _, n := range []int{512, 2048} {
			b.Run(fmt.Sprintf("%s/n=%d", p, n), func(b *testing.B) {
				prev, _ := SetPath(p)
				defer SetPath(prev)
				rng := rand.New(rand.NewPCG(1, 1))
				a := spdFast(rng, n)
				w := make([]float64, len(a))
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					copy(w, a)
					Dpotrf(n, w, n)
				}
				b.ReportMetric(float64(n)*float64(n)*float64(n)/3*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

func BenchmarkSyrkTall(b *testing.B) {
	for _, p := range Paths() {
		b.Run(p, func(b *testing.B) {
			prev, _ := SetPath(p)
			defer SetPath(prev)
			rng := rand.New(rand.NewPCG(1, 1))
			k, n := 100000, 512
			if p == "generic" {
				k = 10000
			}
			a := randSlice(rng, k*n)
			c := make([]float64, n*n)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				Dsyrk(blas.Lower, blas.Trans, n, k, 1, a, n, 0, c, n)
			}
			b.ReportMetric(float64(n)*float64(n)*float64(k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

func TestDtrsmRLT(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(13, 14))
		for _, n := range []int{0, 1, 3, 48, 49, 130} {
			for _, m := range []int{0, 1, 7, 100} {
				ldl, ldb := max(1, n)+rng.IntN(2), max(1, n)+rng.IntN(2)
				l := make([]float64, max(0, (n-1)*ldl+n))
				for i := 0; i < n; i++ {
					for j := 0; j < i; j++ {
						l[i*ldl+j] = (rng.Float64() - 0.5) / float64(n)
					}
					l[i*ldl+i] = 1 + rng.Float64()
				}
				x := randSlice(rng, max(0, (m-1)*ldb+n))
				b := make([]float64, len(x))
				// b = 3 * x L^T: b[i,j] = 3 * sum_{p<=j} x[i,p] l[j,p].
				for i := 0; i < m; i++ {
					for j := 0; j < n; j++ {
						var s float64
						for p := 0; p <= j; p++ {
							s += x[i*ldb+p] * l[j*ldl+p]
						}
						b[i*ldb+j] = 3 * s
					}
				}
				DtrsmRLT(m, n, 1.0/3, l, ldl, b, ldb)
				for i := 0; i < m; i++ {
					for j := 0; j < n; j++ {
						// Diagonally dominant L, cond = O(1): 64*n*eps.
						if math.Abs(b[i*ldb+j]-x[i*ldb+j]) > 64*float64(n+1)*0x1p-52 {
							t.Fatalf("m=%d n=%d: X[%d,%d] = %v, want %v", m, n, i, j, b[i*ldb+j], x[i*ldb+j])
						}
					}
				}
			}
		}
	})
}

// spdFast builds M M^T/n + I with Dgemm.
func spdFast(rng *rand.Rand, n int) []float64 {
	m := randSlice(rng, n*n)
	a := make([]float64, n*n)
	Dgemm(blas.NoTrans, blas.Trans, n, n, n, 1/float64(n), m, n, m, n, 0, a, n)
	for i := 0; i < n; i++ {
		a[i*n+i]++
	}
	return a
}
