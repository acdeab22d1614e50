package purego

import (
	"gonum.org/v1/gonum/blas/blas32"

	"github.com/zonal-ml/zonal/backend/internal/asm"
	"github.com/zonal-ml/zonal/backend/internal/check"
)

// Single-precision element-wise operations: backend.Exper32 and
// backend.GaussianBlocker32, and the prepared centres of
// backend.GaussianPreparer32.

// Exp32 sets dst[i] = e^src[i] for i < len(src) in single precision with
// package asm's float32 vector exponential: below 1 ulp over the whole
// float32 range (at most 0.894 ulp on all 2^32 arguments), Exp32(NaN) = NaN, +Inf for
// x >= 88.72283935546875, 0 for x <= -103.97208404541016 and -Inf, gradual
// underflow through the subnormals in between. dst must be at least as long
// as src (else it panics with an error wrapping zonal.ErrShape) and may be
// src itself. It implements backend.Exper32; call it through backend.Exp32.
func (Backend) Exp32(dst, src []float32) {
	check.Exp32(dst, src)
	asm.Exp32(dst, src)
}

// GaussianBlock32 writes the single-precision Gaussian kernel block
//
//	dst[i,j] = exp(-gamma * max(0, xnorm2[i] + ynorm2[j] - 2 x_i.y_j))
//
// for the rows x_i of x (m x d) and y_j of y (n x d) into dst (m x n), where
// xnorm2 and ynorm2 hold the squared norms, in one pass: the product
// -2 x y^T comes from the float32 GEMM kernels (asm.Sgemm's packing and
// threading) and each finished strip is turned into kernel values by the
// float32 Gaussian epilogue while it is in cache (asm.GaussianBlock32).
// Every step is float32: the squared distance loses about (d+3) 2^-24
// (|x_i|^2 + |y_j|^2) absolutely to rounding (rounding below 0 is clamped
// to 0), and the exponential adds under 1 ulp. dst must not alias x or y;
// it is not read. Shape mismatches panic with an error wrapping
// zonal.ErrShape. It implements backend.GaussianBlocker32; call it through
// backend.GaussianBlock32.
func (Backend) GaussianBlock32(x, y blas32.General, xnorm2, ynorm2 []float32, gamma float32, dst blas32.General) {
	asm.GaussianBlock32General(x, y, xnorm2, ynorm2, gamma, dst)
}

// PrepareGaussian32 packs the centres y (n x d, squared norms ynorm2, kept
// and not copied) once for the float32 GEMM kernel of the active code path
// (asm.PrepareGaussian32); the GaussianBlock32 of the result packs only
// its own rows, runs on the calling goroutine and gives the bits of
// Backend.GaussianBlock32. It implements backend.GaussianPreparer32; call
// it through backend.PrepareGaussian32.
func (Backend) PrepareGaussian32(y blas32.General, ynorm2 []float32, gamma float32) interface {
	GaussianBlock32(x blas32.General, xnorm2 []float32, dst blas32.General)
	Bytes() int64
} {
	return asm.PrepareGaussian32General(y, ynorm2, gamma)
}
