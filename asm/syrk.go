package asm

import "gonum.org/v1/gonum/blas"

// Dsyrk computes the ul triangle of the n x n row-major symmetric
//
//	C = alpha*A*A^T + beta*C   (t == NoTrans, A is n x k)
//	C = alpha*A^T*A + beta*C   (t == Trans,   A is k x n)
//
// with the argument conventions of gonum's blas.Float64.Dsyrk. Only the tiles
// of the micro-kernel that meet the ul triangle are computed (about half the
// flops of the full product); the other strict triangle is neither read nor
// written. beta == 0 ignores the old contents of C; alpha == 0 or k == 0
// does not read A.
func Dsyrk(ul blas.Uplo, t blas.Transpose, n, k int, alpha float64, a []float64, lda int, beta float64, c []float64, ldc int) {
	tri := lowerC
	switch ul {
	case blas.Lower:
	case blas.Upper:
		tri = upperC
	default:
		panic(errBadUplo)
	}
	ta := isTrans(t)
	if n < 0 {
		panic(errNLT0)
	}
	if k < 0 {
		panic(errKLT0)
	}
	ar, ac := n, k
	if ta {
		ar, ac = k, n
	}
	if lda < max(1, ac) {
		panic(errBadLdA)
	}
	if ldc < max(1, n) {
		panic(errBadLdC)
	}
	if n == 0 {
		return
	}
	if len(a) < lda*(ar-1)+ac && ar > 0 {
		panic(errShortA)
	}
	if len(c) < ldc*(n-1)+n {
		panic(errShortC)
	}
	if alpha == 0 || k == 0 {
		scaleC(tri, n, n, beta, c, ldc)
		return
	}
	g := gemmProblem{kern: cur().gemm, tA: ta, tB: !ta, m: n, n: n, k: k, alpha: alpha, beta: beta,
		a: a, lda: lda, b: a, ldb: lda, c: c, ldc: ldc, tri: tri}
	g.run()
}

// SyrkFull computes the full symmetric C = alpha*A^T*A + beta*C (t == Trans)
// or alpha*A*A^T + beta*C (t == NoTrans): the lower triangle by Dsyrk, then
// mirrored into the upper one. C must be symmetric on entry when beta != 0.
func SyrkFull(t blas.Transpose, n, k int, alpha float64, a []float64, lda int, beta float64, c []float64, ldc int) {
	Dsyrk(blas.Lower, t, n, k, alpha, a, lda, beta, c, ldc)
	mirrorLower(n, c, ldc)
}

// mirrorLower copies the strict lower triangle of C into the upper one, in
// square blocks so both the rows read and the rows written stay in cache.
func mirrorLower(n int, c []float64, ldc int) {
	const bs = 64
	for i0 := 0; i0 < n; i0 += bs {
		i1 := min(i0+bs, n)
		for j0 := 0; j0 <= i0; j0 += bs {
			j1 := min(j0+bs, n)
			for i := i0; i < i1; i++ {
				for j := j0; j < min(j1, i); j++ {
					c[j*ldc+i] = c[i*ldc+j]
				}
			}
		}
	}
}
