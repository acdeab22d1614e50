package asm

import (
	"gonum.org/v1/gonum/blas"

	"github.com/zonal-ml/zonal/backend/internal/check"
)

// Dsyrk computes the ul triangle of the n x n row-major symmetric
//
//	C = alpha*A*A^T + beta*C   (t == NoTrans, A is n x k)
//	C = alpha*A^T*A + beta*C   (t == Trans,   A is k x n)
//
// with the argument conventions of gonum's blas.Float64.Dsyrk. Only the tiles
// of the micro-kernel that meet the ul triangle are computed (about half the
// flops of the full product); the other strict triangle is neither read nor
// written. beta == 0 ignores the old contents of C; alpha == 0 or k == 0
// does not read A. The arguments are validated by the caller.
func Dsyrk(ul blas.Uplo, t blas.Transpose, n, k int, alpha float64, a []float64, lda int, beta float64, c []float64, ldc int) {
	syrk(cur().gemm, ul, t, n, k, alpha, a, lda, beta, c, ldc)
}

// syrk is Dsyrk and Ssyrk with the micro-kernel kern.
func syrk[T float](kern *gemmKernel[T], ul blas.Uplo, t blas.Transpose, n, k int, alpha T, a []T, lda int, beta T, c []T, ldc int) {
	tri := lowerC
	if ul == blas.Upper {
		tri = upperC
	}
	ta := isTrans(t)
	if n == 0 {
		return
	}
	if alpha == 0 || k == 0 {
		check.Scale(tri, n, n, beta, c, ldc)
		return
	}
	g := gemmProblem[T]{kern: kern, tA: ta, tB: !ta, m: n, n: n, k: k, alpha: alpha, beta: beta,
		a: a, lda: lda, b: a, ldb: lda, c: c, ldc: ldc, tri: tri}
	g.run()
}
