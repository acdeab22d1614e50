// Package purego is zonal's pure-Go backend: gonum's BLAS and LAPACK with the
// hot paths (every call in hot.go) replaced by zonal's SIMD kernels (the
// internal package backend/internal/asm) where the CPU has them. It needs no
// cgo and is always compiled.
//
// The symmetric products A^T A and A A^T compute only the micro-tiles that
// meet the lower triangle (about n^2 k flops instead of 2 n^2 k), which is
// then mirrored. Cholesky is blocked and right-looking on the lower triangle,
// its trailing updates going through the same symmetric product. The secular
// rank-one eigen-update uses package secular's Go root finder. Besides the
// Backend methods it implements backend.GaussianBlocker, the Gaussian kernel
// block with the exponential fused into the GEMM, and
// backend.Float32Products, single-precision GEMM and SYRK on float32
// micro-kernels (float32.go).
//
// The SIMD code path ("avx512", "avx2" or "generic") is chosen once at init
// from the CPU; the build tag noasm compiles the assembly out and
// ZONAL_NOASM=1 selects the generic path at run time (ZONAL_ASM_PATH=avx2
// the AVX2 path on an AVX-512 CPU, to test what a CPU without AVX-512
// runs). CPUPath reports the
// path, and SetCPUPath switches it process-wide for benchmarks that compare
// paths.
package purego

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack"
	"gonum.org/v1/gonum/lapack/gonum"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend/internal/asm"
	"github.com/zonal-ml/zonal/backend/internal/check"
	"github.com/zonal-ml/zonal/backend/internal/errs"
	"github.com/zonal-ml/zonal/backend/secular"
)

// Backend is the pure-Go backend. The zero value is ready to use and safe for
// concurrent use: it holds no state.
type Backend struct{}

// New returns the pure-Go backend.
func New() Backend { return Backend{} }

// Name returns "purego".
func (Backend) Name() string { return "purego" }

// Gemm computes C = alpha*op(A)*op(B) + beta*C. With beta == 0, C is not read.
func (Backend) Gemm(tA, tB blas.Transpose, alpha float64, a, b blas64.General, beta float64, c blas64.General) {
	m, n, k, compute := check.GemmTrivial(tA, tB, alpha, a, b, beta, c)
	if !compute {
		return
	}
	gemm(check.NormT(tA), check.NormT(tB), m, n, k, alpha, a.Data, a.Stride, b.Data, b.Stride, beta, c.Data, c.Stride)
}

// Syrk computes the full symmetric C = alpha*A^T*A + beta*C (t == Trans) or
// alpha*A*A^T + beta*C (t == NoTrans). Only the lower triangle of C is read
// (when beta != 0); both triangles are written.
func (Backend) Syrk(t blas.Transpose, alpha float64, a blas64.General, beta float64, c blas64.General) {
	n, k := check.Syrk(t, a, c)
	if n == 0 {
		return
	}
	if k == 0 || alpha == 0 {
		check.Scale(check.Lower, n, n, beta, c.Data, c.Stride)
	} else {
		syrk(blas.Lower, check.NormT(t), n, k, alpha, a.Data, a.Stride, beta, c.Data, c.Stride)
	}
	check.MirrorLower(c)
}

// Gemv computes y = alpha*op(A)*x + beta*y.
func (Backend) Gemv(t blas.Transpose, alpha float64, a blas64.General, x blas64.Vector, beta float64, y blas64.Vector) {
	m, n, compute := check.GemvTrivial(t, alpha, a, x, beta, y)
	if !compute {
		return
	}
	// y and x are cut to their exact extent: gonum v0.17's pure-Go (noasm)
	// GemvT with beta == 0 and incY == 1 clears all of len(y), not just y.N
	// elements.
	gemv(check.NormT(t), m, n, alpha, a.Data, a.Stride, x.Data[:extent(x)], x.Inc, beta, y.Data[:extent(y)], y.Inc)
}

// extent returns the length of the part of v.Data the vector occupies.
func extent(v blas64.Vector) int {
	inc := v.Inc
	if inc < 0 {
		inc = -inc
	}
	return (v.N-1)*inc + 1
}

// Dot returns x . y.
func (Backend) Dot(x, y blas64.Vector) float64 {
	if check.VectorPair("Dot", x, y) == 0 {
		return 0
	}
	return dot(x.N, x.Data, x.Inc, y.Data, y.Inc)
}

