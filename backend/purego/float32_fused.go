package purego

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"

	"github.com/zonal-ml/zonal/backend/internal/asm"
	"github.com/zonal-ml/zonal/backend/internal/check"
)

// Single-precision element-wise operations (issue 19): backend.Exper32 and
// backend.GaussianBlocker32.

// sgemm32 computes C = alpha op(A) op(B) + beta C in single precision for
// GaussianBlock32 (row-major, BLAS conventions, m, n, k >= 1; with beta = 0
// C is not read): package asm's float32 GEMM, as Backend.Sgemm.
var sgemm32 = asm.Sgemm

// gaussStrip32Bytes bounds the part of dst one strip of GaussianBlock32
// covers: the product for the strip is still in cache (L2) when the
// exponential is applied to it. A variable so tests can force many strips.
var gaussStrip32Bytes = 256 << 10

// gaussStrip32MinRows is the least number of rows of a strip, so the
// product's packing of y (once per strip) stays a small part of its cost
// (about 1/rows) however wide dst is.
const gaussStrip32MinRows = 32

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
// xnorm2 and ynorm2 hold the squared norms. x is taken in strips of rows
// (about gaussStrip32Bytes of dst each, at least 32 rows): for each strip
// the product -2 x_s y^T is computed in single precision straight into dst
// and turned into kernel values by asm.GaussianFromProduct32 while it is in
// cache, so dst is written by the product and rewritten once. Every step is
// float32: the squared distance loses about (d+3) 2^-24 (|x_i|^2 + |y_j|^2)
// absolutely to rounding (rounding below 0 is clamped to 0), and the
// exponential adds under 1 ulp. dst must not alias x or y; it is not read.
// Shape mismatches panic with an error wrapping zonal.ErrShape. It
// implements backend.GaussianBlocker32; call it through
// backend.GaussianBlock32.
func (Backend) GaussianBlock32(x, y blas32.General, xnorm2, ynorm2 []float32, gamma float32, dst blas32.General) {
	m, n, d := check.GaussianBlock32(x, y, xnorm2, ynorm2, dst)
	if m == 0 || n == 0 {
		return
	}
	rows := min(m, max(gaussStrip32MinRows, gaussStrip32Bytes/(4*n)))
	for i0 := 0; i0 < m; i0 += rows {
		r := min(rows, m-i0)
		c := dst.Data[i0*dst.Stride:]
		if d == 0 {
			// No coordinates: every distance is xnorm2[i] + ynorm2[j].
			for i := 0; i < r; i++ {
				clear(c[i*dst.Stride : i*dst.Stride+n])
			}
		} else {
			sgemm32(blas.NoTrans, blas.Trans, r, n, d, -2, x.Data[i0*x.Stride:], x.Stride, y.Data, y.Stride, 0, c, dst.Stride)
		}
		asm.GaussianFromProduct32(c, dst.Stride, r, n, xnorm2[i0:i0+r], ynorm2, gamma)
	}
}
