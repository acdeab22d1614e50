//go:build netlib

package netlib

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"

	"github.com/zonal-ml/zonal/backend/internal/check"
)

// Single-precision products (backend.Float32Products) through OpenBLAS's
// cblas_sgemm and cblas_ssyrk, with the conventions of Gemm and Syrk.

// Sgemm computes C = alpha*op(A)*op(B) + beta*C in single precision
// (cblas_sgemm). With beta == 0, C is not read. Shape mismatches panic with
// an error wrapping zonal.ErrShape. It implements backend.Float32Products;
// call it through backend.Sgemm.
func (Backend) Sgemm(tA, tB blas.Transpose, alpha float32, a, b blas32.General, beta float32, c blas32.General) {
	m, n, k := check.Gemm32(tA, tB, a, b, c)
	if m == 0 || n == 0 {
		return
	}
	if k == 0 || alpha == 0 || beta == 0 {
		// C = beta C; with beta == 0 this also clears NaN before OpenBLAS
		// runs, as Gemm does, whatever the library version does with it.
		check.Scale(check.Full, m, n, beta, c.Data, c.Stride)
		if k == 0 || alpha == 0 {
			return
		}
	}
	impl.Sgemm(check.NormT(tA), check.NormT(tB), m, n, k, alpha, a.Data, a.Stride, b.Data, b.Stride, beta, c.Data, c.Stride)
}

// Ssyrk computes the full symmetric C = alpha*A^T*A + beta*C (t == Trans) or
// alpha*A*A^T + beta*C (t == NoTrans) in single precision by cblas_ssyrk on
// the lower triangle, mirrored into the upper one. Only the lower triangle
// of C is read. It implements backend.Float32Products; call it through
// backend.Ssyrk.
func (Backend) Ssyrk(t blas.Transpose, alpha float32, a blas32.General, beta float32, c blas32.General) {
	n, k := check.Syrk32(t, a, c)
	if n == 0 {
		return
	}
	if k == 0 || alpha == 0 || beta == 0 {
		check.Scale(check.Lower, n, n, beta, c.Data, c.Stride)
	}
	if k != 0 && alpha != 0 {
		impl.Ssyrk(blas.Lower, check.NormT(t), n, k, alpha, a.Data, a.Stride, beta, c.Data, c.Stride)
	}
	check.MirrorLower32(c)
}
