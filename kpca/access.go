package kpca

import (
	"fmt"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
)

// Eigen returns copies of the eigenvalues (descending) and eigenvectors
// (columns of an n x r matrix, in the same order) held now.
func (s *Incremental) Eigen() ([]float64, *mat.Dense) {
	u := s.eig.u()
	r := s.eig.r
	vals := make([]float64, r)
	if r == 0 || s.n <= 0 {
		return vals, &mat.Dense{}
	}
	vecs := mat.NewDense(s.n, r, nil)
	for j := 0; j < r; j++ {
		vals[j] = s.eig.d[r-1-j]
	}
	for i := 0; i < s.n; i++ {
		src := u.Data[i*u.Stride : i*u.Stride+r]
		for j := 0; j < r; j++ {
			vecs.Set(i, j, src[r-1-j])
		}
	}
	return vals, vecs
}

// Matrix returns a copy of the matrix being decomposed: K' (mean adjustment)
// or K, n x n.
func (s *Incremental) Matrix() *mat.Dense {
	if s.n == 0 {
		return &mat.Dense{}
	}
	out := mat.NewDense(s.n, s.n, nil)
	s.matrixInto(out.RawMatrix())
	return out
}

func (s *Incremental) matrixInto(g blas64.General) {
	n := s.n
	rc := s.rowCap
	mean2 := s.total / float64(n*n)
	for i := 0; i < n; i++ {
		row := g.Data[i*g.Stride : i*g.Stride+n]
		copy(row, s.kmat[i*rc:i*rc+n])
		if s.opts.MeanAdjust {
			ri := s.rowSum[i] / float64(n)
			for j := range row {
				row[j] += mean2 - ri - s.rowSum[j]/float64(n)
			}
		}
	}
}

// Points returns a copy of the points added so far (n x InputDim).
func (s *Incremental) Points() *mat.Dense {
	if s.n == 0 {
		return &mat.Dense{}
	}
	return mat.NewDense(s.n, s.dim, append([]float64(nil), s.x[:s.n*s.dim]...))
}

// Model returns an immutable snapshot usable for Transform at any time,
// keeping the top `components` eigenpairs (0: all held). Errors:
// zonal.ErrState (no points, or a previous update failed), zonal.ErrParam
// (components < 0).
func (s *Incremental) Model(components int) (*Model, error) {
	if s.n == 0 || s.eig.n != s.n {
		return nil, fmt.Errorf("kpca: no points: %w", zonal.ErrState)
	}
	if components < 0 {
		return nil, fmt.Errorf("kpca: components %d: %w", components, zonal.ErrParam)
	}
	vals, vecs := s.Eigen()
	trace := 0.0
	for i := 0; i < s.n; i++ {
		trace += s.kmat[i*s.rowCap+i]
	}
	if s.opts.MeanAdjust {
		trace -= s.total / float64(s.n)
	}
	return newModel(s.k, s.b, s.Points(), s.opts.MeanAdjust, s.rowSum[:s.n], s.total, trace, vals, vecs, components)
}

// Transform writes the scores of the rows of x on the current top
// components (all held components) to dst; see Model.Transform. Errors:
// those of Model and Model.Transform.
func (s *Incremental) Transform(dst *mat.Dense, x mat.Matrix) error {
	m, err := s.Model(0)
	if err != nil {
		return err
	}
	return m.Transform(dst, x)
}
