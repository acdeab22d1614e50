//go:build netlib

package netlib

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"

	"github.com/zonal-ml/zonal/backend/internal/asm"
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

// GaussianBlock32 writes the single-precision Gaussian kernel block of the
// rows of x (m x d) against those of y (n x d) into dst (m x n), xnorm2 and
// ynorm2 holding the squared norms, with zonal's own fused float32 kernel
// (package asm's GEMM kernels with the Gaussian epilogue: the same kernel,
// and so the same bits, as the purego backend), not cblas_sgemm. Its
// prepared form (PrepareGaussian32) must give the same bits, so that a
// float32 FALKON fit does not depend on whether K_nM is cached or streamed,
// and the prepared form is where OpenBLAS loses: a streamed pass computes
// many thin blocks (about 512 KiB each, 13 rows at M = 10^4) on every
// worker at once, and through cblas_sgemm those took 8.8 s for 8 passes at
// n = 20000, d = 28, M = 10^4 (4.4 s with OPENBLAS_NUM_THREADS=1, OpenBLAS's
// threads competing with the workers' otherwise) against 2.6 s with the
// centres packed once (solvers' TestFalkon32StreamedPassProfile, 2-core
// AMD EPYC). Shape mismatches panic with an error wrapping zonal.ErrShape.
// It implements backend.GaussianBlocker32; call it through
// backend.GaussianBlock32.
func (Backend) GaussianBlock32(x, y blas32.General, xnorm2, ynorm2 []float32, gamma float32, dst blas32.General) {
	asm.GaussianBlock32General(x, y, xnorm2, ynorm2, gamma, dst)
}

// PrepareGaussian32 packs the centres y (n x d, squared norms ynorm2, kept
// and not copied) once for the fused float32 kernel of GaussianBlock32; the
// GaussianBlock32 of the result packs only its own rows, runs on the
// calling goroutine and gives the bits of Backend.GaussianBlock32. It
// implements backend.GaussianPreparer32; call it through
// backend.PrepareGaussian32.
func (Backend) PrepareGaussian32(y blas32.General, ynorm2 []float32, gamma float32) interface {
	GaussianBlock32(x blas32.General, xnorm2 []float32, dst blas32.General)
	Bytes() int64
} {
	return asm.PrepareGaussian32General(y, ynorm2, gamma)
}
