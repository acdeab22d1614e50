//go:build netlib

package netlib

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	nb "gonum.org/v1/netlib/blas/netlib"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend/internal/check"
	"github.com/zonal-ml/zonal/backend/internal/errs"
	"github.com/zonal-ml/zonal/backend/secular"
)

var impl nb.Implementation

// Backend is the OpenBLAS/LAPACKE backend. The zero value is ready to use and
// safe for concurrent use.
type Backend struct{}

// New returns the netlib backend.
func New() Backend { return Backend{} }

// Name returns "netlib".
func (Backend) Name() string { return "netlib" }

// BLAS returns OpenBLAS as a gonum blas.Float64 (usable with blas64.Use).
func BLAS() blas.Float64 { return impl }

// SetThreads sets the number of threads OpenBLAS uses for every call in the
// process (openblas_set_num_threads); n < 1 is treated as 1.
func SetThreads(n int) { setThreads(max(n, 1)) }

// Threads returns OpenBLAS's current thread count.
func Threads() int { return getThreads() }

// Gemm computes C = alpha*op(A)*op(B) + beta*C (cblas_dgemm). With beta == 0,
// C is not read.
func (Backend) Gemm(tA, tB blas.Transpose, alpha float64, a, b blas64.General, beta float64, c blas64.General) {
	m, n, k, compute := check.GemmTrivial(tA, tB, alpha, a, b, beta, c)
	if !compute {
		return
	}
	if beta == 0 {
		// OpenBLAS honours beta == 0 by zeroing C first; do it here too so the
		// NaN-ignoring semantics never depend on the library version.
		check.ScaleGeneral(0, c)
	}
	impl.Dgemm(check.NormT(tA), check.NormT(tB), m, n, k, alpha, a.Data, a.Stride, b.Data, b.Stride, beta, c.Data, c.Stride)
}

// Syrk computes the full symmetric C = alpha*A^T*A + beta*C (t == Trans) or
// alpha*A*A^T + beta*C (t == NoTrans) by cblas_dsyrk on the lower triangle,
// mirrored into the upper one. Only the lower triangle of C is read.
func (Backend) Syrk(t blas.Transpose, alpha float64, a blas64.General, beta float64, c blas64.General) {
	n, k := check.Syrk(t, a, c)
	if n == 0 {
		return
	}
	if k == 0 || alpha == 0 {
		check.Scale(check.Lower, n, n, beta, c.Data, c.Stride)
	} else {
		if beta == 0 {
			check.Scale(check.Lower, n, n, 0, c.Data, c.Stride)
		}
		impl.Dsyrk(blas.Lower, check.NormT(t), n, k, alpha, a.Data, a.Stride, beta, c.Data, c.Stride)
	}
	check.MirrorLower(c)
}

// Gemv computes y = alpha*op(A)*x + beta*y (cblas_dgemv).
func (Backend) Gemv(t blas.Transpose, alpha float64, a blas64.General, x blas64.Vector, beta float64, y blas64.Vector) {
	m, n, compute := check.GemvTrivial(t, alpha, a, x, beta, y)
	if !compute {
		return
	}
	if beta == 0 {
		check.ScaleVector(0, y)
	}
	impl.Dgemv(check.NormT(t), m, n, alpha, a.Data, a.Stride, x.Data, x.Inc, beta, y.Data, y.Inc)
}

// Dot returns x . y.
func (Backend) Dot(x, y blas64.Vector) float64 {
	if check.VectorPair("Dot", x, y) == 0 {
		return 0
	}
	return impl.Ddot(x.N, x.Data, x.Inc, y.Data, y.Inc)
}

// Axpy computes y += alpha*x.
func (Backend) Axpy(alpha float64, x, y blas64.Vector) {
	if check.VectorPair("Axpy", x, y) == 0 || alpha == 0 {
		return
	}
	impl.Daxpy(x.N, alpha, x.Data, x.Inc, y.Data, y.Inc)
}

