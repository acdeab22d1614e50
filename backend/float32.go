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

// GaussianCentres32 is the y side of single-precision Gaussian blocks
// prepared once (by PrepareGaussian32) for many blocks against the same
// centres, such as every block of every CG pass of a float32 FALKON fit.
// Implementations are safe for concurrent use. It is an alias of an
// unnamed interface so that backends outside this package (which it
// imports) can return it without importing it.
type GaussianCentres32 = interface {
	// GaussianBlock32 writes the block of the rows of x (m x d) against the
	// prepared centres (n x d) into dst (m x n), xnorm2 holding the m
	// squared norms of x: GaussianBlock32(b, x, y, xnorm2, ynorm2, gamma,
	// dst) for the prepared y, ynorm2 and gamma. Shape mismatches panic
	// with an error wrapping zonal.ErrShape.
	GaussianBlock32(x blas32.General, xnorm2 []float32, dst blas32.General)
	// Bytes is the memory the preparation holds beyond y itself (a packed
	// copy of y, 0 when there is none).
	Bytes() int64
}

// GaussianPreparer32 is implemented by backends that prepare the centres
// of single-precision Gaussian blocks; see PrepareGaussian32.
type GaussianPreparer32 interface {
	PrepareGaussian32(y blas32.General, ynorm2 []float32, gamma float32) GaussianCentres32
}

// PrepareGaussian32 prepares the centres y (n x d, squared norms ynorm2,
// kept and not copied: they must not change) for GaussianBlock32 blocks
// with gamma. A backend implementing GaussianPreparer32 does it its way
// (purego packs y once for its float32 GEMM kernel, so a block computes
// only its own rows' packing, and runs each block on the calling
// goroutine); otherwise every block is GaussianBlock32(b, ...) on the
// prepared arguments. Shape mismatches of y and ynorm2 panic with an error
// wrapping zonal.ErrShape.
func PrepareGaussian32(b Backend, y blas32.General, ynorm2 []float32, gamma float32) GaussianCentres32 {
	if f, ok := b.(GaussianPreparer32); ok {
		return f.PrepareGaussian32(y, ynorm2, gamma)
	}
	check.GaussianCentres32(y, ynorm2)
	return genericCentres32{b: b, y: y, yn: ynorm2, gamma: gamma}
}

type genericCentres32 struct {
	b     Backend
	y     blas32.General
	yn    []float32
	gamma float32
}

func (c genericCentres32) GaussianBlock32(x blas32.General, xnorm2 []float32, dst blas32.General) {
	GaussianBlock32(c.b, x, c.y, xnorm2, c.yn, c.gamma, dst)
}

func (c genericCentres32) Bytes() int64 { return 0 }

// RowProducts32 is implemented by backends with their own mixed-precision
// products of float32 rows with float64 vectors; see DotRows32 and
// AxpyRows32.
type RowProducts32 interface {
	DotRows32(dst []float64, k blas32.General, v []float64)
	AxpyRows32(acc []float64, k blas32.General, t []float64)
}

// DotRows32 sets dst[i] = sum_j float64(k[i,j]) v[j] for the k.Rows x
// k.Cols float32 matrix k (len(dst) = k.Rows, len(v) = k.Cols): the
// product of float32 rows (a kernel block) with a float64 vector, every
// entry widened exactly and the sums in float64, without a float64 copy of
// k. The generic implementation is zonal's vector kernel (float64 FMAs on
// the assembly paths), the same code and bits whatever the backend. Shape
// mismatches panic with an error wrapping zonal.ErrShape.
func DotRows32(b Backend, dst []float64, k blas32.General, v []float64) {
	if f, ok := b.(RowProducts32); ok {
		f.DotRows32(dst, k, v)
		return
	}
	check.Rows32(k, len(dst), len(v))
	asm.DotRows32(dst, k.Data, k.Stride, v)
}

// AxpyRows32 adds sum_i t[i] float64(k[i,j]) into acc[j] (len(t) = k.Rows,
// len(acc) = k.Cols): acc += k^T t in float64 for float32 rows k, as
// DotRows32. Shape mismatches panic with an error wrapping zonal.ErrShape.
func AxpyRows32(b Backend, acc []float64, k blas32.General, t []float64) {
	if f, ok := b.(RowProducts32); ok {
		f.AxpyRows32(acc, k, t)
		return
	}
	check.Rows32(k, len(t), len(acc))
	asm.AxpyRows32(acc, k.Data, k.Stride, t)
}
