package kpca

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// Drift holds the two drift measures.
type Drift struct {
	// RelRecon is |M - U Lambda U^T|_F / |M|_F (0 when M = 0).
	RelRecon float64
	// Orth is |U^T U - I|_max (exact) or an estimate of |U^T U - I|_F.
	Orth float64
}

// Drift computes the drift exactly, in O(n^2 r) time and O(n^2) memory.
func (s *Incremental) Drift() Drift {
	if s.n == 0 || s.eig.n != s.n {
		return Drift{}
	}
	n, r := s.n, s.eig.r
	u := s.eig.u()
	m := blas64.General{Rows: n, Cols: n, Stride: n, Data: make([]float64, n*n)}
	s.matrixInto(m)
	normM := frob(m)
	// M - U Lambda U^T: scale a copy of U by Lambda, then Gemm.
	ul := blas64.General{Rows: n, Cols: r, Stride: r, Data: make([]float64, n*r)}
	for i := 0; i < n; i++ {
		for j := 0; j < r; j++ {
			ul.Data[i*r+j] = u.Data[i*u.Stride+j] * s.eig.d[j]
		}
	}
	s.b.Gemm(blas.NoTrans, blas.Trans, -1, ul, u, 1, m)
	var d Drift
	if normM > 0 {
		d.RelRecon = frob(m) / normM
	}
	g := blas64.General{Rows: r, Cols: r, Stride: r, Data: make([]float64, r*r)}
	s.b.Syrk(blas.Trans, 1, u, 0, g)
	for i := 0; i < r; i++ {
		for j := 0; j < r; j++ {
			v := g.Data[i*r+j]
			if i == j {
				v--
			}
			d.Orth = math.Max(d.Orth, math.Abs(v))
		}
	}
	return d
}

// EstimateDrift estimates the drift from p Gaussian probe vectors seeded by
// seed, in O(n^2 p) time: RelRecon from |(M - U Lambda U^T) G|_F / |M G|_F and
// Orth from |(U^T U - I) G|_F / sqrt(p), an estimate of |U^T U - I|_F (an
// upper bound on the max norm in expectation).
func (s *Incremental) EstimateDrift(p int, seed uint64) Drift {
	if s.n == 0 || s.eig.n != s.n || p <= 0 {
		return Drift{}
	}
	n, r := s.n, s.eig.r
	u := s.eig.u()
	m := blas64.General{Rows: n, Cols: n, Stride: n, Data: make([]float64, n*n)}
	s.matrixInto(m)
	rng := newRand(seed)
	g := blas64.General{Rows: n, Cols: p, Stride: p, Data: make([]float64, n*p)}
	for i := range g.Data {
		g.Data[i] = rng.NormFloat64()
	}
	mg := blas64.General{Rows: n, Cols: p, Stride: p, Data: make([]float64, n*p)}
	s.b.Gemm(blas.NoTrans, blas.NoTrans, 1, m, g, 0, mg)
	normMG := frob(mg)
	// U Lambda U^T G: first W = U^T G (r x p), scale rows by Lambda.
	w := blas64.General{Rows: r, Cols: p, Stride: p, Data: make([]float64, r*p)}
	s.b.Gemm(blas.Trans, blas.NoTrans, 1, u, g, 0, w)
	var d Drift
	// Orthogonality: U^T U (first p columns of G restricted to r rows) - G.
	gr := blas64.General{Rows: r, Cols: p, Stride: p, Data: g.Data[:r*p]}
	uw := blas64.General{Rows: n, Cols: p, Stride: p, Data: make([]float64, n*p)}
	s.b.Gemm(blas.NoTrans, blas.NoTrans, 1, u, gr, 0, uw)
	ot := blas64.General{Rows: r, Cols: p, Stride: p, Data: make([]float64, r*p)}
	s.b.Gemm(blas.Trans, blas.NoTrans, 1, u, uw, 0, ot)
	for i := range ot.Data {
		ot.Data[i] -= gr.Data[i]
	}
	d.Orth = frob(ot) / math.Sqrt(float64(p))
	for i := 0; i < r; i++ {
		for j := 0; j < p; j++ {
			w.Data[i*p+j] *= s.eig.d[i]
		}
	}
	s.b.Gemm(blas.NoTrans, blas.NoTrans, -1, u, w, 1, mg)
	if normMG > 0 {
		d.RelRecon = frob(mg) / normMG
	}
	return d
}

// newRand returns a PCG generator seeded by seed.
func newRand(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
}
