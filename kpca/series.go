package kpca

import (
	"context"
	"fmt"
	"math"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/kernels"
)

// GrowConfig describes a growth experiment: start from a batch decomposition
// of the first Start rows of X, add the rest one at a time, and report at
// checkpoints.
type GrowConfig struct {
	Kernel  kernels.Kernel
	X       mat.Matrix // the points, added in row order
	Options Options
	// Start is the size of the initial batch decomposition (>= 1; 0 means 1).
	Start int
	// Points is the final number of points (0: all rows of X).
	Points int
	// Every: checkpoint every Every points (0: 10), and always at the end.
	Every int
	// Checkpoints, if not empty, replaces Every by an explicit list of sizes.
	Checkpoints []int
	// Batch also runs a batch eigendecomposition of the same matrix at each
	// checkpoint (for BatchRelDiffEigs and BatchSeconds).
	Batch bool
	// Progress, if not nil, is called after every point.
	Progress func(done, total int)
}

// Checkpoint is the state of a growth experiment after Points points.
type Checkpoint struct {
	Points     int     `json:"points"`
	MeanAdjust bool    `json:"mean_adjust"`
	RelRecon   float64 `json:"rel_recon"` // |M - U Lambda U^T|_F / |M|_F (exact)
	Orth       float64 `json:"orth"`      // |U^T U - I|_max (exact)
	// BatchRelDiffEigs is max_j |lambda_j - lambda_j^batch| / max_j |lambda_j^batch|
	// (NaN when GrowConfig.Batch is false).
	BatchRelDiffEigs float64 `json:"batch_rel_diff_eigs"`
	// UpdateSeconds is the mean time of one Add since the previous checkpoint.
	UpdateSeconds float64 `json:"update_seconds"`
	// TotalSeconds is the time of all Adds (and the initial batch) so far.
	TotalSeconds float64 `json:"total_seconds"`
	// BatchSeconds is the time of a batch eigendecomposition of the same
	// matrix (NaN when GrowConfig.Batch is false).
	BatchSeconds float64 `json:"batch_seconds"`
	// UpdateCPUSeconds and BatchCPUSeconds are the same as process CPU
	// time (all threads), stable under load from other processes.
	UpdateCPUSeconds float64 `json:"update_cpu_seconds"`
	BatchCPUSeconds  float64 `json:"batch_cpu_seconds"`
	Skipped          int     `json:"skipped"`
	Reorths          int     `json:"reorths"`
}

// Grow runs the experiment of cfg, calling emit at every checkpoint; it stops
// at the first error from emit, the decomposition or ctx. It is what
// `zonal kpca` runs and what a figure of drift against points plots
// (DriftSeries).
func Grow(ctx context.Context, cfg GrowConfig, emit func(Checkpoint) error) error {
	if cfg.Kernel == nil || cfg.X == nil {
		return fmt.Errorf("kpca: Grow needs a kernel and data: %w", zonal.ErrParam)
	}
	n, d := cfg.X.Dims()
	points := cfg.Points
	if points == 0 {
		points = n
	}
	start := max(cfg.Start, 1)
	if points > n || start > points || points < 1 || cfg.Every < 0 {
		return fmt.Errorf("kpca: grow from %d to %d points of %d (every %d): %w", start, points, n, cfg.Every, zonal.ErrParam)
	}
	every := cfg.Every
	if every == 0 {
		every = 10
	}
	want := map[int]bool{points: true}
	if len(cfg.Checkpoints) > 0 {
		for _, c := range cfg.Checkpoints {
			want[c] = true
		}
	} else {
		for c := start; c <= points; c += every {
			want[c] = true
		}
	}
	inc, err := NewIncremental(cfg.Kernel, d, cfg.Options)
	if err != nil {
		return err
	}
	t0 := time.Now()
	if err := inc.Init(ctx, rowsOf(cfg.X, 0, start)); err != nil {
		return err
	}
	initTime := time.Since(t0)
	row := make([]float64, d)
	lastCount, lastTime, lastCPU := 0, time.Duration(0), time.Duration(0)
	check := func() error {
		st := inc.Stats()
		cp := Checkpoint{Points: inc.Len(), MeanAdjust: cfg.Options.MeanAdjust, Skipped: st.Skipped,
			Reorths: st.Reorths, BatchRelDiffEigs: math.NaN(), BatchSeconds: math.NaN(), BatchCPUSeconds: math.NaN()}
		adds := st.Points - start - lastCount
		if adds > 0 {
			cp.UpdateSeconds = (st.UpdateTime - lastTime).Seconds() / float64(adds)
			cp.UpdateCPUSeconds = (st.UpdateCPU - lastCPU).Seconds() / float64(adds)
		}
		lastCount, lastTime, lastCPU = st.Points-start, st.UpdateTime, st.UpdateCPU
		cp.TotalSeconds = (initTime + st.UpdateTime).Seconds()
		dr := inc.Drift()
		cp.RelRecon, cp.Orth = dr.RelRecon, dr.Orth
		if cfg.Batch {
			m := inc.Matrix()
			nn, _ := m.Dims()
			w := make([]float64, nn)
			tb, tbc := time.Now(), cpuTime()
			if err := inc.b.SymEig(m.RawMatrix(), w, true); err != nil {
				return err
			}
			cp.BatchSeconds = time.Since(tb).Seconds()
			cp.BatchCPUSeconds = (cpuTime() - tbc).Seconds()
			vals, _ := inc.Eigen()
			lmax, diff := 0.0, 0.0
			for j := range vals {
				bj := w[nn-1-j]
				lmax = math.Max(lmax, math.Abs(bj))
				diff = math.Max(diff, math.Abs(vals[j]-bj))
			}
			if lmax > 0 {
				cp.BatchRelDiffEigs = diff / lmax
			} else {
				cp.BatchRelDiffEigs = diff
			}
		}
		return emit(cp)
	}
	if want[start] {
		if err := check(); err != nil {
			return err
		}
	}
	for i := start; i < points; i++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		mat.Row(row, i, cfg.X)
		if err := inc.Add(row); err != nil {
			return fmt.Errorf("point %d: %w", i, err)
		}
		if cfg.Progress != nil {
			cfg.Progress(i+1, points)
		}
		if want[i+1] {
			if err := check(); err != nil {
				return err
			}
		}
	}
	return nil
}

