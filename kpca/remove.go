package kpca

import (
	"fmt"

	"github.com/zonal-ml/zonal"
)

// Remove deletes point i (0-based, in the current order) from the
// decomposition: a downdate. The point is moved to the last position, the
// rank-one terms that would add it to the others are applied with opposite
// signs in reverse order (leaving diag(M_{n-1}, c), or [K'_{n-1} 0; 0 0] +
// c h h^T with mean adjustment), and the eigenvector e_n (h) is split off
// by a Householder reflection of its coordinates in U. The other
// points keep their order.
//
// Errors: zonal.ErrState (Components > 0: only the full decomposition can
// be downdated; or a previous update failed), zonal.ErrRange (i outside
// [0, Len())). An error from the backend's rank-one update
// (zonal.ErrNoConvergence) leaves the decomposition inconsistent, as in Add.
func (s *Incremental) Remove(i int) error {
	if s.eig.n != s.n {
		return fmt.Errorf("kpca: a previous update failed: %w", zonal.ErrState)
	}
	if s.opts.Components > 0 {
		return fmt.Errorf("kpca: Remove needs the full decomposition (Components = 0): %w", zonal.ErrState)
	}
	if i < 0 || i >= s.n {
		return fmt.Errorf("kpca: Remove(%d) of %d points: %w", i, s.n, zonal.ErrRange)
	}
	n, rc, d := s.n, s.rowCap, s.dim
	kii := s.kmat[i*rc+i]
	a := make([]float64, 0, n-1)
	for j := 0; j < n; j++ {
		if j != i {
			a = append(a, s.kmat[i*rc+j])
		}
	}
	// Storage without point i: points, kernel matrix, sums.
	copy(s.x[i*d:], s.x[(i+1)*d:n*d])
	for r := 0; r < n; r++ {
		if r == i {
			continue
		}
		row := s.kmat[r*rc : r*rc+n]
		copy(row[i:], row[i+1:])
	}
	for r := i; r < n-1; r++ {
		copy(s.kmat[r*rc:r*rc+n-1], s.kmat[(r+1)*rc:(r+1)*rc+n-1])
	}
	copy(s.rowSum[i:], s.rowSum[i+1:n])
	sa := 0.0
	for j, v := range a {
		s.rowSum[j] -= v
		sa += v
	}
	s.total -= 2*sa + kii
	s.n = n - 1

	var dir []float64
	var terms []rankOne
	if s.opts.MeanAdjust {
		if n > 1 {
			_, dir, terms = helmertTerms(s.rowSum[:n-1], s.total, a, kii)
		}
	} else {
		_, terms = borderTerms(a, kii)
	}
	s.eig.moveRowToEnd(i)
	for k := len(terms) - 1; k >= 0; k-- {
		t := terms[k]
		if err := s.eig.apply(s.b, rankOne{-t.rho, t.v}); err != nil {
			s.eig.n = -1
			return fmt.Errorf("kpca: removing point %d: rank-one update: %w", i, err)
		}
		s.stats.Updates++
	}
	if s.opts.MeanAdjust && n == 1 {
		s.eig.n = 0 // the last point: no column to split off
	} else {
		s.eig.splitOff(dir)
	}
	return nil
}
