package backend

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/blas/gonum"

	"github.com/zonal-ml/zonal/backend/internal/check"
)

// Two triangular factors in one square array. FALKON's preconditioner needs
// two M x M triangular factors; keeping one in the lower triangle and the
// other, transposed, in the strict upper triangle (its diagonal aside) halves
// the largest fixed cost of a fit. That needs a Cholesky factorization that
// leaves the strict upper triangle alone and a solve with an upper
// triangular factor. As for the fused operations, a backend implements the
// optional interface when it has them, and the functions below otherwise
// run a generic implementation.

// TriangleSolver is implemented by backends that factor the lower triangle
// without touching the strict upper one and solve with upper triangular
// factors; see CholeskyLower and TriSolveUpper.
type TriangleSolver interface {
	// CholeskyLower is Cholesky except that the strict upper triangle of A
	// is neither read nor written, on success or failure.
	CholeskyLower(a blas64.General) error
	// TriSolveUpper solves op(U)*X = B in place, U upper triangular with a
	// non-unit diagonal; the strict lower triangle of U is not read.
	TriSolveUpper(t blas.Transpose, u, b blas64.General)
}

// CholeskyLower factors the symmetric positive definite A = L L^T in place
// from its lower triangle, as Backend.Cholesky, but leaves the strict upper
// triangle of A as it was: on success the lower triangle holds L, on failure
// (a *NotPositiveDefiniteError, as from Cholesky) the lower triangle's
// contents are unspecified and the strict upper triangle is still intact.
// The generic implementation saves the strict upper triangle (n(n-1)/2
// floats), calls b.Cholesky and puts it back.
func CholeskyLower(b Backend, a blas64.General) error {
	if f, ok := b.(TriangleSolver); ok {
		return f.CholeskyLower(a)
	}
	n := check.Square("CholeskyLower A", a)
	saved := make([]float64, 0, n*(n-1)/2)
	for i := 0; i < n; i++ {
		saved = append(saved, a.Data[i*a.Stride+i+1:i*a.Stride+n]...)
	}
	err := b.Cholesky(a)
	k := 0
	for i := 0; i < n; i++ {
		k += copy(a.Data[i*a.Stride+i+1:i*a.Stride+n], saved[k:])
	}
	return err
}

// TriSolveUpper solves op(U)*X = B in place (B is overwritten by X), U upper
// triangular with a non-unit diagonal (its strict lower part is not read)
// and op(U) U or U^T. The generic implementation is gonum's Dtrsm.
func TriSolveUpper(b Backend, t blas.Transpose, u, bm blas64.General) {
	if f, ok := b.(TriangleSolver); ok {
		f.TriSolveUpper(t, u, bm)
		return
	}
	n, nrhs := check.TriSolve(t, u, bm)
	if n == 0 || nrhs == 0 {
		return
	}
	gonum.Implementation{}.Dtrsm(blas.Left, blas.Upper, check.NormT(t), blas.NonUnit, n, nrhs, 1, u.Data, u.Stride, bm.Data, bm.Stride)
}
