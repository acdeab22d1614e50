package kpca

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/kernels"
)

// Options configure batch and incremental kernel PCA.
type Options struct {
	// MeanAdjust centres the data in feature space (K' = H K H). Without it
	// the eigendecomposition is of K itself.
	MeanAdjust bool
	// Components keeps the top r eigenpairs; 0 keeps all of them. For
	// Incremental a positive value truncates after every update (see the
	// package documentation for the error this introduces).
	Components int
	// Backend runs the linear algebra; nil means backend.Default().
	Backend backend.Backend

	// ReorthThreshold > 0 turns on periodic re-orthogonalisation
	// (Incremental only): every CheckEvery points the drift is estimated with
	// Probes random probes (seeded by Seed) and, if the relative
	// reconstruction error or the orthogonality estimate exceeds the
	// threshold, the basis is refreshed by a Rayleigh-Ritz step.
	ReorthThreshold float64
	// CheckEvery is the check period in points; 0 means 50.
	CheckEvery int
	// Probes is the number of random probe vectors; 0 means 4.
	Probes int
	// Seed seeds the probe vectors.
	Seed uint64
}

func (o *Options) backend() backend.Backend {
	if o.Backend != nil {
		return o.Backend
	}
	return backend.Default()
}

// Stats counts the work an Incremental has done.
type Stats struct {
	Points  int // points incorporated
	Skipped int // points left out: always 0 (no point is ever skipped)
	Updates int // rank-one updates applied
	Reorths int // Rayleigh-Ritz re-orthogonalisations
	// UpdateTime is the time spent inside Add (kernel row, expansion and
	// rank-one updates), excluding drift checks.
	UpdateTime time.Duration
	// UpdateCPU is the process CPU time (all threads) spent inside Add; on a
	// loaded machine it is the more stable measure. 0 where not measured.
	UpdateCPU time.Duration
}

// Incremental maintains the eigendecomposition of a kernel matrix (centred or
// not) as points are added one at a time. It is not safe for concurrent use;
// Model returns an immutable snapshot that is.
type Incremental struct {
	k    kernels.Kernel
	b    backend.Backend
	opts Options
	dim  int

	n      int
	rowCap int
	x      []float64 // n x dim points, row-major
	kmat   []float64 // n x n uncentred kernel matrix, stride rowCap
	rowSum []float64 // row sums of kmat
	total  float64   // sum of all entries of kmat
	eig    eigState

	stats     Stats
	truncErr  float64 // sum over steps of |dropped part|_F
	sinceChk  int
	probeSeed uint64
}

// NewIncremental returns an empty incremental kernel PCA for points of
// dimension dim.
func NewIncremental(k kernels.Kernel, dim int, opts Options) (*Incremental, error) {
	if k == nil {
		return nil, fmt.Errorf("kpca: nil kernel: %w", zonal.ErrParam)
	}
	if dim <= 0 {
		return nil, fmt.Errorf("kpca: dimension %d: %w", dim, zonal.ErrParam)
	}
	if opts.Components < 0 || opts.CheckEvery < 0 || opts.Probes < 0 ||
		math.IsNaN(opts.ReorthThreshold) || opts.ReorthThreshold < 0 {
		return nil, fmt.Errorf("kpca: negative option (components %d, check every %d, probes %d, threshold %g): %w",
			opts.Components, opts.CheckEvery, opts.Probes, opts.ReorthThreshold, zonal.ErrParam)
	}
	if opts.CheckEvery == 0 {
		opts.CheckEvery = 50
	}
	if opts.Probes == 0 {
		opts.Probes = 4
	}
	return &Incremental{k: k, b: opts.backend(), opts: opts, dim: dim, probeSeed: opts.Seed}, nil
}

// Len returns the number of points incorporated.
func (s *Incremental) Len() int { return s.n }

// Rank returns the number of eigenpairs held: n, or n-1 with mean adjustment
// (the null vector 1/sqrt(n) of K' is not held), capped at Components when
// that is positive.
func (s *Incremental) Rank() int { return s.eig.r }

// InputDim returns the dimension of the points.
func (s *Incremental) InputDim() int { return s.dim }

// TruncationBound returns the accumulated Frobenius norm of the eigenpairs
// dropped by truncation (Options.Components > 0): the held decomposition
// satisfies |M - U Lambda U^T|_F <= TruncationBound() up to rounding. It is
// 0 without truncation.
func (s *Incremental) TruncationBound() float64 { return s.truncErr }

// Stats returns the work counters.
func (s *Incremental) Stats() Stats { return s.stats }