func rowsOf(x mat.Matrix, from, to int) *mat.Dense {
	_, d := x.Dims()
	out := mat.NewDense(to-from, d, nil)
	row := make([]float64, d)
	for i := from; i < to; i++ {
		mat.Row(row, i, x)
		out.SetRow(i-from, row)
	}
	return out
}

// DriftSeries grows the decomposition of the rows of x from start points,
// adding every point, and returns the exact drift (relative reconstruction
// error and orthogonality) every `every` points: the data of the paper's
// Figure 1.
func DriftSeries(ctx context.Context, k kernels.Kernel, x mat.Matrix, opts Options, start, every int) ([]Checkpoint, error) {
	var out []Checkpoint
	err := Grow(ctx, GrowConfig{Kernel: k, X: x, Options: opts, Start: start, Every: every}, func(c Checkpoint) error {
		out = append(out, c)
		return nil
	})
	return out, err
}

// NystromError is the error of the Nystrom approximation of K with the given
// number of landmarks, each relative to the same norm of K.
type NystromError struct {
	Landmarks int     `json:"landmarks"`
	Frobenius float64 `json:"rel_frobenius"` // |K - K~|_F / |K|_F
	Spectral  float64 `json:"rel_spectral"`  // |K - K~|_2 / |K|_2
	Trace     float64 `json:"rel_trace"`     // |K - K~|_* / |K|_* (trace norm)
	Features  int     `json:"features"`      // numerical rank of K_mm
}

// NystromErrors grows an incremental Nystrom approximation of the kernel
// matrix of the rows of x, with the rows landmarks[0], landmarks[1], ... of x
// added one at a time (nil: rows 0, 1, 2, ...), and returns the errors when
// the number of landmarks is from, from+every, ..., to: the data of the
// paper's Figure 2. The norms come from the eigenvalues of K - K~ (symmetric):
// spectral = max |mu|, trace = sum |mu|.
func NystromErrors(ctx context.Context, k kernels.Kernel, x mat.Matrix, landmarks []int, from, to, every int, opts Options) ([]NystromError, error) {
	n, d := x.Dims()
	if landmarks == nil {
		landmarks = make([]int, min(n, to))
		for i := range landmarks {
			landmarks[i] = i
		}
	}
	if from < 1 || to < from || to > len(landmarks) || every < 1 {
		return nil, fmt.Errorf("kpca: Nystrom errors from %d to %d every %d with %d landmarks: %w", from, to, every, len(landmarks), zonal.ErrParam)
	}
	b := opts.backend()
	xd := mat.DenseCopyOf(x)
	kmat := mat.NewDense(n, n, nil)
	if err := kernels.MatrixInto(ctx, kmat, k, xd, xd, kernels.Options{Backend: b}); err != nil {
		return nil, err
	}
	symmetrize(kmat.RawMatrix())
	norms := func(m *mat.Dense) (f, s, t float64, err error) {
		f = frob(m.RawMatrix())
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
	ny, err := NewNystrom(k, d, b)
	if err != nil {
		return nil, err
	}
	var out []NystromError
	row := make([]float64, d)
	for j := 0; j < to; j++ {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		if landmarks[j] < 0 || landmarks[j] >= n {
			return out, fmt.Errorf("kpca: landmark index %d of %d rows: %w", landmarks[j], n, zonal.ErrParam)
		}
		mat.Row(row, landmarks[j], xd)
		if err := ny.Add(row); err != nil {
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
		approx, err := nm.Approximation(xd)
		if err != nil {
			return out, err
		}
		diff := mat.NewDense(n, n, nil)
		diff.Sub(kmat, approx)
		f, s, t, err := norms(diff)
		if err != nil {
			return out, err
		}
		out = append(out, NystromError{Landmarks: m, Frobenius: f / kf, Spectral: s / ks, Trace: t / kt, Features: nm.Dim()})
	}
	return out, nil
}
