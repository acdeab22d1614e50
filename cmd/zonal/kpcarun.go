package main

import (
	"context"
	"fmt"
	"math"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/internal/budget"
	"github.com/zonal-ml/zonal/internal/cputime"
	"github.com/zonal-ml/zonal/kernels"
	"github.com/zonal-ml/zonal/kpca"
)

// The experiment harness of `zonal kpca`: it drives the library (package
// kpca) and measures it, but is not part of it.

// growConfig describes a growth experiment: start from a batch decomposition
// of the first start rows of x, add the rest one at a time, and report at
// checkpoints.
type growConfig struct {
	kernel kernels.Kernel
	x      *mat.Dense // the points, added in row order
	// opts configure the Incremental; opts.Progress also receives Stage
	// "points" after every added point.
	opts kpca.Options
	// start is the size of the initial batch decomposition (>= 1).
	start int
	// points is the final number of points (<= rows of x).
	points int
	// every: checkpoint every `every` points from start (0: 10), and always
	// at the end; checkpoints, if not empty, replaces it by explicit sizes.
	every       int
	checkpoints []int
	// batch also runs a batch eigendecomposition of the same matrix at each
	// checkpoint (batchRelDiffEigs, batchSeconds).
	batch bool
	// done, if not nil, receives the grown decomposition after the last
	// checkpoint.
	done func(*kpca.Incremental) error
}

// checkpoint is the state of a growth experiment after points points.
type checkpoint struct {
	points     int
	meanAdjust bool
	relRecon   float64 // |M - U Lambda U^T|_F / |M|_F (exact)
	orth       float64 // |U^T U - I|_max (exact)
	// batchRelDiffEigs is max_j |lambda_j - lambda_j^batch| / max_j |lambda_j^batch|
	// (NaN without growConfig.batch).
	batchRelDiffEigs float64
	// updateSeconds is the mean wall time of one Add since the previous
	// checkpoint, measured around the call (it includes the drift checks
	// of -reorth); totalSeconds that of the initial batch and all Adds.
	updateSeconds, totalSeconds float64
	// batchSeconds is the wall time of a batch eigendecomposition of the
	// same matrix (NaN without growConfig.batch).
	batchSeconds float64
	// updateCPUSeconds and batchCPUSeconds are the same as process CPU time
	// (all threads), stable under load from other processes; 0 where the
	// platform does not measure it.
	updateCPUSeconds, batchCPUSeconds float64
	reorths                           int
	// truncBound is Incremental.TruncationBound relative to |M|_F: the
	// documented bound on relRecon with -components (0 without).
	truncBound float64
}

// grow runs the experiment of cfg, calling emit at every checkpoint; it stops
// at the first error from emit, the decomposition or ctx.
func grow(ctx context.Context, cfg growConfig, emit func(checkpoint) error) error {
	if cfg.kernel == nil || cfg.x == nil {
		return fmt.Errorf("kpca: grow needs a kernel and data: %w", zonal.ErrParam)
	}
	n, d := cfg.x.Dims()
	if cfg.points > n || cfg.start < 1 || cfg.start > cfg.points || cfg.every < 0 {
		return fmt.Errorf("kpca: grow from %d to %d points of %d (every %d): %w", cfg.start, cfg.points, n, cfg.every, zonal.ErrParam)
	}
	every := cfg.every
	if every == 0 {
		every = 10
	}
	want := map[int]bool{cfg.points: true}
	if len(cfg.checkpoints) > 0 {
		for _, c := range cfg.checkpoints {
			want[c] = true
		}
	} else {
		for c := cfg.start; c <= cfg.points; c += every {
			want[c] = true
		}
	}
	b := cfg.opts.Backend
	if b == nil {
		b = backend.Default()
	}
	inc, err := kpca.NewIncremental(cfg.kernel, d, cfg.opts)
	if err != nil {
		return err
	}
	t0 := time.Now()
	if err := inc.Init(ctx, cfg.x.Slice(0, cfg.start, 0, d)); err != nil {
		return err
	}
	initTime := time.Since(t0)
	var addTime, addCPU, lastTime, lastCPU time.Duration
	lastCount := cfg.start
	check := func() error {
		cp := checkpoint{points: inc.Len(), meanAdjust: cfg.opts.MeanAdjust, reorths: inc.Stats().Reorths,
			batchRelDiffEigs: math.NaN(), batchSeconds: math.NaN(), batchCPUSeconds: math.NaN()}
		if adds := inc.Len() - lastCount; adds > 0 {
			cp.updateSeconds = (addTime - lastTime).Seconds() / float64(adds)
			cp.updateCPUSeconds = (addCPU - lastCPU).Seconds() / float64(adds)
		}
		lastCount, lastTime, lastCPU = inc.Len(), addTime, addCPU
		cp.totalSeconds = (initTime + addTime).Seconds()
		dr := inc.Drift()
		cp.relRecon, cp.orth = dr.RelRecon, dr.Orth
		if tb := inc.TruncationBound(); tb > 0 {
			if nm := mat.Norm(inc.Matrix(), 2); nm > 0 {
				cp.truncBound = tb / nm
			}
		}
		if cfg.batch {
			if err := batchCompare(b, inc, &cp); err != nil {
				return err
			}
		}
		return emit(cp)
	}
	if want[cfg.start] {
		if err := check(); err != nil {
			return err
		}
	}
	for i := cfg.start; i < cfg.points; i++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		row := cfg.x.RawRowView(i)
		ts, tc := time.Now(), cputime.Process()
		err := inc.Add(row)
		addTime += time.Since(ts)
		addCPU += cputime.Process() - tc
		if err != nil {
			return fmt.Errorf("point %d: %w", i, err)
		}
		cfg.opts.Progress.Report(zonal.Progress{Stage: "points", Done: i + 1, Total: cfg.points})
		if want[i+1] {
			if err := check(); err != nil {
				return err
			}
		}
	}
	if cfg.done != nil {
		return cfg.done(inc)
	}
	return nil
}

