package purego

import "gonum.org/v1/gonum/blas"

// cholesky factors the n x n row-major lower triangle of A = L*L^T in place
// by a blocked right-looking algorithm. For each panel of cholBlock columns:
//
//	L11 = potf2(A11)                     (unblocked, on the diagonal block)
//	L21 = A21 * L11^{-T}                 (trsm from the right)
//	A22 = A22 - L21 * L21^T              (lower triangle only, via syrk)
//
// It returns -1 on success or the 0-based index of the first non-positive
// (or NaN) pivot and its value a_jj - sum_k l_jk^2, found exactly by the
// unblocked pass over the failing diagonal block. n >= 1.
func cholesky(n int, a []float64, lda int) (pivot int, value float64) {
	for j := 0; j < n; j += cholBlock {
		jb := min(cholBlock, n-j)
		if p, v := potf2(jb, a[j*lda+j:], lda); p >= 0 {
			return j + p, v
		}
		r := n - j - jb
		if r == 0 {
			break
		}
		a21 := a[(j+jb)*lda+j:]
		trsm(blas.Right, blas.Lower, blas.Trans, blas.NonUnit, r, jb, 1, a[j*lda+j:], lda, a21, lda)
		syrk(blas.Lower, blas.NoTrans, r, jb, -1, a21, lda, 1, a[(j+jb)*lda+j+jb:], lda)
	}
	return -1, 0
}
