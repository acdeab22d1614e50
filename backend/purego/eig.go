package purego

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack"
	"gonum.org/v1/gonum/lapack/gonum"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend/secular"
)

// dcLeaf is the tridiagonal size below which the divide-and-conquer
// eigensolver hands over to implicit QL/QR (gonum's Dsteqr).
const dcLeaf = 48

// symEigVectors computes the eigenvalues (ascending, into w) and orthonormal
// eigenvectors (into the columns of a) of the symmetric a (lower triangle
// read): Householder tridiagonalisation a = Q T Q^T (gonum's Dsytrd and
// Dorgtr), the eigenvectors Z of T by divide and conquer (Cuppen's method,
// as LAPACK's dstedc), and the product Q Z through the backend's Gemm.
//
// Divide and conquer splits T at its middle off-diagonal b into
// diag(T1 - |b| e_k e_k^T, T2 - |b| e_1 e_1^T) + |b| v v^T with
// v = e_k + sign(b) e_{k+1}, solves the halves recursively and merges them
// with the secular rank-one update (package secular: dlaed4-style roots,
// deflation, Gu-Eisenstat eigenvectors), so the O(n^3) work is Gemm instead
// of the plane rotations of implicit QL, which are ~20x slower in Go.
func (bk Backend) symEigVectors(a blas64.General, w []float64) error {
	n := a.Rows
	var impl gonum.Implementation
	e := make([]float64, max(n-1, 1))
	tau := make([]float64, max(n-1, 1))
	work := make([]float64, 1)
	impl.Dsytrd(blas.Lower, n, a.Data, a.Stride, w, e, tau, work, -1)
	lw := int(work[0])
	impl.Dorgtr(blas.Lower, n, a.Data, a.Stride, tau, work, -1)
	lw = max(lw, int(work[0]), 1)
	work = make([]float64, lw)
	impl.Dsytrd(blas.Lower, n, a.Data, a.Stride, w, e, tau, work, lw)
	impl.Dorgtr(blas.Lower, n, a.Data, a.Stride, tau, work, lw)

	z := blas64.General{Rows: n, Cols: n, Stride: n, Data: make([]float64, n*n)}
	if err := bk.tridiagEig(w, e[:n-1], z); err != nil {
		return err
	}
	q := blas64.General{Rows: n, Cols: n, Stride: n, Data: make([]float64, n*n)}
	for i := 0; i < n; i++ {
		copy(q.Data[i*n:(i+1)*n], a.Data[i*a.Stride:i*a.Stride+n])
	}
	bk.Gemm(blas.NoTrans, blas.NoTrans, 1, q, z, 0, a)
	return nil
}

// tridiagEig overwrites d with the eigenvalues (ascending) of the symmetric
// tridiagonal matrix with diagonal d and off-diagonal e, and writes its
// eigenvectors to the columns of z (n x n). e is not modified.
func (bk Backend) tridiagEig(d, e []float64, z blas64.General) error {
	n := len(d)
	if n <= dcLeaf {
		for i := 0; i < n; i++ {
			row := z.Data[i*z.Stride : i*z.Stride+n]
			for j := range row {
				row[j] = 0
			}
			row[i] = 1
		}
		ee := append(make([]float64, 0, n), e...)
		ee = append(ee, 0)
		var impl gonum.Implementation
		if !impl.Dsteqr(lapack.EVTridiag, n, d, ee, z.Data, z.Stride, make([]float64, max(1, 2*n-2))) {
			return fmt.Errorf("purego: tridiagonal QL: %w", zonal.ErrNoConvergence)
		}
		return nil
	}
	k := n / 2
	b := e[k-1]
	rho := math.Abs(b)
	d[k-1] -= rho
	d[k] -= rho
	// The merge works on U = diag(Z1, Z2), held in z; the halves are solved
	// into its diagonal blocks.
	for i := 0; i < n; i++ {
		row := z.Data[i*z.Stride : i*z.Stride+n]
		for j := range row {
			row[j] = 0
		}
	}
	z1 := blas64.General{Rows: k, Cols: k, Stride: z.Stride, Data: z.Data}
	z2 := blas64.General{Rows: n - k, Cols: n - k, Stride: z.Stride, Data: z.Data[k*z.Stride+k:]}
	if err := bk.tridiagEig(d[:k], e[:k-1], z1); err != nil {
		return err
	}
	if err := bk.tridiagEig(d[k:], e[k:], z2); err != nil {
		return err
	}
	v := make([]float64, n)
	v[k-1] = 1
	v[k] = 1
	if b < 0 {
		v[k] = -1
	}
	u := blas64.General{Rows: n, Cols: n, Stride: n, Data: make([]float64, n*n)}
	for i := 0; i < n; i++ {
		copy(u.Data[i*n:(i+1)*n], z.Data[i*z.Stride:i*z.Stride+n])
	}
	dIn := append([]float64(nil), d...)
	return secular.Update(nil, bk.Gemm, dIn, u, rho, v, d, z)
}