func (s *Incremental) colCap(rows int) int {
	if s.opts.Components > 0 {
		return min(rows, s.opts.Components+4)
	}
	return rows
}

func (s *Incremental) grow(need int) {
	if need <= s.rowCap {
		return
	}
	nc := max(need, 2*s.rowCap, 16)
	x := make([]float64, nc*s.dim)
	copy(x, s.x[:s.n*s.dim])
	km := make([]float64, nc*nc)
	for i := 0; i < s.n; i++ {
		copy(km[i*nc:i*nc+s.n], s.kmat[i*s.rowCap:i*s.rowCap+s.n])
	}
	rs := make([]float64, nc)
	copy(rs, s.rowSum[:s.n])
	s.x, s.kmat, s.rowSum, s.rowCap = x, km, rs, nc
	s.eig.reserve(nc, s.colCap(nc))
}

// Add incorporates the point x (length InputDim) into the decomposition:
// one expansion and two rank-one updates (see the package documentation for
// the mean-adjusted form). On
// error the point is not added and the state is unchanged unless the error
// came from the backend's update (then the Incremental must be discarded;
// errors.Is(err, zonal.ErrState) on later calls).
func (s *Incremental) Add(x []float64) error {
	if s.eig.n != s.n {
		return fmt.Errorf("kpca: a previous update failed: %w", zonal.ErrState)
	}
	if len(x) != s.dim {
		return fmt.Errorf("kpca: point of length %d, want %d: %w", len(x), s.dim, zonal.ErrShape)
	}
	for _, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("kpca: point holds %v: %w", v, zonal.ErrNonFinite)
		}
	}
	start, startCPU := time.Now(), cpuTime()
	m := s.n
	a := make([]float64, m)
	if m > 0 {
		if err := kernels.MatrixInto(context.Background(), mat.NewDense(1, m, a), s.k,
			mat.NewDense(1, s.dim, x), mat.NewDense(m, s.dim, s.x[:m*s.dim]), kernels.Options{Backend: s.b}); err != nil {
			return fmt.Errorf("kpca: kernel row: %w", err)
		}
	}
	kxx := s.k.Eval(x, x)
	if math.IsNaN(kxx) || math.IsInf(kxx, 0) {
		return fmt.Errorf("kpca: kernel value k(x,x) = %v: %w", kxx, zonal.ErrNonFinite)
	}
	for _, v := range a {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("kpca: kernel value %v: %w", v, zonal.ErrNonFinite)
		}
	}

	// The rank-one terms, from the state before the addition.
	var c float64
	var dir []float64
	var terms []rankOne
	if s.opts.MeanAdjust {
		if m > 0 {
			c, dir, terms = helmertTerms(s.rowSum[:m], s.total, a, kxx)
		}
	} else {
		c, terms = borderTerms(a, kxx)
	}

	s.grow(m + 1)
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

	var extra [][]float64
	if s.opts.Components > 0 {
		for _, t := range terms {
			extra = append(extra, t.v)
		}
	}
	if s.opts.MeanAdjust && m == 0 {
		s.eig.addZeroRow() // K'_1 = 0: no eigenvector orthogonal to 1
	} else {
		s.eig.expand(c, dir, extra)
	}
	for _, t := range terms {
		if err := s.eig.apply(s.b, t); err != nil {
			s.eig.n = -1 // poison: the decomposition no longer matches
			return fmt.Errorf("kpca: point %d: rank-one update: %w", m, err)
		}
		s.stats.Updates++
	}
	if r := s.opts.Components; r > 0 && s.eig.r > r {
		s.truncErr += math.Sqrt(s.eig.dropSmallest(s.eig.r - r))
	}
	s.stats.Points++
	s.stats.UpdateTime += time.Since(start)
	s.stats.UpdateCPU += cpuTime() - startCPU

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

// AddRows adds the rows of x in order, calling progress(done, total) after
// each point when progress is not nil. It stops with ctx's error when ctx is
// done; the points added so far stay added.
func (s *Incremental) AddRows(ctx context.Context, x mat.Matrix, progress func(done, total int)) error {
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
		if progress != nil {
			progress(i+1, r)
		}
	}
	return nil
}

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
// keeping the top `components` eigenpairs (0: all held).
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
// components (all held components) to dst; see Model.Transform.
func (s *Incremental) Transform(dst *mat.Dense, x mat.Matrix) error {
	m, err := s.Model(0)
	if err != nil {
		return err
	}
	return m.Transform(dst, x)
}

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

