package asm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
)

// refGemm is the textbook triple loop.
func refGemm(tA, tB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s float64
			for p := 0; p < k; p++ {
				var av, bv float64
				if tA {
					av = a[p*lda+i]
				} else {
					av = a[i*lda+p]
				}
				if tB {
					bv = b[j*ldb+p]
				} else {
					bv = b[p*ldb+j]
				}
				s += av * bv
			}
			if beta == 0 {
				c[i*ldc+j] = alpha * s
			} else {
				c[i*ldc+j] = alpha*s + beta*c[i*ldc+j]
			}
		}
	}
}

func tr(b bool) blas.Transpose {
	if b {
		return blas.Trans
	}
	return blas.NoTrans
}

// gemmFunc is Dgemm or Sgemm.
type gemmFunc[T float] func(tA, tB blas.Transpose, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int)

// checkGemmCase runs gemm (Dgemm or Sgemm) and the float64 reference (on the
// same, possibly float32, inputs) on one shape and compares.
// Tolerance: each entry is a k-term dot product of values in [-1,1]; with any
// summation order the error is below k*eps*sum|a||b| <= k^2*eps, plus the beta
// term; we allow 4*(k+2)*eps times the magnitude bound (k + |beta|*1), eps
// the unit roundoff doubled of the precision under test (2^-52 or 2^-23).
func checkGemmCase[T float](t *testing.T, rng *rand.Rand, gemm gemmFunc[T], tA, tB bool, m, n, k int, alpha, beta T, pad int) {
	t.Helper()
	ar, ac := m, k
	if tA {
		ar, ac = k, m
	}
	br, bc := k, n
	if tB {
		br, bc = n, k
	}
	lda, ldb, ldc := max(1, ac)+pad, max(1, bc)+pad, max(1, n)+pad
	// Random 0/1 element offsets: unaligned starts of A and B.
	a := randOf[T](rng, max(0, (ar-1)*lda+ac)+1)[rng.IntN(2):]
	b := randOf[T](rng, max(0, (br-1)*ldb+bc)+1)[rng.IntN(2):]
	clen := max(0, (m-1)*ldc+n)
	c, check := guardedOf[T](rng, clen)
	c0 := randOf[T](rng, clen)
	if beta == 0 {
		for i := range c0 {
			c0[i] = T(math.NaN()) // must be ignored
		}
	}
	copy(c, c0)
	want := widen(c0)
	if m > 0 && n > 0 {
		if alpha == 0 || k == 0 {
			refGemm(tA, tB, m, n, 0, float64(alpha), widen(a), lda, widen(b), ldb, float64(beta), want, ldc)
		} else {
			refGemm(tA, tB, m, n, k, float64(alpha), widen(a), lda, widen(b), ldb, float64(beta), want, ldc)
		}
	}
	gemm(tr(tA), tr(tB), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	check(t)
	scale := math.Abs(float64(alpha))*float64(k) + math.Abs(float64(beta)) + 1
	tol := 4 * float64(k+2) * epsOf[T]()
	for i := 0; i < m; i++ {
		for j := 0; j < ldc && i*ldc+j < clen; j++ {
			idx := i*ldc + j
			if j >= n {
				if !sameBits(c[idx], c0[idx]) {
					t.Fatalf("m=%d n=%d k=%d: padding C[%d,%d] changed", m, n, k, i, j)
				}
				continue
			}
			if !closeTo(float64(c[idx]), want[idx], tol, scale) {
				t.Fatalf("tA=%v tB=%v m=%d n=%d k=%d alpha=%v beta=%v: C[%d,%d] = %v, want %v", tA, tB, m, n, k, alpha, beta, i, j, c[idx], want[idx])
			}
		}
	}
}

func TestDgemmSmall(t *testing.T) {
	forEachPath(t, func(t *testing.T) { testGemmSmall(t, Dgemm) })
}

// testGemmSmall checks every size 0..64 (every fifth with -short) at the
// four transposes: square, and two skewed shapes per size.
func testGemmSmall[T float](t *testing.T, gemm gemmFunc[T]) {
	rng := rand.New(rand.NewPCG(1, 2))
	max := 64
	step := 1
	if testing.Short() {
		step = 5
	}
	for _, tA := range []bool{false, true} {
		for _, tB := range []bool{false, true} {
			for s := 0; s <= max; s += step {
				checkGemmCase(t, rng, gemm, tA, tB, s, s, s, 1, 0, 0)
				checkGemmCase(t, rng, gemm, tA, tB, s, rng.IntN(70), rng.IntN(70), -0.5, 2, rng.IntN(3))
				checkGemmCase(t, rng, gemm, tA, tB, rng.IntN(70), s, rng.IntN(300), 1.5, 1, rng.IntN(3))
			}
		}
	}
}

// TestDgemmThinRowsAlone checks that a row of C gets the same bits from
// dgemmThin alone as in a block of up to thinRows - 1 rows (what keeps a
// served answer independent of the batch it was predicted in), at every
// transpose, on a projection larger than a tile.
func TestDgemmThinRowsAlone(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(7, 8))
		// A wide C (axpys of n entries) and a narrow one (n < thinAxpyCols:
		// B transposed, dot products of length k).
		for _, sh := range [][2]int{{700, 300}, {10, 5000}} {
			n, k := sh[0], sh[1]
			for tt := 0; tt < 4; tt++ {
				ta, tb := tt&1 == 1, tt&2 == 2
				m := thinRows - 1
				a, b := randOf[float64](rng, m*k), randOf[float64](rng, n*k)
				lda, ldb := k, n
				if ta {
					lda = m
				}
				if tb {
					ldb = k
				}
				c0 := randOf[float64](rng, m*n)
				block := append([]float64(nil), c0...)
				Dgemm(tr(ta), tr(tb), m, n, k, 0.7, a, lda, b, ldb, 0.3, block, n)
				for i := 0; i < m; i++ {
					ai := a[i*k : (i+1)*k]
					if ta {
						ai = make([]float64, k)
						for p := range ai {
							ai[p] = a[p*lda+i]
						}
					}
					alone := append([]float64(nil), c0[i*n:(i+1)*n]...)
					Dgemm(blas.NoTrans, tr(tb), 1, n, k, 0.7, ai, k, b, ldb, 0.3, alone, n)
					for j := range alone {
						if !sameBits(alone[j], block[i*n+j]) {
							t.Fatalf("n=%d k=%d tA=%v tB=%v row %d col %d: alone %v, in the block %v", n, k, ta, tb, i, j, alone[j], block[i*n+j])
						}
					}
				}
			}
		}
	})
}

