package asm

import (
	"gonum.org/v1/gonum/blas/blas32"

	"github.com/zonal-ml/zonal/backend/internal/check"
)

// The float32 Gaussian blocks on gonum's blas32 views, checked once per
// call: the one implementation of backend.GaussianBlocker32 and
// backend.GaussianPreparer32 that both backends (purego and netlib) use,
// so that a float32 K_nM has the same bits on both, cached or streamed.

// GaussianBlock32General is GaussianBlock32 on blas32 views: dst (m x n) =
// the Gaussian block of the rows of x (m x d) against those of y (n x d).
// Shape mismatches panic with an error wrapping zonal.ErrShape.
func GaussianBlock32General(x, y blas32.General, xnorm2, ynorm2 []float32, gamma float32, dst blas32.General) {
	m, n, d := check.GaussianBlock32(x, y, xnorm2, ynorm2, dst)
	GaussianBlock32(dst.Data, dst.Stride, x.Data, x.Stride, y.Data, y.Stride, m, n, d, xnorm2, ynorm2, gamma)
}

// PreparedGaussian32 is GaussianCentres32 on blas32 views (the backends'
// backend.GaussianCentres32): y and ynorm2 are kept for the shape checks of
// every block.
type PreparedGaussian32 struct {
	c  *GaussianCentres32
	y  blas32.General
	yn []float32
}

// PrepareGaussian32General packs the centres y (n x d, squared norms
// ynorm2, kept and not copied) once (PrepareGaussian32). Shape mismatches
// panic with an error wrapping zonal.ErrShape.
func PrepareGaussian32General(y blas32.General, ynorm2 []float32, gamma float32) PreparedGaussian32 {
	n, d := check.GaussianCentres32(y, ynorm2)
	return PreparedGaussian32{c: PrepareGaussian32(y.Data, max(y.Stride, 1), n, d, ynorm2, gamma), y: y, yn: ynorm2}
}

// GaussianBlock32 writes the block of the rows of x (m x d, squared norms
// xnorm2) against the prepared centres into dst (m x n) on the calling
// goroutine, with GaussianBlock32General's bits. Shape mismatches panic
// with an error wrapping zonal.ErrShape.
func (p PreparedGaussian32) GaussianBlock32(x blas32.General, xnorm2 []float32, dst blas32.General) {
	m, _, _ := check.GaussianBlock32(x, p.y, xnorm2, p.yn, dst)
	p.c.Block(dst.Data, dst.Stride, x.Data, max(x.Stride, 1), m, xnorm2)
}

// Bytes is the size of the packed copy of the centres.
func (p PreparedGaussian32) Bytes() int64 { return p.c.PackedBytes() }
