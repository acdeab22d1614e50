package kpca

import (
	"fmt"
	"math"
	"time"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/kernels"
)

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
