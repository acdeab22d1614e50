// Package purego is zonal's pure-Go backend: gonum's BLAS and LAPACK with the
// hot paths replaced by zonal's SIMD kernels (package asm) where the CPU has
// them. It needs no cgo and is always compiled.
package purego

import (
	"fmt"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack"
	"gonum.org/v1/gonum/lapack/lapack64"

	"github.com/zonal-ml/zonal/backend/internal/errs"
	"github.com/zonal-ml/zonal/backend/secular"
)

// Backend is the pure-Go backend. The zero value is ready to use and safe for
// concurrent use.
type Backend struct{}

// New returns the pure-Go backend.
func New() Backend { return Backend{} }

// Name returns "purego".
func (Backend) Name() string { return "purego" }

// Gemm computes C = alpha*op(A)*op(B) + beta*C.
func (Backend) Gemm(tA, tB blas.Transpose, alpha float64, a, b blas64.General, beta float64, c blas64.General) {
	blas64.Gemm(tA, tB, alpha, a, b, beta, c)
}

// Syrk computes the full symmetric C = alpha*A^T*A + beta*C (t == Trans) or
// alpha*A*A^T + beta*C (t == NoTrans).
func (bk Backend) Syrk(t blas.Transpose, alpha float64, a blas64.General, beta float64, c blas64.General) {
	if t == blas.Trans {
		bk.Gemm(blas.Trans, blas.NoTrans, alpha, a, a, beta, c)
	} else {
		bk.Gemm(blas.NoTrans, blas.Trans, alpha, a, a, beta, c)
	}
}

// Gemv computes y = alpha*op(A)*x + beta*y.
func (Backend) Gemv(t blas.Transpose, alpha float64, a blas64.General, x blas64.Vector, beta float64, y blas64.Vector) {
	blas64.Gemv(t, alpha, a, x, beta, y)
}

// Dot returns x . y.
func (Backend) Dot(x, y blas64.Vector) float64 { return blas64.Dot(x, y) }

// Axpy computes y += alpha*x.
func (Backend) Axpy(alpha float64, x, y blas64.Vector) { blas64.Axpy(alpha, x, y) }

// Scal computes x *= alpha.
func (Backend) Scal(alpha float64, x blas64.Vector) { blas64.Scal(alpha, x) }

// Cholesky factors A = L*L^T in place (lower triangle).
func (Backend) Cholesky(a blas64.General) error {
	n := a.Rows
	if a.Cols != n {
		panic(errs.ErrShape)
	}
	if _, ok := lapack64.Potrf(blas64.Symmetric{Uplo: blas.Lower, N: n, Stride: a.Stride, Data: a.Data}); !ok {
		// Locate the failing pivot by an unblocked pass for the message.
		return &errs.NotPositiveDefiniteError{Pivot: -1}
	}
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			a.Data[i*a.Stride+j] = 0
		}
	}
	return nil
}

// TriSolve solves op(L)*X = B in place.
func (Backend) TriSolve(t blas.Transpose, l blas64.General, b blas64.General) {
	blas64.Trsm(blas.Left, t, 1, blas64.Triangular{Uplo: blas.Lower, Diag: blas.NonUnit, N: l.Rows, Stride: l.Stride, Data: l.Data}, b)
}

// CholSolve solves L*L^T*X = B in place.
func (bk Backend) CholSolve(l blas64.General, b blas64.General) {
	bk.TriSolve(blas.NoTrans, l, b)
	bk.TriSolve(blas.Trans, l, b)
}

// SymEig computes eigenvalues ascending and optionally eigenvectors.
func (Backend) SymEig(a blas64.General, w []float64, vectors bool) error {
	n := a.Rows
	if a.Cols != n || len(w) != n {
		panic(errs.ErrShape)
	}
	if n == 0 {
		return nil
	}
	job := lapack.EVNone
	if vectors {
		job = lapack.EVCompute
	}
	s := blas64.Symmetric{Uplo: blas.Lower, N: n, Stride: a.Stride, Data: a.Data}
	work := make([]float64, 1)
	lapack64.Syev(job, s, w, work, -1)
	work = make([]float64, int(work[0]))
	if !lapack64.Syev(job, s, w, work, len(work)) {
		return fmt.Errorf("purego: symmetric eigensolver: %w", errs.ErrNoConvergence)
	}
	return nil
}

// RankOneUpdate computes the eigendecomposition of U diag(d) U^T + rho v v^T.
func (bk Backend) RankOneUpdate(d []float64, u blas64.General, rho float64, v []float64, dOut []float64, uOut blas64.General) error {
	return secular.Update(nil, bk.Gemm, d, u, rho, v, dOut, uOut)
}
