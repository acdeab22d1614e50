package kpca

import (
	"fmt"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/internal/budget"
	"github.com/zonal-ml/zonal/kernels"
)

// Stats counts the work an Incremental has done.
type Stats struct {
	Updates  int // rank-one updates applied (Remove)
	Bordered int // bordered (arrowhead) updates applied (Add)
	Reorths  int // Rayleigh-Ritz re-orthogonalisations
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

	// twoUpdate makes Add use the expansion and two rank-one updates of
	// the paper instead of one bordered update (tests and benchmarks
	// compare the two).
	twoUpdate bool
}

// NewIncremental returns an empty incremental kernel PCA for points of
// dimension dim; start it with Init or Add. The error wraps zonal.ErrParam
// (nil kernel, dim <= 0, a negative or NaN option).
func NewIncremental(k kernels.Kernel, dim int, opts Options) (*Incremental, error) {
	if k == nil {
		return nil, fmt.Errorf("kpca: nil kernel: %w", zonal.ErrParam)
	}
	if dim <= 0 {
		return nil, fmt.Errorf("kpca: dimension %d: %w", dim, zonal.ErrParam)
	}
	if err := opts.check(); err != nil {
		return nil, err
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

// stateBytes is the memory of the state for a capacity of rows points:
// points, kernel matrix, row sums and the two eigenvector buffers.
func (s *Incremental) stateBytes(rows int) int64 {
	return budget.Floats(rows, s.dim) + budget.Floats(rows, rows) + budget.Floats(rows) +
		budget.Floats(2, rows, s.colCap(rows))
}

// grow makes room for need points, doubling the capacity when that fits the
// memory budget; the error wraps zonal.ErrTooLarge and leaves the state
// unchanged.
func (s *Incremental) grow(need int) error {
	if need <= s.rowCap {
		return nil
	}
	nc := max(need, 2*s.rowCap, 16)
	if s.stateBytes(nc) > budget.Or(s.opts.MemoryBudget) {
		nc = need
	}
	if err := s.opts.checkBudget(fmt.Sprintf("incremental KPCA of %d points", nc), s.stateBytes(nc)); err != nil {
		return err
	}
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
	return nil
}

// Clone returns an independent deep copy (for example to branch from one
// state, or to time one Add repeatedly from the same state).
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