// batchCompare times a batch eigendecomposition of the matrix inc decomposes
// and sets cp's largest eigenvalue difference relative to the largest batch
// eigenvalue (absolute when that is 0).
func batchCompare(b backend.Backend, inc *kpca.Incremental, cp *checkpoint) error {
	m := inc.Matrix()
	nn, _ := m.Dims()
	w := make([]float64, nn)
	tb, tbc := time.Now(), cputime.Process()
	if err := b.SymEig(m.RawMatrix(), w, true); err != nil {
		return err
	}
	cp.batchSeconds = time.Since(tb).Seconds()
	cp.batchCPUSeconds = (cputime.Process() - tbc).Seconds()
	vals, _ := inc.Eigen()
	lmax, diff := 0.0, 0.0
	for j := range vals {
		bj := w[nn-1-j]
		lmax = math.Max(lmax, math.Abs(bj))
		diff = math.Max(diff, math.Abs(vals[j]-bj))
	}
	cp.batchRelDiffEigs = diff
	if lmax > 0 {
		cp.batchRelDiffEigs = diff / lmax
	}
	return nil
}

// nystromError is the error of the Nystrom approximation K~ of K with the
// given number of landmarks, each relative to the same norm of K.
type nystromError struct {
	Landmarks int     `json:"landmarks"`
	Frobenius float64 `json:"rel_frobenius"` // |K - K~|_F / |K|_F
	Spectral  float64 `json:"rel_spectral"`  // |K - K~|_2 / |K|_2
	Trace     float64 `json:"rel_trace"`     // |K - K~|_* / |K|_* (trace norm)
	Features  int     `json:"features"`      // numerical rank of K_mm
}

// nystromErrors grows an incremental Nystrom approximation of the kernel
// matrix of the rows of x, adding rows 0, 1, 2, ... as landmarks, and
// returns the errors when the number of landmarks is from, from+every, ...,
// and to. The norms come from the eigenvalues mu of the symmetric K - K~:
// spectral = max |mu|, trace = sum |mu|. The n x n matrices are checked
// against opts.MemoryBudget first.
func nystromErrors(ctx context.Context, k kernels.Kernel, x *mat.Dense, from, to, every int, opts kpca.Options) ([]nystromError, error) {
	n, d := x.Dims()
	if from < 1 || to < from || to > n || every < 1 {
		return nil, fmt.Errorf("kpca: Nystrom errors from %d to %d every %d with %d rows: %w", from, to, every, n, zonal.ErrParam)
	}
	// K, K~, K - K~ and the eigenvalue work copy.
	if err := budget.Check(fmt.Sprintf("Nystrom errors on %d points", n), budget.Floats(4, n, n), opts.MemoryBudget); err != nil {
		return nil, err
	}
	b := opts.Backend
	if b == nil {
		b = backend.Default()
	}
	kmat := mat.NewDense(n, n, nil)
	if err := kernels.MatrixInto(ctx, kmat, k, x, x, kernels.Options{Backend: b}); err != nil {
		return nil, err
	}
	symmetrizeInPlace(kmat)
	norms := func(m *mat.Dense) (f, s, t float64, err error) {
		f = mat.Norm(m, 2) // the Frobenius norm for a matrix
		w := make([]float64, n)
		c := mat.DenseCopyOf(m)
		if err = b.SymEig(c.RawMatrix(), w, false); err != nil {
			return
		}
		for _, v := range w {
			s = math.Max(s, math.Abs(v))
			t += math.Abs(v)
		}
		return
	}
	kf, ks, kt, err := norms(kmat)
	if err != nil {
		return nil, err
	}
	ny, err := kpca.NewNystrom(k, d, kpca.Options{Backend: b, MemoryBudget: opts.MemoryBudget, RCond: opts.RCond})
	if err != nil {
		return nil, err
	}
	var out []nystromError
	for j := 0; j < to; j++ {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		if err := ny.Add(x.RawRowView(j)); err != nil {
			return out, err
		}
		m := j + 1
		if m < from || (m-from)%every != 0 && m != to {
			continue
		}
		nm, err := ny.Map()
		if err != nil {
			return out, err
		}
		approx, err := nm.Approximation(x)
		if err != nil {
			return out, err
		}
		approx.Sub(kmat, approx)
		f, s, t, err := norms(approx)
		if err != nil {
			return out, err
		}
		out = append(out, nystromError{Landmarks: m, Frobenius: f / kf, Spectral: s / ks, Trace: t / kt, Features: nm.Dim()})
		opts.Progress.Report(zonal.Progress{Stage: "landmarks", Done: m, Total: to})
	}
	return out, nil
}

// symmetrizeInPlace replaces the square a by (a + a^T)/2.
func symmetrizeInPlace(a *mat.Dense) {
	n, _ := a.Dims()
	for i := 0; i < n; i++ {
		for j := 0; j < i; j++ {
			v := 0.5 * (a.At(i, j) + a.At(j, i))
			a.Set(i, j, v)
			a.Set(j, i, v)
		}
	}
}
