// Package secular solves the symmetric rank-one eigenvalue update
// diag(d) + rho z z^T shared by every backend.
//
// TEMPORARY: this file is a dense O(m^3) stand-in (explicit eigendecomposition)
// that keeps the API compilable; it is replaced by the dlaed4-style root finder
// with deflation and Gu-Eisenstat recomputation.
package secular

import (
	"fmt"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack"
	"gonum.org/v1/gonum/lapack/lapack64"

	"github.com/zonal-ml/zonal/backend/internal/errs"
)

// GemmFunc computes C = alpha*op(A)*op(B) + beta*C (a Backend's Gemm).
type GemmFunc func(tA, tB blas.Transpose, alpha float64, a, b blas64.General, beta float64, c blas64.General)

// RootFinder returns the i-th (0-based, ascending) root of
// 1 + rho*sum_j z_j^2/(d_j - x) = 0 for strictly increasing d, nonzero z and
// rho > 0, and writes delta_j = d_j - lambda (computed accurately) to delta.
type RootFinder func(i int, d, z []float64, rho float64, delta []float64) (lambda float64, err error)

// Update computes the eigendecomposition of U (diag(d) + rho z z^T) U^T with
// z = U^T v. See backend.Backend.RankOneUpdate.
func Update(find RootFinder, gemm GemmFunc, d []float64, u blas64.General, rho float64, v []float64, dOut []float64, uOut blas64.General) error {
	n, m := u.Rows, u.Cols
	if len(d) != m || len(v) != n || len(dOut) != m || uOut.Rows != n || uOut.Cols != m {
		return fmt.Errorf("secular: %w", errs.ErrShape)
	}
	if m == 0 {
		return nil
	}
	z := make([]float64, m)
	blas64.Gemv(blas.Trans, 1, u, blas64.Vector{N: n, Inc: 1, Data: v}, 0, blas64.Vector{N: m, Inc: 1, Data: z})
	a := blas64.Symmetric{Uplo: blas.Lower, N: m, Stride: m, Data: make([]float64, m*m)}
	for i := 0; i < m; i++ {
		for j := 0; j <= i; j++ {
			a.Data[i*m+j] = rho * z[i] * z[j]
		}
		a.Data[i*m+i] += d[i]
	}
	ev := blas64.General{Rows: m, Cols: m, Stride: m, Data: make([]float64, m*m)}
	if !lapack64.Syev(lapack.EVCompute, a, dOut, make([]float64, 1), -1) {
		// workspace query never fails
	}
	work := make([]float64, 1)
	lapack64.Syev(lapack.EVCompute, a, dOut, work, -1)
	work = make([]float64, int(work[0]))
	if !lapack64.Syev(lapack.EVCompute, a, dOut, work, len(work)) {
		return fmt.Errorf("secular: %w", errs.ErrNoConvergence)
	}
	for i := 0; i < m; i++ {
		copy(ev.Data[i*m:(i+1)*m], a.Data[i*m:(i+1)*m])
	}
	gemm(blas.NoTrans, blas.NoTrans, 1, u, ev, 0, uOut)
	return nil
}
