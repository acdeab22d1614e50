package backend

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/gonum"

	"github.com/zonal-ml/zonal/backend/internal/asm"
	"github.com/zonal-ml/zonal/backend/internal/check"
)

// Single-precision operations, for float32 storage of kernel blocks.
// As for the fused operations, each has an optional interface that a backend
// implements when it has a faster way, and a function of the same name that
// algorithms call, which otherwise runs the generic implementation below.
// Only products and element-wise maps are single precision; factorisations,
// solves and reductions that decide accuracy stay float64 (Backend).
//
// Shape mismatches panic with an error wrapping zonal.ErrShape, as for the
// Backend methods.

// Float32Products is implemented by backends with single-precision level-3
// products; see Sgemm and Ssyrk.
type Float32Products interface {
	// Sgemm computes C = alpha op(A) op(B) + beta C, as Backend.Gemm.
	Sgemm(tA, tB blas.Transpose, alpha float32, a, b blas32.General, beta float32, c blas32.General)
	// Ssyrk computes the lower triangle of C = alpha op(A) op(A)^T + beta C,
	// as Backend.Syrk (op(A) = A^T for Trans); the upper triangle is
	// mirrored from it.
	Ssyrk(t blas.Transpose, alpha float32, a blas32.General, beta float32, c blas32.General)
}

// Exper32 is implemented by backends with their own single-precision vector
// exponential; see Exp32.
type Exper32 interface {
	Exp32(dst, src []float32)
}

// GaussianBlocker32 is implemented by backends that compute a
// single-precision block of the Gaussian kernel in one pass; see
// GaussianBlock32.
type GaussianBlocker32 interface {
	GaussianBlock32(x, y blas32.General, xnorm2, ynorm2 []float32, gamma float32, dst blas32.General)
}

var gonum32 gonum.Implementation

// Sgemm computes C = alpha op(A) op(B) + beta C in single precision. The
// generic implementation is gonum's.
func Sgemm(b Backend, tA, tB blas.Transpose, alpha float32, a, bm blas32.General, beta float32, c blas32.General) {
	if f, ok := b.(Float32Products); ok {
		f.Sgemm(tA, tB, alpha, a, bm, beta, c)
		return
	}
	m, n, k := check.Gemm32(tA, tB, a, bm, c)
	if m == 0 || n == 0 {
		return
	}
	if k == 0 {
		// gonum rejects zero-length views; C = beta C.
		scale32(beta, c)
		return
	}
	gonum32.Sgemm(check.NormT(tA), check.NormT(tB), m, n, k, alpha, a.Data, max(a.Stride, 1), bm.Data, max(bm.Stride, 1), beta, c.Data, c.Stride)
}

// Ssyrk computes C = alpha op(A) op(A)^T + beta C in single precision, both
// triangles (the upper mirrored from the lower), with op(A) = A for NoTrans
// (C = A A^T) and A^T for Trans (C = A^T A). The generic implementation is
// gonum's.
func Ssyrk(b Backend, t blas.Transpose, alpha float32, a blas32.General, beta float32, c blas32.General) {
	if f, ok := b.(Float32Products); ok {
		f.Ssyrk(t, alpha, a, beta, c)
		return
	}
	n, k := check.Syrk32(t, a, c)
	if n == 0 {
		return
	}
	if k == 0 {
		scale32(beta, c)
		return
	}
	gonum32.Ssyrk(blas.Lower, check.NormT(t), n, k, alpha, a.Data, max(a.Stride, 1), beta, c.Data, c.Stride)
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			c.Data[i*c.Stride+j] = c.Data[j*c.Stride+i]
		}
	}
}

func scale32(beta float32, c blas32.General) {
	for i := 0; i < c.Rows; i++ {
		row := c.Data[i*c.Stride : i*c.Stride+c.Cols]
		for j := range row {
			if beta == 0 {
				row[j] = 0
			} else {
				row[j] *= beta
			}
		}
	}
}

// Exp32 sets dst[i] = e^src[i] for i < len(src); dst must be at least as
// long and may be src itself. The generic implementation is zonal's float32
// vector exponential (below 1 ulp over the whole float32 range; Exp32(NaN)
// = NaN, +Inf above 88.7228, +0 below -103.972), the same code and bits
// whatever the backend.
func Exp32(b Backend, dst, src []float32) {
	if f, ok := b.(Exper32); ok {
		f.Exp32(dst, src)
		return
	}
	check.Exp32(dst, src)
	asm.Exp32(dst, src)
}

// GaussianBlock32 is GaussianBlock in single precision:
//
//	dst[i,j] = exp(-gamma * max(0, xnorm2[i] + ynorm2[j] - 2 x_i.y_j)).
//
// The generic implementation computes -2 x y^T by Sgemm and applies the
// exponential after, by the same vector kernel as Exp32.
func GaussianBlock32(b Backend, x, y blas32.General, xnorm2, ynorm2 []float32, gamma float32, dst blas32.General) {
	if f, ok := b.(GaussianBlocker32); ok {
		f.GaussianBlock32(x, y, xnorm2, ynorm2, gamma, dst)
		return
	}
	m, n, _ := check.GaussianBlock32(x, y, xnorm2, ynorm2, dst)
	if m == 0 || n == 0 {
		return
	}
	Sgemm(b, blas.NoTrans, blas.Trans, -2, x, y, 0, dst)
	asm.GaussianFromProduct32(dst.Data, dst.Stride, m, n, xnorm2, ynorm2, gamma)
}
