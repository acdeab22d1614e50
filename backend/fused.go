package backend

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/zonal-ml/zonal/backend/internal/asm"
	"github.com/zonal-ml/zonal/backend/internal/check"
	"github.com/zonal-ml/zonal/backend/secular"
)

// Fused and element-wise operations beyond the Backend interface. Each has an
// optional interface, which a backend implements when it has a faster way,
// and a function of the same name that algorithms call: it asserts the
// interface on the backend and otherwise runs the one generic implementation
// written below (the Backend's own Gemm where a product is needed, and
// zonal's vector kernels for the element-wise part, which are the same code
// and give the same bits whatever the backend). A nil Backend is allowed
// where no product is involved (Exp, GegenbauerRecurrence, AxpySlice, SumSq)
// and selects the generic implementation.
//
// Arguments are validated once: by these functions on the generic path, and
// by the implementation on the optional-interface path (with the same
// checks). A shape mismatch is a programming error and panics with an error
// wrapping zonal.ErrShape, as for the Backend methods.

// GaussianBlocker is implemented by backends that compute a block of the
// Gaussian kernel in one pass; see GaussianBlock.
type GaussianBlocker interface {
	GaussianBlock(x, y blas64.General, xnorm2, ynorm2 []float64, gamma float64, dst blas64.General)
}

// Exper is implemented by backends with their own vector exponential; see Exp.
type Exper interface {
	Exp(dst, src []float64)
}

// GegenbauerRecurrer is implemented by backends with their own evaluation of
// the Gegenbauer recurrence; see GegenbauerRecurrence.
type GegenbauerRecurrer interface {
	GegenbauerRecurrence(out, t []float64, q, d int)
}

// SliceAxpyer is implemented by backends with their own unit-stride axpy on
// slices; see AxpySlice.
type SliceAxpyer interface {
	AxpySlice(alpha float64, x, y []float64)
}

// SumSquarer is implemented by backends with their own sum of squares; see
// SumSq.
type SumSquarer interface {
	SumSq(x []float64) float64
}

// GaussianBlock writes the Gaussian kernel block
//
//	dst[i,j] = exp(-gamma * max(0, xnorm2[i] + ynorm2[j] - 2 x_i.y_j))
//
// for the m rows x_i of x (m x d) and the n rows y_j of y (n x d), where
// xnorm2[i] = |x_i|^2 (length m) and ynorm2[j] = |y_j|^2 (length n) are
// supplied by the caller, so dst = exp(-gamma D) with D the matrix of squared
// distances |x_i - y_j|^2 (rounding below 0 clamped to 0). dst is m x n and
// must not alias x or y; it is not read.
//
// A backend implementing GaussianBlocker does it its way (purego applies the
// exponential to each strip of the product while it is in cache); otherwise
// dst = -2 x y^T is computed by b.Gemm and the exponential applied after, by
// the same vector kernel.
func GaussianBlock(b Backend, x, y blas64.General, xnorm2, ynorm2 []float64, gamma float64, dst blas64.General) {
	if f, ok := b.(GaussianBlocker); ok {
		f.GaussianBlock(x, y, xnorm2, ynorm2, gamma, dst)
		return
	}
	m, n, _ := check.GaussianBlock(x, y, xnorm2, ynorm2, dst)
	if m == 0 || n == 0 {
		return
	}
	b.Gemm(blas.NoTrans, blas.Trans, -2, x, y, 0, dst)
	asm.GaussianFromProduct(dst.Data, dst.Stride, m, n, xnorm2, ynorm2, gamma)
}

// Exp sets dst[i] = e^src[i] for i < len(src); dst must be at least as long
// and may be src itself. The generic implementation (b nil or without Exper)
// is zonal's vector exponential: below 2 ulp over the whole float64 range,
// Exp(NaN) = NaN, Exp(+Inf) = +Inf, Exp(-Inf) = 0.
func Exp(b Backend, dst, src []float64) {
	if f, ok := b.(Exper); ok {
		f.Exp(dst, src)
		return
	}
	check.Exp(dst, src)
	asm.Exp(dst, src)
}

// GegenbauerRecurrence evaluates the Gegenbauer polynomials P_d^0..P_d^q,
// normalised so that P_d^l(1) = 1, at every point of t:
//
//	out[l*len(t)+i] = P_d^l(t[i]),  l = 0..q,
//
// by the three-term recurrence P^0 = 1, P^1 = t and, for l >= 2,
//
//	P^l = [(2l+d-4) t P^{l-1} - (l-1) P^{l-2}] / (l+d-3).
//
// out must hold (q+1)*len(t) values, q >= 0 and d >= 2 (d = 2 gives the
// Chebyshev polynomials T_l, d = 3 the Legendre polynomials). The generic
// implementation (b nil or without GegenbauerRecurrer) is vectorised over the
// points.
func GegenbauerRecurrence(b Backend, out, t []float64, q, d int) {
	if f, ok := b.(GegenbauerRecurrer); ok {
		f.GegenbauerRecurrence(out, t, q, d)
		return
	}
	check.Gegenbauer(out, t, q, d)
	asm.GegenbauerRecurrence(out, t, q, d)
}

