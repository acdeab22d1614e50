package asm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// forEachSgemmKernel runs f for every code path, every float32 micro-kernel
// registered for it (the default and the alternatives) and 1 and 2
// goroutines per call.
func forEachSgemmKernel(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	forEachPath(t, func(t *testing.T) {
		for _, k := range sgemmKernels[Path()] {
			for _, th := range []int{1, 2} {
				t.Run(fmt.Sprintf("%s/threads=%d", k.name, th), func(t *testing.T) {
					prevK := setSgemmKernel(k)
					defer setSgemmKernel(prevK)
					prevT := setThreads(th)
					defer setThreads(prevT)
					f(t)
				})
			}
		}
	})
}

// Every code path has float32 kernels, and each kernel's blocking is
// consistent (mc a multiple of mr, nc of nr), as block and macro assume.
func TestSgemmKernels(t *testing.T) {
	for _, p := range Paths() {
		ks := sgemmKernels[p]
		if len(ks) == 0 {
			t.Fatalf("path %s has no float32 GEMM kernel", p)
		}
		for _, k := range ks {
			if k.mc%k.mr != 0 || k.nc%k.nr != 0 || k.kc <= 0 {
				t.Errorf("%s: mr=%d nr=%d kc=%d mc=%d nc=%d", k.name, k.mr, k.nr, k.kc, k.mc, k.nc)
			}
		}
	}
}

// The float32 tests are the float64 ones (gemm_test.go, chol_test.go) with
// float32 data and the float32 error bound 4 (k+2) 2^-23 times the
// magnitude bound; the reference is the triple loop in float64 on the same
// float32 inputs. Each checks the guard regions around C, the padding
// between its rows (non-unit strides), unaligned starts of A, B and C, and
// that beta == 0 ignores NaN in C.
func TestSgemmSmall(t *testing.T) {
	forEachSgemmKernel(t, func(t *testing.T) { testGemmSmall(t, Sgemm) })
}

func TestSgemmLarge(t *testing.T) {
	forEachSgemmKernel(t, func(t *testing.T) { testGemmLarge(t, Sgemm) })
}

func TestSgemmAlphaZeroAndNaN(t *testing.T) {
	forEachSgemmKernel(t, func(t *testing.T) { testGemmNaN(t, Sgemm) })
}

func TestSsyrk(t *testing.T) {
	forEachSgemmKernel(t, func(t *testing.T) { testSyrk(t, Ssyrk) })
}

// TestSgemmMatchesGeneric compares every assembly kernel with the Go
// fallback (the generic path's 4x4 kernel) on the same inputs: random shapes
// up to 64 in each dimension at the four transposes, and a few beyond one
// cache block. The two sum in different orders (FMA against separate
// multiply and add, other kc), so they agree to twice the error bound of
// checkGemmCase, 8 (k+2) 2^-23 (|alpha| k + |beta| + 1).
func TestSgemmMatchesGeneric(t *testing.T) {
	generic := sgemmKernels["generic"][0]
	forEachSgemmKernel(t, func(t *testing.T) {
		kern := sgemmKernel()
		if kern == generic {
			t.Skip("the fallback itself")
		}
		rng := rand.New(rand.NewPCG(7, 8))
		shapes := [][3]int{{257, 300, 190}, {96, 64, 513}, {1, 1000, 3}}
		for range 60 {
			shapes = append(shapes, [3]int{rng.IntN(65), rng.IntN(65), rng.IntN(65)})
		}
		for _, sh := range shapes {
			m, n, k := sh[0], sh[1], sh[2]
			for tt := 0; tt < 4; tt++ {
				tA, tB := tt&1 == 1, tt&2 == 2
				ar, ac, br, bc := m, k, k, n
				if tA {
					ar, ac = k, m
				}
				if tB {
					br, bc = n, k
				}
				lda, ldb, ldc := max(1, ac)+rng.IntN(3), max(1, bc)+rng.IntN(3), max(1, n)+rng.IntN(3)
				a := randOf[float32](rng, max(0, (ar-1)*lda+ac)+1)[rng.IntN(2):]
				b := randOf[float32](rng, max(0, (br-1)*ldb+bc)+1)[rng.IntN(2):]
				c0 := randOf[float32](rng, max(0, (m-1)*ldc+n))
				const alpha, beta = 1.25, -0.5
				want := append([]float32(nil), c0...)
				gemm(generic, tr(tA), tr(tB), m, n, k, alpha, a, lda, b, ldb, beta, want, ldc)
				got := append([]float32(nil), c0...)
				Sgemm(tr(tA), tr(tB), m, n, k, alpha, a, lda, b, ldb, beta, got, ldc)
				tol := 8 * float64(k+2) * 0x1p-23 * (alpha*float64(k) + 0.5 + 1)
				for i := range got {
					if d := math.Abs(float64(got[i]) - float64(want[i])); !(d <= tol) {
						t.Fatalf("%s m=%d n=%d k=%d tA=%v tB=%v: C[%d] = %v, fallback %v", kern.name, m, n, k, tA, tB, i, got[i], want[i])
					}
				}
			}
		}
	})
}