// Reorthogonalize refreshes the basis by a Rayleigh-Ritz step on the span of
// U (with mean adjustment, of U's projection onto 1^perp): with U^T U = L L^T and Q = U L^{-T}, it diagonalises Q^T M Q = W Theta W^T
// and sets U = Q W, Lambda = Theta. If U^T U is not positive definite the
// decomposition is recomputed in batch from M (top Components pairs).
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

// Init replaces the state by a batch eigendecomposition of the rows of x
// (the usual start: a batch decomposition of the first m0 points, then Add).
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
	xd := mat.DenseCopyOf(x)
	if err := checkFinite(xd); err != nil {
		return err
	}
	km := mat.NewDense(r, r, nil)
	if err := kernels.MatrixInto(ctx, km, s.k, xd, xd, kernels.Options{Backend: s.b}); err != nil {
		return fmt.Errorf("kpca: kernel matrix: %w", err)
	}
	if err := checkFinite(km); err != nil {
		return err
	}
	symmetrize(km.RawMatrix())
	*s = Incremental{k: s.k, b: s.b, opts: s.opts, dim: s.dim, probeSeed: s.probeSeed}
	s.grow(r)
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
	s.stats.Points = r
	m := blas64.General{Rows: r, Cols: r, Stride: r, Data: make([]float64, r*r)}
	s.matrixInto(m)
	return s.rebatch(m)
}

func frob(g blas64.General) float64 {
	// Scaled sum of squares to avoid overflow.
	scale, ssq := 0.0, 1.0
	for i := 0; i < g.Rows; i++ {
		for _, v := range g.Data[i*g.Stride : i*g.Stride+g.Cols] {
			if v != 0 {
				a := math.Abs(v)
				if scale < a {
					ssq = 1 + ssq*(scale/a)*(scale/a)
					scale = a
				} else {
					ssq += (a / scale) * (a / scale)
				}
			}
		}
	}
	return scale * math.Sqrt(ssq)
}

func symmetrize(g blas64.General) {
	for i := 0; i < g.Rows; i++ {
		for j := 0; j < i; j++ {
			v := 0.5 * (g.Data[i*g.Stride+j] + g.Data[j*g.Stride+i])
			g.Data[i*g.Stride+j], g.Data[j*g.Stride+i] = v, v
		}
	}
}

func checkFinite(m *mat.Dense) error {
	raw := m.RawMatrix()
	for i := 0; i < raw.Rows; i++ {
		for _, v := range raw.Data[i*raw.Stride : i*raw.Stride+raw.Cols] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("kpca: value %v: %w", v, zonal.ErrNonFinite)
			}
		}
	}
	return nil
}

// Clone returns an independent deep copy (for example to branch a growth
// experiment, or to time one Add repeatedly from the same state).
func (s *Incremental) Clone() *Incremental {
	c := *s
	c.x = append([]float64(nil), s.x...)
	c.kmat = append([]float64(nil), s.kmat...)
	c.rowSum = append([]float64(nil), s.rowSum...)
	c.eig.d = append(make([]float64, 0, cap(s.eig.d)), s.eig.d...)
	c.eig.dTmp = make([]float64, 0, cap(s.eig.dTmp))
	c.eig.buf = [2][]float64{append([]float64(nil), s.eig.buf[0]...), append([]float64(nil), s.eig.buf[1]...)}
	return &c
}

// Remove deletes point i (0-based, in the current order) from the
// decomposition: a downdate. The point is moved to the last position, the
// rank-one terms that would add it to the others are applied with opposite
// signs in reverse order (leaving diag(M_{n-1}, c), or [K'_{n-1} 0; 0 0] +
// c h h^T with mean adjustment), and the eigenvector e_n (h) is split off
// by a Householder reflection of its coordinates in U. The other
// points keep their order. Only the full decomposition can be downdated
// (Components == 0); otherwise the error wraps zonal.ErrState.
func (s *Incremental) Remove(i int) error {
	if s.eig.n != s.n {
		return fmt.Errorf("kpca: a previous update failed: %w", zonal.ErrState)
	}
	if s.opts.Components > 0 {
		return fmt.Errorf("kpca: Remove needs the full decomposition (Components = 0): %w", zonal.ErrState)
	}
	if i < 0 || i >= s.n {
		return fmt.Errorf("kpca: Remove(%d) of %d points: %w", i, s.n, zonal.ErrParam)
	}
	start, startCPU := time.Now(), cpuTime()
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
	s.stats.Points--
	s.stats.UpdateTime += time.Since(start)
	s.stats.UpdateCPU += cpuTime() - startCPU
	return nil
}