// Axpy computes y += alpha*x.
func (Backend) Axpy(alpha float64, x, y blas64.Vector) {
	if check.VectorPair("Axpy", x, y) == 0 || alpha == 0 {
		return
	}
	axpy(x.N, alpha, x.Data, x.Inc, y.Data, y.Inc)
}

// Scal computes x *= alpha.
func (Backend) Scal(alpha float64, x blas64.Vector) {
	check.Vector("Scal x", x)
	if x.N == 0 {
		return
	}
	inc := x.Inc
	if inc < 0 {
		// Scaling visits every element once; the order does not matter.
		inc = -inc
	}
	scal(x.N, alpha, x.Data, inc)
}

// Cholesky factors A = L*L^T in place (lower triangle read; strict upper
// triangle zeroed on success). A non-positive or NaN pivot is returned as a
// *NotPositiveDefiniteError.
func (bk Backend) Cholesky(a blas64.General) error {
	if err := bk.CholeskyLower(a); err != nil {
		return err
	}
	check.ZeroUpper(a)
	return nil
}

// CholeskyLower is Cholesky without zeroing the strict upper triangle, which
// the blocked factorization never reads or writes (backend.TriangleSolver).
func (Backend) CholeskyLower(a blas64.General) error {
	n := check.Square("Cholesky A", a)
	if n == 0 {
		return nil
	}
	if p, v := cholesky(n, a.Data, a.Stride); p >= 0 {
		return &errs.NotPositiveDefiniteError{Pivot: p, Value: v}
	}
	return nil
}

// TriSolveUpper solves op(U)*X = B in place, U upper triangular with a
// non-unit diagonal (backend.TriangleSolver).
func (Backend) TriSolveUpper(t blas.Transpose, u blas64.General, b blas64.General) {
	n, nrhs := check.TriSolve(t, u, b)
	if n == 0 || nrhs == 0 {
		return
	}
	trsm(blas.Left, blas.Upper, check.NormT(t), blas.NonUnit, n, nrhs, 1, u.Data, u.Stride, b.Data, b.Stride)
}

// TriSolve solves op(L)*X = B in place, L lower triangular with non-unit
// diagonal.
func (Backend) TriSolve(t blas.Transpose, l blas64.General, b blas64.General) {
	n, nrhs := check.TriSolve(t, l, b)
	if n == 0 || nrhs == 0 {
		return
	}
	trsm(blas.Left, blas.Lower, check.NormT(t), blas.NonUnit, n, nrhs, 1, l.Data, l.Stride, b.Data, b.Stride)
}

// CholSolve solves L*L^T*X = B in place.
func (Backend) CholSolve(l blas64.General, b blas64.General) {
	n, nrhs := check.TriSolve(blas.NoTrans, l, b)
	if n == 0 || nrhs == 0 {
		return
	}
	trsm(blas.Left, blas.Lower, blas.NoTrans, blas.NonUnit, n, nrhs, 1, l.Data, l.Stride, b.Data, b.Stride)
	trsm(blas.Left, blas.Lower, blas.Trans, blas.NonUnit, n, nrhs, 1, l.Data, l.Stride, b.Data, b.Stride)
}

// SymEig computes the eigenvalues of the symmetric A (lower triangle read)
// in ascending order into w and, if vectors is true, the orthonormal
// eigenvectors into the columns of A. Both start with gonum's Householder
// tridiagonalisation. Eigenvalues only: gonum's Dsyev, implicit QL/QR on the
// tridiagonal matrix. With vectors: divide and conquer (Cuppen's method, as
// LAPACK's dstedc) on the tridiagonal matrix, its merges by package secular's
// rank-one update, and the back-transformation by Gemm (see symEigVectors).
// NaN or Inf in the lower triangle is an error wrapping zonal.ErrNonFinite.
func (bk Backend) SymEig(a blas64.General, w []float64, vectors bool) error {
	n := check.Square("SymEig A", a)
	if len(w) != n {
		check.Panicf("SymEig: len(w) = %d, want %d", len(w), n)
	}
	if n == 0 {
		return nil
	}
	if err := finiteLower(a); err != nil {
		return err
	}
	// gonum's Dsyev rescales matrices whose norm is outside
	// [sqrt(safmin/eps), sqrt(1/(safmin eps))], and its eigenvalue-only path
	// then panics inside Dlascl (gonum v0.17). Scale by a power of two first
	// (exact), so that the largest entry is in [1, 2), and undo it on w.
	exp := scaleLowerPow2(a)
	defer func() {
		if exp != 0 {
			for i := range w {
				w[i] = math.Ldexp(w[i], exp)
			}
		}
	}()
	if vectors {
		return bk.symEigVectors(a, w)
	}
	job := lapack.EVNone
	var impl gonum.Implementation
	work := make([]float64, 1)
	impl.Dsyev(job, blas.Lower, n, a.Data, a.Stride, w, work, -1)
	work = make([]float64, int(work[0]))
	if !impl.Dsyev(job, blas.Lower, n, a.Data, a.Stride, w, work, len(work)) {
		return fmt.Errorf("purego: symmetric eigensolver: %w", zonal.ErrNoConvergence)
	}
	return nil
}