// AxpySlice computes y[i] += alpha*x[i] for the unit-stride slices x and y of
// equal length.
func AxpySlice(b Backend, alpha float64, x, y []float64) {
	if f, ok := b.(SliceAxpyer); ok {
		f.AxpySlice(alpha, x, y)
		return
	}
	check.SameLen("AxpySlice", x, y)
	asm.Daxpy(alpha, x, y)
}

// SumSq returns sum_i x[i]^2, the squared Euclidean norm of x, without
// scaling (it overflows for |x| beyond about 1e154, as the plain sum does).
func SumSq(b Backend, x []float64) float64 {
	if f, ok := b.(SumSquarer); ok {
		return f.SumSq(x)
	}
	return asm.SumSq(x)
}

// BorderedUpdater is implemented by backends with their own bordered
// (arrowhead) eigen-update; see BorderedUpdate.
type BorderedUpdater interface {
	BorderedUpdate(d []float64, u blas64.General, v []float64, alpha float64, w []float64, dOut []float64, uOut blas64.General) error
}

// BorderedUpdate computes the eigendecomposition of U diag(d) U^T bordered by
// one row and column: with B = [[U; 0] w] ((n+1) x (m+1); w a unit vector of
// length n+1 orthogonal to [U; 0], nil meaning e_{n+1}) and z = U^T v, the
// matrix
//
//	B [ diag(d)  z     ] B^T
//	  [ z^T      alpha ]
//
// which for w = nil and square U (or v in span U) is [M v; v^T alpha] with
// M = U diag(d) U^T. U is n x m with orthonormal columns, len(d) = m (any
// order), len(v) = n; the m+1 eigenvalues go to dOut (ascending) and the
// eigenvectors to uOut ((n+1) x (m+1)), which must not alias the inputs.
// The inner arrowhead problem is solved in O(m^2) (deflation, the roots of
// x - alpha + sum z_i^2/(d_i - x) = 0, Gu-Eisenstat recomputation of z, see
// package secular's Bordered) and the eigenvectors take one n x m by
// m x (m+1) product: half the work of the two rank-one updates that give the
// same matrix. A backend implementing BorderedUpdater does it its way;
// otherwise secular.Bordered runs with b's Gemm (OpenBLAS's dgemm on netlib).
// Errors wrap zonal.ErrShape, zonal.ErrNonFinite and zonal.ErrNoConvergence.
func BorderedUpdate(b Backend, d []float64, u blas64.General, v []float64, alpha float64, w []float64, dOut []float64, uOut blas64.General) error {
	if f, ok := b.(BorderedUpdater); ok {
		return f.BorderedUpdate(d, u, v, alpha, w, dOut, uOut)
	}
	return secular.Bordered(b.Gemm, d, u, v, alpha, w, dOut, uOut)
}

// RowProducter is implemented by backends with their own products of
// float64 rows with vectors; see DotRows and AxpyRows.
type RowProducter interface {
	DotRows(dst []float64, k blas64.General, v []float64)
	AxpyRows(acc []float64, k blas64.General, t []float64)
}

// DotRows sets dst[i] = sum_j k[i,j] v[j] for the k.Rows x k.Cols matrix k
// (len(dst) = k.Rows, len(v) = k.Cols), one dot product per row: the
// float64 counterpart of DotRows32, for products of a cache-sized kernel
// block with one vector, where a GEMM of one column packs its operands for
// nothing. The generic implementation is zonal's vector kernel (the
// dot product of the active path), the same code and bits whatever the
// backend. Shape mismatches panic with an error wrapping zonal.ErrShape.
func DotRows(b Backend, dst []float64, k blas64.General, v []float64) {
	if f, ok := b.(RowProducter); ok {
		f.DotRows(dst, k, v)
		return
	}
	check.Rows(k, len(dst), len(v))
	asm.DotRows(dst, k.Data, k.Stride, v)
}

// AxpyRows adds sum_i t[i] k[i,j] into acc[j] (len(t) = k.Rows,
// len(acc) = k.Cols): acc += k^T t, one axpy per row in row order (rows
// with t[i] = 0 skipped, as an axpy with alpha 0 is), as DotRows. Shape
// mismatches panic with an error wrapping zonal.ErrShape.
func AxpyRows(b Backend, acc []float64, k blas64.General, t []float64) {
	if f, ok := b.(RowProducter); ok {
		f.AxpyRows(acc, k, t)
		return
	}
	check.Rows(k, len(t), len(acc))
	asm.AxpyRows(acc, k.Data, k.Stride, t)
}