// Scal computes x *= alpha.
func (Backend) Scal(alpha float64, x blas64.Vector) {
	check.Vector("Scal x", x)
	if x.N == 0 {
		return
	}
	inc := x.Inc
	if inc < 0 {
		inc = -inc
	}
	impl.Dscal(x.N, alpha, x.Data, inc)
}

// Cholesky factors A = L*L^T in place by LAPACKE_dpotrf (column-major 'U' on
// the row-major lower triangle). A failing pivot comes from LAPACK's info;
// its value a_jj - sum_k l_jk^2 is what dpotf2 leaves on the diagonal. NaN in
// the lower triangle fails at the first row holding one, with value NaN.
func (bk Backend) Cholesky(a blas64.General) error {
	if err := bk.CholeskyLower(a); err != nil {
		return err
	}
	check.ZeroUpper(a)
	return nil
}

// CholeskyLower is Cholesky without zeroing the strict upper triangle, which
// dpotrf never reads or writes (backend.TriangleSolver).
func (Backend) CholeskyLower(a blas64.General) error {
	n := check.Square("Cholesky A", a)
	if n == 0 {
		return nil
	}
	info := potrfColUpper(n, a.Data, a.Stride)
	switch {
	case info > 0:
		p := info - 1
		return &errs.NotPositiveDefiniteError{Pivot: p, Value: a.Data[p*a.Stride+p]}
	case info < 0:
		// LAPACKE's NaN check (argument 4, the matrix) rejected the input.
		if p := firstNaNRow(a); p >= 0 {
			return &errs.NotPositiveDefiniteError{Pivot: p, Value: math.NaN()}
		}
		return fmt.Errorf("netlib: LAPACKE_dpotrf: illegal argument %d: %w", -info, zonal.ErrShape)
	}
	for i := 0; i < n; i++ {
		if d := a.Data[i*a.Stride+i]; math.IsNaN(d) {
			return &errs.NotPositiveDefiniteError{Pivot: i, Value: d}
		}
	}
	return nil
}

// firstNaNRow returns the first row whose lower-triangle part holds a NaN, or -1.
func firstNaNRow(a blas64.General) int {
	for i := 0; i < a.Rows; i++ {
		for _, v := range a.Data[i*a.Stride : i*a.Stride+i+1] {
			if math.IsNaN(v) {
				return i
			}
		}
	}
	return -1
}

// TriSolve solves op(L)*X = B in place (cblas_dtrsm).
func (Backend) TriSolve(t blas.Transpose, l blas64.General, b blas64.General) {
	n, nrhs := check.TriSolve(t, l, b)
	if n == 0 || nrhs == 0 {
		return
	}
	impl.Dtrsm(blas.Left, blas.Lower, check.NormT(t), blas.NonUnit, n, nrhs, 1, l.Data, l.Stride, b.Data, b.Stride)
}

// TriSolveUpper solves op(U)*X = B in place, U upper triangular with a
// non-unit diagonal (cblas_dtrsm; backend.TriangleSolver).
func (Backend) TriSolveUpper(t blas.Transpose, u blas64.General, b blas64.General) {
	n, nrhs := check.TriSolve(t, u, b)
	if n == 0 || nrhs == 0 {
		return
	}
	impl.Dtrsm(blas.Left, blas.Upper, check.NormT(t), blas.NonUnit, n, nrhs, 1, u.Data, u.Stride, b.Data, b.Stride)
}

// CholSolve solves L*L^T*X = B in place by two triangular solves.
func (Backend) CholSolve(l blas64.General, b blas64.General) {
	n, nrhs := check.TriSolve(blas.NoTrans, l, b)
	if n == 0 || nrhs == 0 {
		return
	}
	impl.Dtrsm(blas.Left, blas.Lower, blas.NoTrans, blas.NonUnit, n, nrhs, 1, l.Data, l.Stride, b.Data, b.Stride)
	impl.Dtrsm(blas.Left, blas.Lower, blas.Trans, blas.NonUnit, n, nrhs, 1, l.Data, l.Stride, b.Data, b.Stride)
}

