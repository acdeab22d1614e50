package kpca

import (
	"context"
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/internal/budget"
	"github.com/zonal-ml/zonal/kernels"
)

// Init replaces the state by a batch eigendecomposition of the rows of x
// (the usual start: a batch decomposition of the first m0 points, then Add):
// the kernel matrix, then the backend's SymEig (O(r^3)), with progress
// reports of Stage "kernel" and "eigen" and ctx checked before each.
//
// Errors: zonal.ErrShape (x's width is not InputDim), zonal.ErrEmpty (no
// rows), zonal.ErrNonFinite (NaN or Inf in x or the kernel matrix),
// zonal.ErrTooLarge (the r x r matrices exceed Options.MemoryBudget),
// ctx.Err(); the state is then unchanged. A backend error from the
// eigendecomposition (zonal.ErrNoConvergence) leaves an Incremental that
// returns zonal.ErrState until the next successful Init.
func (s *Incremental) Init(ctx context.Context, x mat.Matrix) error {
	r, c := x.Dims()
	if c != s.dim {
		return fmt.Errorf("kpca: %d columns, want %d: %w", c, s.dim, zonal.ErrShape)
	}
	if r == 0 {
		return fmt.Errorf("kpca: no rows: %w", zonal.ErrEmpty)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	// The state, the kernel matrix, its centred copy and (mean adjustment)
	// the two Helmert products are alive together.
	if err := s.opts.checkBudget(fmt.Sprintf("Init with %d points", r), s.stateBytes(r)+budget.Floats(4, r, r)); err != nil {
		return err
	}
	xd := mat.DenseCopyOf(x)
	if err := checkFinite(xd); err != nil {
		return err
	}
	s.opts.report("kernel", 0, 1)
	km := mat.NewDense(r, r, nil)
	if err := kernels.MatrixInto(ctx, km, s.k, xd, xd, kernels.Options{Backend: s.b}); err != nil {
		return fmt.Errorf("kpca: kernel matrix: %w", err)
	}
	if err := checkFinite(km); err != nil {
		return err
	}
	symmetrize(km.RawMatrix())
	s.opts.report("kernel", 1, 1)
	if err := ctx.Err(); err != nil {
		return err
	}
	fresh := &Incremental{k: s.k, b: s.b, opts: s.opts, dim: s.dim, probeSeed: s.probeSeed}
	if err := fresh.grow(r); err != nil {
		return err
	}
	*s = *fresh
	raw := xd.RawMatrix()
	for i := 0; i < r; i++ {
		copy(s.x[i*s.dim:(i+1)*s.dim], raw.Data[i*raw.Stride:i*raw.Stride+c])
		row := km.RawRowView(i)
		copy(s.kmat[i*s.rowCap:i*s.rowCap+r], row)
		for _, v := range row {
			s.rowSum[i] += v
		}
		s.total += s.rowSum[i]
	}
	s.n = r
	m := blas64.General{Rows: r, Cols: r, Stride: r, Data: make([]float64, r*r)}
	s.matrixInto(m)
	s.opts.report("eigen", 0, 1)
	if err := s.rebatch(m); err != nil {
		return err
	}
	s.opts.report("eigen", 1, 1)
	return nil
}

// Reorthogonalize refreshes the basis by a Rayleigh-Ritz step on the span of
// U (with mean adjustment, of U's projection onto 1^perp): with
// U^T U = L L^T and Q = U L^{-T}, it diagonalises Q^T M Q = W Theta W^T
// and sets U = Q W, Lambda = Theta, in O(n^2 r) time. If U^T U is not
// positive definite the decomposition is recomputed in batch from M (top
// Components pairs). Add calls it when Options.ReorthThreshold is passed.
// It does nothing on an empty or failed Incremental. Errors: those of the
// backend (zonal.ErrNoConvergence from SymEig; a Cholesky failure other
// than zonal.ErrNotPositiveDefinite).
func (s *Incremental) Reorthogonalize() error {
	if s.n == 0 || s.eig.n != s.n {
		return nil
	}
	n, r := s.n, s.eig.r
	u := s.eig.u()
	if s.opts.MeanAdjust {
		// The eigenvectors of K' with nonzero eigenvalue lie in 1^perp:
		// project the columns there first (subtract each column's mean).
		mean := make([]float64, r)
		for i := 0; i < n; i++ {
			for j, v := range u.Data[i*u.Stride : i*u.Stride+r] {
				mean[j] += v
			}
		}
		for i := 0; i < n; i++ {
			row := u.Data[i*u.Stride : i*u.Stride+r]
			for j := range row {
				row[j] -= mean[j] / float64(n)
			}
		}
	}
	m := blas64.General{Rows: n, Cols: n, Stride: n, Data: make([]float64, n*n)}
	s.matrixInto(m)
	gram := blas64.General{Rows: r, Cols: r, Stride: r, Data: make([]float64, r*r)}
	s.b.Syrk(blas.Trans, 1, u, 0, gram)
	s.stats.Reorths++
	if err := s.b.Cholesky(gram); err != nil {
		if !errors.Is(err, zonal.ErrNotPositiveDefinite) {
			return fmt.Errorf("kpca: re-orthogonalisation: %w", err)
		}
		return s.rebatch(m)
	}
	// Qt = L^{-1} U^T (r x n).
	qt := blas64.General{Rows: r, Cols: n, Stride: n, Data: make([]float64, r*n)}
	for i := 0; i < n; i++ {
		for j := 0; j < r; j++ {
			qt.Data[j*n+i] = u.Data[i*u.Stride+j]
		}
	}
	s.b.TriSolve(blas.NoTrans, gram, qt)
	t1 := blas64.General{Rows: n, Cols: r, Stride: r, Data: make([]float64, n*r)}
	s.b.Gemm(blas.NoTrans, blas.Trans, 1, m, qt, 0, t1)
	bm := blas64.General{Rows: r, Cols: r, Stride: r, Data: make([]float64, r*r)}
	s.b.Gemm(blas.NoTrans, blas.NoTrans, 1, qt, t1, 0, bm)
	symmetrize(bm)
	w := make([]float64, r)
	if err := s.b.SymEig(bm, w, true); err != nil {
		return fmt.Errorf("kpca: re-orthogonalisation: %w", err)
	}
	un := blas64.General{Rows: n, Cols: r, Stride: r, Data: make([]float64, n*r)}
	s.b.Gemm(blas.Trans, blas.NoTrans, 1, qt, bm, 0, un)
	s.eig.set(w, un)
	s.eig.reserve(s.rowCap, s.colCap(s.rowCap))
	return nil
}

// rebatch recomputes the decomposition of m (n x n, destroyed) from scratch.
// With mean adjustment the eigenvectors are computed in the Helmert basis Q
// of 1^perp (C = Q^T K' Q, U = Q V), so the state holds the n-1 eigenpairs
// orthogonal to 1 and not the null vector 1/sqrt(n).
func (s *Incremental) rebatch(m blas64.General) error {
	n := m.Rows
	if s.opts.MeanAdjust {
		if n == 1 {
			s.eig.set(nil, blas64.General{Rows: 1, Cols: 0, Stride: 1, Data: []float64{0}})
			s.eig.reserve(s.rowCap, s.colCap(s.rowCap))
			return nil
		}
		m = helmertLeft(transpose(helmertLeft(m)))
	}
	k := m.Rows
	w := make([]float64, k)
	if err := s.b.SymEig(m, w, true); err != nil {
		return fmt.Errorf("kpca: batch recomputation: %w", err)
	}
	r := k
	if c := s.opts.Components; c > 0 && c < k {
		r = c
	}
	u := blas64.General{Rows: k, Cols: r, Stride: m.Stride, Data: m.Data[k-r:]}
	if s.opts.MeanAdjust {
		u = helmertApply(u)
	}
	s.eig.set(w[k-r:], u)
	s.eig.reserve(s.rowCap, s.colCap(s.rowCap))
	return nil
}

// helmertLeft returns Q^T a ((rows-1) x cols) for the Helmert basis
// Q = [h_1 .. h_{n-1}] of 1^perp in R^n, h_k = (1, .., 1, -k, 0, ..)/sqrt(k(k+1))
// with k ones: row k of the result is (a_1 + .. + a_k - k a_{k+1})/sqrt(k(k+1))
// (rows a_i), O(rows cols).
func helmertLeft(a blas64.General) blas64.General {
	n, c := a.Rows, a.Cols
	out := blas64.General{Rows: n - 1, Cols: c, Stride: c, Data: make([]float64, (n-1)*c)}
	prefix := make([]float64, c)
	for k := 1; k < n; k++ {
		prev := a.Data[(k-1)*a.Stride : (k-1)*a.Stride+c]
		for j, v := range prev {
			prefix[j] += v
		}
		fk := float64(k)
		inv := 1 / math.Sqrt(fk*(fk+1))
		row := a.Data[k*a.Stride : k*a.Stride+c]
		dst := out.Data[(k-1)*c : k*c]
		for j := range dst {
			dst[j] = (prefix[j] - fk*row[j]) * inv
		}
	}
	return out
}

// helmertApply returns Q v (n x cols) for v with n-1 rows (see helmertLeft):
// row i is sum_{k>i} v_k/sqrt(k(k+1)) - i v_i/sqrt(i(i+1)) (1-based k, i),
// accumulated from the bottom.
func helmertApply(v blas64.General) blas64.General {
	n, c := v.Rows+1, v.Cols
	out := blas64.General{Rows: n, Cols: c, Stride: max(c, 1), Data: make([]float64, n*max(c, 1))}
	suffix := make([]float64, c)
	for i := n - 1; i >= 0; i-- {
		// suffix = sum over k >= i+1 (1-based k = row k-1 of v) of v_k/sqrt(k(k+1)).
		if i < n-1 {
			k := i + 1
			fk := float64(k)
			inv := 1 / math.Sqrt(fk*(fk+1))
			src := v.Data[(k-1)*v.Stride : (k-1)*v.Stride+c]
			for j, x := range src {
				suffix[j] += x * inv
			}
		}
		dst := out.Data[i*out.Stride : i*out.Stride+c]
		copy(dst, suffix)
		if i > 0 {
			fi := float64(i)
			inv := fi / math.Sqrt(fi*(fi+1))
			src := v.Data[(i-1)*v.Stride : (i-1)*v.Stride+c]
			for j, x := range src {
				dst[j] -= x * inv
			}
		}
	}
	return out
}

// transpose returns a^T in new storage.
func transpose(a blas64.General) blas64.General {
	out := blas64.General{Rows: a.Cols, Cols: a.Rows, Stride: a.Rows, Data: make([]float64, a.Rows*a.Cols)}
	for i := 0; i < a.Rows; i++ {
		for j, v := range a.Data[i*a.Stride : i*a.Stride+a.Cols] {
			out.Data[j*a.Rows+i] = v
		}
	}
	return out
}
