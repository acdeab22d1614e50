package purego

// This file holds every low-level compute kernel the pure-Go backend uses.
// Each function is small, unexported and works on raw row-major slices with
// BLAS conventions (leading dimensions, increments). The bodies call the
// SIMD kernels of backend/internal/asm (AVX-512, AVX2+FMA or pure Go, chosen
// once at init; ZONAL_NOASM=1 or the noasm build tag force pure Go) where asm
// has them, and gonum's pure-Go BLAS otherwise, so the drivers in the rest of
// the package (blocked Cholesky, the blas.Float64 adapter, the Backend
// methods) stay unchanged.
//
// Preconditions, checked by the callers and not here: every dimension is
// >= 1, leading dimensions are >= the row length, slices are long enough,
// increments are non-zero. BLAS semantics apply: with beta == 0 the output is
// not read (NaN there is ignored); otherwise NaN and Inf propagate.

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"

	"github.com/zonal-ml/zonal/backend/internal/asm"
)

// impl is gonum's pure-Go BLAS, used for the cases asm does not cover.
var impl gonum.Implementation

// cholBlock is the panel width of the blocked right-looking Cholesky.
const cholBlock = 96

// gemm computes C = alpha*op(A)*op(B) + beta*C, where op(A) is m x k, op(B)
// is k x n and C is m x n (row-major). m, n, k >= 1.
func gemm(tA, tB blas.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	asm.Dgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// syrk computes the ul triangle (diagonal included) of
// C = alpha*op(A)*op(A)^T + beta*C, where C is n x n, op(A) = A (n x k) for
// t == NoTrans and A^T (A is k x n) for t == Trans. The other strict triangle
// of C is neither read nor written. asm.Dsyrk computes only the micro-kernel
// tiles that meet the triangle (about n^2 k flops instead of GEMM's 2 n^2 k)
// at any order, in one pass over A. n, k >= 1.
func syrk(ul blas.Uplo, t blas.Transpose, n, k int, alpha float64, a []float64, lda int, beta float64, c []float64, ldc int) {
	asm.Dsyrk(ul, t, n, k, alpha, a, lda, beta, c, ldc)
}

// gemv computes y = alpha*op(A)*x + beta*y for the m x n matrix A. m, n >= 1.
func gemv(t blas.Transpose, m, n int, alpha float64, a []float64, lda int, x []float64, incX int, beta float64, y []float64, incY int) {
	impl.Dgemv(t, m, n, alpha, a, lda, x, incX, beta, y, incY)
}

// trsm solves op(A)*X = alpha*B (side == Left) or X*op(A) = alpha*B
// (side == Right) in place in the m x n matrix B, A triangular. m, n >= 1.
func trsm(side blas.Side, ul blas.Uplo, tA blas.Transpose, diag blas.Diag, m, n int, alpha float64, a []float64, lda int, b []float64, ldb int) {
	switch {
	case side == blas.Left && ul == blas.Lower:
		asm.DtrsmLL(tA, diag, m, n, alpha, a, lda, b, ldb)
	case side == blas.Left && ul == blas.Upper:
		asm.DtrsmLU(tA, diag, m, n, alpha, a, lda, b, ldb)
	case side == blas.Right && ul == blas.Lower && tA != blas.NoTrans && diag == blas.NonUnit:
		asm.DtrsmRLT(m, n, alpha, a, lda, b, ldb)
	default:
		impl.Dtrsm(side, ul, tA, diag, m, n, alpha, a, lda, b, ldb)
	}
}

// potf2 factors the n x n row-major lower triangle of A as L*L^T in place
// (unblocked, left-looking: row i of L is contiguous, so every inner product
// is a unit-stride dot). It returns -1 on success, or the 0-based index of the
// first pivot that is not positive (or is NaN) together with the pivot value
// a_jj - sum_k l_jk^2; that value is also stored at A[j,j]. n >= 1.
func potf2(n int, a []float64, lda int) (pivot int, value float64) {
	// Recursive: the off-diagonal work of the halves runs in asm's GEMM and
	// SYRK; the leaves are the same left-looking loop with asm's dot.
	return asm.Dpotrf(n, a, lda)
}

// dot returns sum_i x[i*incX] * y[i*incY] (negative increments start from
// the end, as in BLAS). n >= 1.
func dot(n int, x []float64, incX int, y []float64, incY int) float64 {
	return asm.DdotInc(n, x, incX, y, incY)
}

// axpy computes y += alpha*x. n >= 1.
func axpy(n int, alpha float64, x []float64, incX int, y []float64, incY int) {
	asm.DaxpyInc(n, alpha, x, incX, y, incY)
}

// scal computes x *= alpha for x with a positive increment. n >= 1.
func scal(n int, alpha float64, x []float64, incX int) {
	asm.DscalInc(n, alpha, x, incX)
}

// nrm2 returns the Euclidean norm of x without undue overflow or underflow
// for a positive increment. n >= 1.
func nrm2(n int, x []float64, incX int) float64 {
	return impl.Dnrm2(n, x, incX)
}