// SymEig computes the eigenvalues (ascending) and optionally the eigenvectors
// (columns of A) of the symmetric A by LAPACKE_dsyevd (divide and conquer),
// column-major on the row-major lower triangle; the eigenvectors come back as
// rows and are transposed in place. NaN or Inf input is an error wrapping
// zonal.ErrNonFinite.
func (Backend) SymEig(a blas64.General, w []float64, vectors bool) error {
	n := check.Square("SymEig A", a)
	if len(w) != n {
		check.Panicf("SymEig: len(w) = %d, want %d", len(w), n)
	}
	if n == 0 {
		return nil
	}
	for i := 0; i < n; i++ {
		for j, v := range a.Data[i*a.Stride : i*a.Stride+i+1] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("netlib: SymEig: A[%d,%d] = %v: %w", i, j, v, zonal.ErrNonFinite)
			}
		}
	}
	info := syevdColUpper(vectors, n, a.Data, a.Stride, w)
	if info > 0 {
		return fmt.Errorf("netlib: LAPACKE_dsyevd: info %d: %w", info, zonal.ErrNoConvergence)
	}
	if info < 0 {
		return fmt.Errorf("netlib: LAPACKE_dsyevd: illegal argument %d: %w", -info, zonal.ErrShape)
	}
	if vectors {
		check.TransposeSquare(n, a.Data, a.Stride)
	}
	return nil
}

// Laed4 is a secular.RootFinder backed by LAPACK's dlaed4: the i-th
// (0-based) root of 1 + rho*sum_j z_j^2/(d_j - x) = 0 for strictly increasing
// d, rho > 0, with delta_j = d_j - lambda. dlaed4 assumes ||z||_2 = 1, so z
// is normalized (and rho scaled by ||z||^2, which leaves the roots unchanged)
// when it is not. For m <= 2 it defers to secular.Laed4, because dlaed4's
// small-n paths return eigenvector data in delta.
func Laed4(i int, d, z []float64, rho float64, delta []float64) (float64, error) {
	m := len(d)
	if i < 0 || i >= m || len(z) != m || len(delta) != m {
		return 0, fmt.Errorf("netlib: Laed4: root %d of %d (len z %d, len delta %d): %w", i, m, len(z), len(delta), zonal.ErrShape)
	}
	if !(rho > 0) {
		return 0, fmt.Errorf("netlib: Laed4: rho = %v must be positive: %w", rho, zonal.ErrShape)
	}
	if m <= 2 {
		// dlaed4's n <= 2 paths (dlaed5) return eigenvector data in delta
		// instead of d_j - lambda; the Go root finder has the RootFinder
		// contract for every m.
		return secular.Laed4(i, d, z, rho, delta)
	}
	s := impl.Dnrm2(m, z, 1)
	if math.Abs(s-1) > 1e-14 {
		zz := make([]float64, m)
		for j, v := range z {
			zz[j] = v / s
		}
		z, rho = zz, rho*s*s
	}
	lambda, info := laed4(i+1, d, z, rho, delta)
	if info != 0 {
		return 0, fmt.Errorf("netlib: dlaed4 root %d of %d: info %d: %w", i, m, info, zonal.ErrNoConvergence)
	}
	return lambda, nil
}

var _ secular.RootFinder = Laed4

// RankOneUpdate computes the eigendecomposition of U diag(d) U^T + rho v v^T
// (restricted to span U) with package secular's deflation and Gu-Eisenstat
// recomputation, the roots from LAPACK's dlaed4 and the eigenvector product
// from OpenBLAS's dgemm.
func (bk Backend) RankOneUpdate(d []float64, u blas64.General, rho float64, v []float64, dOut []float64, uOut blas64.General) error {
	return secular.Update(Laed4, bk.Gemm, d, u, rho, v, dOut, uOut)
}