// TestDgemmThin checks the level-1 path of C with fewer than thinRows rows
// (dgemmThin) on shapes whose op(B) is larger than the caches, as in a
// one-row prediction, and at odd sizes, every transpose, beta 0 (NaN in C
// ignored), 1 and other, and padded strides.
func TestDgemmThin(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(5, 6))
		for _, m := range []int{1, 2, 3, 5, 8, 17, thinRows - 1} {
			for tt := 0; tt < 4; tt++ {
				ta, tb := tt&1 == 1, tt&2 == 2
				if m == 1 || m == 5 || m == thinRows-1 {
					checkGemmCase(t, rng, Dgemm, ta, tb, m, 2048, 784, 1, 0, 0)
				}
				checkGemmCase(t, rng, Dgemm, ta, tb, m, 37, 3, -0.5, 1, 2)
				checkGemmCase(t, rng, Dgemm, ta, tb, m, 1, 101, 2, 0.25, 1)
				checkGemmCase(t, rng, Dgemm, ta, tb, m, 513, 1, 0.7, 0, 3)
				checkGemmCase(t, rng, Dgemm, ta, tb, m, 10, 5000, 1, 0.5, 2) // FALKON's cached block times 10 outputs
			}
		}
	})
}

func TestDgemmLarge(t *testing.T) {
	forEachPath(t, func(t *testing.T) { testGemmLarge(t, Dgemm) })
}

// testGemmLarge checks shapes beyond one cache block, split over
// goroutines by rows, by columns and (the last two) along k.
func testGemmLarge[T float](t *testing.T, gemm gemmFunc[T]) {
	rng := rand.New(rand.NewPCG(3, 4))
	shapes := [][3]int{{300, 290, 600}, {1000, 37, 70}, {37, 1000, 70}, {150, 4200, 20}, {40, 24, 2000}, {5, 7, 20000}}
	if testing.Short() {
		shapes = shapes[1:5]
	}
	for _, sh := range shapes {
		for tt := 0; tt < 4; tt++ {
			checkGemmCase(t, rng, gemm, tt&1 == 1, tt&2 == 2, sh[0], sh[1], sh[2], 0.7, 0.3, 1)
		}
	}
}

func TestDgemmAlphaZeroAndNaN(t *testing.T) {
	forEachPath(t, func(t *testing.T) { testGemmNaN(t, Dgemm) })
}

// testGemmNaN: with alpha == 0, NaN in A and B does not reach C; otherwise
// NaN and Inf in A propagate to exactly the rows they touch.
func testGemmNaN[T float](t *testing.T, gemm gemmFunc[T]) {
	m, n, k := 9, 11, 7
	a := make([]T, m*k)
	b := make([]T, k*n)
	for i := range a {
		a[i] = T(math.NaN())
	}
	for i := range b {
		b[i] = T(math.NaN())
	}
	c := make([]T, m*n)
	for i := range c {
		c[i] = 2
	}
	gemm(blas.NoTrans, blas.NoTrans, m, n, k, 0, a, k, b, n, 0.5, c, n)
	for i, v := range c {
		if v != 1 {
			t.Fatalf("c[%d] = %v, want 1", i, v)
		}
	}
	for i := range a {
		a[i] = 1
	}
	for i := range b {
		b[i] = 1
	}
	a[2*k+3] = T(math.NaN())
	a[5*k+1] = T(math.Inf(1))
	gemm(blas.NoTrans, blas.NoTrans, m, n, k, 1, a, k, b, n, 0, c, n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			v := float64(c[i*n+j])
			switch i {
			case 2:
				if !math.IsNaN(v) {
					t.Fatalf("row 2: got %v, want NaN", v)
				}
			case 5:
				if !math.IsInf(v, 1) {
					t.Fatalf("row 5: got %v, want +Inf", v)
				}
			default:
				if v != float64(k) {
					t.Fatalf("C[%d,%d] = %v, want %d", i, j, v, k)
				}
			}
		}
	}
}

func BenchmarkDgemm(b *testing.B) {
	for _, p := range Paths() {
		for _, n := range []int{256, 1024} {
			b.Run(fmt.Sprintf("%s/n=%d", p, n), func(b *testing.B) {
				prev, _ := SetPath(p)
				defer SetPath(prev)
				rng := rand.New(rand.NewPCG(1, 1))
				x, y, c := randSlice(rng, n*n), randSlice(rng, n*n), make([]float64, n*n)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					Dgemm(blas.NoTrans, blas.NoTrans, n, n, n, 1, x, n, y, n, 0, c, n)
				}
				b.ReportMetric(2*float64(n)*float64(n)*float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}