// scaleLowerPow2 multiplies the lower triangle of a by 2^-e, e chosen so that
// the largest magnitude lands in [1, 2), and returns e (0 for a zero matrix).
// Entries that would underflow below the smallest subnormal were negligible
// against the largest by more than 2^1074 anyway.
func scaleLowerPow2(a blas64.General) int {
	amax := 0.0
	for i := 0; i < a.Rows; i++ {
		for _, v := range a.Data[i*a.Stride : i*a.Stride+i+1] {
			amax = math.Max(amax, math.Abs(v))
		}
	}
	if amax == 0 {
		return 0
	}
	_, e := math.Frexp(amax) // amax = f 2^e, f in [0.5, 1)
	e--
	if e == 0 {
		return 0
	}
	for i := 0; i < a.Rows; i++ {
		row := a.Data[i*a.Stride : i*a.Stride+i+1]
		for j := range row {
			row[j] = math.Ldexp(row[j], -e)
		}
	}
	return e
}

// finiteLower returns an error wrapping zonal.ErrNonFinite if the lower triangle of a
// holds NaN or Inf.
func finiteLower(a blas64.General) error {
	for i := 0; i < a.Rows; i++ {
		for j, v := range a.Data[i*a.Stride : i*a.Stride+i+1] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("purego: SymEig: A[%d,%d] = %v: %w", i, j, v, zonal.ErrNonFinite)
			}
		}
	}
	return nil
}

// RankOneUpdate computes the eigendecomposition of U diag(d) U^T + rho v v^T
// (restricted to span U) with package secular's Go root finder and deflation,
// the eigenvector product going through this backend's Gemm.
func (bk Backend) RankOneUpdate(d []float64, u blas64.General, rho float64, v []float64, dOut []float64, uOut blas64.General) error {
	return secular.Update(nil, bk.Gemm, d, u, rho, v, dOut, uOut)
}

// GaussianBlock writes dst[i,j] = exp(-gamma*max(0, xnorm2[i] + ynorm2[j] -
// 2 x_i.y_j)) for the rows of x (m x d) and y (n x d) into dst (m x n): the
// GEMM kernels compute -2 x y^T and the exponential is applied to each
// finished strip while it is still in cache. It implements
// backend.GaussianBlocker; call it through backend.GaussianBlock.
func (Backend) GaussianBlock(x, y blas64.General, xnorm2, ynorm2 []float64, gamma float64, dst blas64.General) {
	m, n, d := check.GaussianBlock(x, y, xnorm2, ynorm2, dst)
	asm.GaussianBlock(dst.Data, dst.Stride, x.Data, x.Stride, y.Data, y.Stride, m, n, d, xnorm2, ynorm2, gamma)
}

// CPUPath reports the SIMD code path the kernels run: "avx512", "avx2" or
// "generic" (always "generic" under the noasm build tag or ZONAL_NOASM=1).
func CPUPath() string { return asm.Path() }

// CPUPaths lists the code paths available on this CPU in this build, best
// first; "generic" is always last.
func CPUPaths() []string { return asm.Paths() }

// SetCPUPath switches every kernel of this backend (and the element-wise
// kernels every backend shares) to the named path, one of CPUPaths, and
// returns the previous one; an unknown name is an error wrapping
// zonal.ErrUnknown. The setting is process-wide: it is meant for benchmarks
// that compare paths and must not be called while other goroutines compute.
func SetCPUPath(name string) (prev string, err error) {
	prev, err = asm.SetPath(name)
	if err != nil {
		return prev, fmt.Errorf("purego: SetCPUPath: %w", err)
	}
	return prev, nil
}
