package purego

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
	"gonum.org/v1/gonum/blas/testblas"
)

// gonum's own BLAS test suites, run against the adapter whose Dgemm, Dsyrk,
// Ddot, Daxpy and Dscal are zonal's.

func TestDgemm(t *testing.T) { testblas.TestDgemm(t, Implementation{}) }
func TestDsyrk(t *testing.T) { testblas.DsyrkTest(t, Implementation{}) }
func TestDdot(t *testing.T)  { testblas.DdotTest(t, Implementation{}) }
func TestDaxpy(t *testing.T) { testblas.DaxpyTest(t, Implementation{}) }
func TestDscal(t *testing.T) { testblas.DscalTest(t, Implementation{}) }
func TestDnrm2(t *testing.T) { testblas.Dnrm2Test(t, Implementation{}) }

// TestDsyrkLarge checks the recursive Dsyrk beyond testblas's small sizes:
// both triangles and transposes, against gonum's Dsyrk (tolerance
// 2*gamma_(k+2)*(|A||A^T| + |C|) entrywise; entries in [-1, 1] bound that by
// 2*gamma_(k+2)*(k+1)), and the other strict triangle must stay untouched.
func TestDsyrkLarge(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, sh := range [][2]int{{65, 3}, {130, 70}, {257, 33}, {200, 1}} {
		n, k := sh[0], sh[1]
		for _, ul := range []blas.Uplo{blas.Lower, blas.Upper} {
			for _, tr := range []blas.Transpose{blas.NoTrans, blas.Trans} {
				lda := k + 1
				if tr == blas.Trans {
					lda = n + 1
				}
				a := make([]float64, max(n, k)*lda)
				for i := range a {
					a[i] = 2*rng.Float64() - 1
				}
				ldc := n + 2
				c := make([]float64, n*ldc)
				for i := range c {
					c[i] = 2*rng.Float64() - 1
				}
				want := append([]float64(nil), c...)
				(gonum.Implementation{}).Dsyrk(ul, tr, n, k, 0.5, a, lda, -1.5, want, ldc)
				Implementation{}.Dsyrk(ul, tr, n, k, 0.5, a, lda, -1.5, c, ldc)
				tol := 2 * float64(k+2) * 0x1p-53 / (1 - float64(k+2)*0x1p-53) * float64(k+1)
				for i := range c {
					if math.Abs(c[i]-want[i]) > tol {
						t.Fatalf("n=%d k=%d ul=%c t=%c: c[%d] = %v, want %v", n, k, ul, tr, i, c[i], want[i])
					}
				}
			}
		}
	}
}
