package kpca

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
)

// Add incorporates the point x (length InputDim) into the decomposition:
// one bordered (arrowhead) eigen-update, backend.BorderedUpdate (see the
// package documentation for the mean-adjusted form and for truncation),
// then, with Options.ReorthThreshold > 0, the periodic drift check. Its
// cost is the kernel row (O(n InputDim)), O(n r) for the border
// coordinates, O(r^2) for the roots and one n x r by r x (r+1) product
// for the eigenvectors: O(n r^2), with r = n - 1 or n in full, and r <=
// Components + 1 when truncated. A caller that wants the time per point
// measures it around Add.
//
// Errors: zonal.ErrShape (wrong length), zonal.ErrNonFinite (NaN or Inf in
// x or in a kernel value), zonal.ErrTooLarge (the grown state exceeds
// Options.MemoryBudget), zonal.ErrState (a previous update failed). In
// these cases the point is not added and the state is unchanged. An error
// from the backend's rank-one update (zonal.ErrNoConvergence) leaves the
// decomposition inconsistent: the Incremental must be discarded, and later
// calls return zonal.ErrState. An error from re-orthogonalisation comes
// after the point was added.
func (s *Incremental) Add(x []float64) error {
	if s.eig.n != s.n {
		return fmt.Errorf("kpca: a previous update failed: %w", zonal.ErrState)
	}
	m := s.n
	a, kxx, err := borderRow(s.k, s.b, x, s.dim, s.x, m, "point")
	if err != nil {
		return err
	}

	// The bordering, from the state before the addition.
	var g, h []float64
	var kappa float64
	var c float64
	var dir []float64
	var terms []rankOne
	switch {
	case s.twoUpdate && s.opts.MeanAdjust:
		if m > 0 {
			c, dir, terms = helmertTerms(s.rowSum[:m], s.total, a, kxx)
		}
	case s.twoUpdate:
		c, terms = borderTerms(a, kxx)
	case s.opts.MeanAdjust:
		if m > 0 {
			g, kappa, h = helmertBorder(s.rowSum[:m], s.total, a, kxx)
		}
	default:
		g, kappa = a, kxx
	}

	if err := s.grow(m + 1); err != nil {
		return err
	}
	copy(s.x[m*s.dim:], x)
	rc := s.rowCap
	for i := 0; i < m; i++ {
		s.kmat[i*rc+m] = a[i]
		s.kmat[m*rc+i] = a[i]
		s.rowSum[i] += a[i]
	}
	s.kmat[m*rc+m] = kxx
	sa := 0.0
	for _, v := range a {
		sa += v
	}
	s.rowSum[m] = sa + kxx
	s.total += 2*sa + kxx
	s.n = m + 1

	trunc := s.opts.Components > 0
	switch {
	case s.opts.MeanAdjust && m == 0:
		s.eig.addZeroRow() // K'_1 = 0: no eigenvector orthogonal to 1
	case s.twoUpdate:
		var extra [][]float64
		if trunc {
			for _, t := range terms {
				extra = append(extra, t.v)
			}
		}
		s.eig.expand(c, dir, extra)
		for _, t := range terms {
			if err := s.eig.apply(s.b, t); err != nil {
				s.eig.n = -1 // poison: the decomposition no longer matches
				return fmt.Errorf("kpca: point %d: rank-one update: %w", m, err)
			}
			s.stats.Updates++
		}
	default:
		dropped, err := s.eig.border(s.b, g, kappa, h, trunc)
		if err != nil {
			s.eig.n = -1
			return fmt.Errorf("kpca: point %d: bordered update: %w", m, err)
		}
		s.truncErr += dropped
		s.stats.Bordered++
	}
	if r := s.opts.Components; r > 0 && s.eig.r > r {
		s.truncErr += math.Sqrt(s.eig.dropSmallest(s.eig.r - r))
	}

	if s.opts.ReorthThreshold > 0 {
		s.sinceChk++
		if s.sinceChk >= s.opts.CheckEvery {
			s.sinceChk = 0
			s.probeSeed++
			d := s.EstimateDrift(s.opts.Probes, s.probeSeed)
			if d.RelRecon > s.opts.ReorthThreshold || d.Orth > s.opts.ReorthThreshold {
				if err := s.Reorthogonalize(); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// AddRows adds the rows of x in order, reporting zonal.Progress{Stage:
// "points", Done: i+1, Total: rows} to Options.Progress after each point. It
// stops with ctx's error when ctx is done; the points added so far stay
// added. Errors: zonal.ErrShape (x's width is not InputDim), ctx.Err(), and
// those of Add (wrapped with the row index).
func (s *Incremental) AddRows(ctx context.Context, x mat.Matrix) error {
	r, c := x.Dims()
	if c != s.dim {
		return fmt.Errorf("kpca: %d columns, want %d: %w", c, s.dim, zonal.ErrShape)
	}
	row := make([]float64, c)
	for i := 0; i < r; i++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		mat.Row(row, i, x)
		if err := s.Add(row); err != nil {
			return fmt.Errorf("row %d: %w", i, err)
		}
		s.opts.report("points", i+1, r)
	}
	return nil
}
