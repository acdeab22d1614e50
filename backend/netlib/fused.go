//go:build netlib

package netlib

import (
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/zonal-ml/zonal/backend/internal/asm"
	"github.com/zonal-ml/zonal/backend/internal/check"
)

// GaussianBlock writes the float64 Gaussian kernel block of the rows of x
// (m x d) against those of y (n x d) into dst (m x n), xnorm2 and ynorm2
// holding the squared norms, with zonal's own fused kernel (package asm's
// GEMM kernels with the Gaussian epilogue, the purego backend's), not
// cblas_dgemm followed by the exponential, as GaussianBlock32 does for
// float32 and for the same reason. Measured on the 2-core AMD EPYC
// (2026-12-03, one run each, side by side): one streamed float64 FALKON
// pass at n = 20000, d = 28, M = 10^4 in blocks of 64 rows per worker
// (solvers' BenchmarkKnM64Pass) took 1.44 ns per K_nM entry through
// cblas_dgemm and 0.70 through the fused kernel, and a 2000 x 2000 block
// on 784 features (kernels' BenchmarkMatrixIntoGaussian) 77 to 82 ms
// against 42 to 50 ms. It also gives float64 kernel blocks the same bits
// on both backends. Shape mismatches panic with an error wrapping
// zonal.ErrShape. It implements backend.GaussianBlocker; call it through
// backend.GaussianBlock.
func (Backend) GaussianBlock(x, y blas64.General, xnorm2, ynorm2 []float64, gamma float64, dst blas64.General) {
	m, n, d := check.GaussianBlock(x, y, xnorm2, ynorm2, dst)
	asm.GaussianBlock(dst.Data, dst.Stride, x.Data, x.Stride, y.Data, y.Stride, m, n, d, xnorm2, ynorm2, gamma)
}
