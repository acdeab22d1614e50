// Package backend defines the small, task-level linear-algebra interface that
// every zonal algorithm is written against, and chooses an implementation.
//
// Two implementations exist: purego (gonum plus zonal's SIMD assembly, always
// compiled) and netlib (OpenBLAS and LAPACKE through cgo, compiled with the
// build tag `netlib`, and then the default). The environment variable
// ZONAL_BACKEND=purego|netlib overrides the default at run time, and ByName
// selects one explicitly (parity tests run both in one process).
//
// Matrices are gonum blas64.General values: row-major, with a stride, so views
// into larger matrices are passed without copies. Shape mismatches are
// programming errors and panic (as in gonum's blas64); numerical failures
// (a non-positive-definite Cholesky pivot, a non-converging eigen solver) are
// returned as errors wrapping the sentinels below.
//
// Every Backend value is stateless and safe for concurrent use by many
// goroutines.
//
// # Fused operations
//
// Operations that a backend can do faster than a composition of its methods
// are optional interfaces discovered by type assertion: GaussianBlocker,
// Exper, GegenbauerRecurrer, SliceAxpyer, SumSquarer and BorderedUpdater.
// Algorithms call the functions of the same name (GaussianBlock, Exp,
// GegenbauerRecurrence, AxpySlice, SumSq, BorderedUpdate), which use the
// backend's implementation when it has one and otherwise the one shared
// implementation in this package (Gemm plus zonal's vector kernels, or
// package secular's bordered update with the backend's Gemm). purego
// implements GaussianBlocker with the exponential fused into its GEMM;
// netlib takes the shared path (OpenBLAS's Gemm, then the same vector
// kernels); both take the shared BorderedUpdate. A new backend operation is added the
// same way: an interface, a function with the generic implementation, and a
// method on the backends that do better.
//
// # Sparse products
//
// SparseGemm multiplies a sparse matrix in compressed sparse row form (CSR,
// raw arrays, so this package does not depend on package dataset) by a
// dense one, op(A) op(B) for either transpose; it is written once, on
// AxpySlice and gather dot products, and serves every backend.
//
// # The boundary
//
// The SIMD kernels are the internal package backend/internal/asm: only
// packages under backend/ can import it (TestAsmBoundary checks this with go
// list), so every algorithm reaches them through a Backend. Arguments are
// validated once on the way down, by the Backend method or fused function
// (backend/internal/check), never again in the kernels.
package backend

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/zonal-ml/zonal/backend/internal/errs"
)

// NotPositiveDefiniteError carries the failing pivot of a Cholesky factorization.
type NotPositiveDefiniteError = errs.NotPositiveDefiniteError

// Backend is the linear algebra every zonal algorithm may ask for.
//
// All matrices are row-major blas64.General views. Outputs never alias inputs
// unless a method says so.
type Backend interface {
	// Name is the registry name: "purego" or "netlib".
	Name() string

	// Gemm computes C = alpha*op(A)*op(B) + beta*C. With beta == 0, C is
	// not read (NaN in C is ignored), exactly as in BLAS.
	Gemm(tA, tB blas.Transpose, alpha float64, a, b blas64.General, beta float64, c blas64.General)

	// Syrk computes C = alpha*A^T*A + beta*C when t == blas.Trans (C is
	// a.Cols x a.Cols), or C = alpha*A*A^T + beta*C when t == blas.NoTrans
	// (C is a.Rows x a.Rows). Both triangles of C are written: the result is
	// the full symmetric matrix. With beta != 0, only the lower triangle of
	// C is read (C is taken to be symmetric); with beta == 0, C is not read.
	Syrk(t blas.Transpose, alpha float64, a blas64.General, beta float64, c blas64.General)

	// Gemv computes y = alpha*op(A)*x + beta*y.
	Gemv(t blas.Transpose, alpha float64, a blas64.General, x blas64.Vector, beta float64, y blas64.Vector)

	// Dot returns x . y.
	Dot(x, y blas64.Vector) float64
	// Axpy computes y += alpha*x.
	Axpy(alpha float64, x, y blas64.Vector)
	// Scal computes x *= alpha.
	Scal(alpha float64, x blas64.Vector)

	// Cholesky factors the symmetric positive definite A = L*L^T in place,
	// reading only the lower triangle. On success the lower triangle holds L
	// and the strict upper triangle is set to zero. On failure it returns a
	// *NotPositiveDefiniteError (errors.Is(err, zonal.ErrNotPositiveDefinite))
	// naming the failing pivot, and A's contents are unspecified.
	Cholesky(a blas64.General) error

	// TriSolve solves op(L)*X = B in place (B is overwritten by X), where L is
	// lower triangular with a non-unit diagonal (its strict upper part is not
	// read) and op(L) is L or L^T.
	TriSolve(t blas.Transpose, l blas64.General, b blas64.General)

	// CholSolve solves L*L^T*X = B in place for many right-hand sides, L being
	// a factor returned by Cholesky.
	CholSolve(l blas64.General, b blas64.General)

	// SymEig computes the eigenvalues of the symmetric matrix A (lower
	// triangle read) into w in ascending order. If vectors is true, A is
	// overwritten with the orthonormal eigenvectors as columns (column j
	// belongs to w[j]); otherwise A is destroyed.
	SymEig(a blas64.General, w []float64, vectors bool) error

	// RankOneUpdate computes the eigendecomposition of
	//   U diag(d) U^T + rho v v^T
	// restricted to the span of U's columns, i.e. U (diag(d) + rho z z^T) U^T
	// with z = U^T v; when U is square (orthogonal) this is exact. d holds m
	// eigenvalues in ascending order, U is n x m with orthonormal columns, v
	// has length n. The new eigenvalues go to dOut (length m, ascending) and
	// the new eigenvectors to uOut (n x m); dOut and uOut must not alias d or
	// U. The roots of the secular equation 1 + rho*sum z_i^2/(d_i - x) = 0 are
	// found by a safeguarded rational iteration (LAPACK dlaed4 style) after
	// deflation of negligible z_i and of (near-)equal d_i; z is recomputed
	// from the roots (Gu-Eisenstat) so the eigenvectors stay orthogonal. No
	// part of the update is ever dropped: deflated pairs keep their values.
	RankOneUpdate(d []float64, u blas64.General, rho float64, v []float64, dOut []float64, uOut blas64.General) error
}
