package kpca

import (
	"fmt"
	"math"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/internal/budget"
)

// Options configure Fit, NewIncremental, NewNystrom and NewNystromMap. The
// first three fields are the ones every zonal package shares; the others say
// which constructors they apply to.
type Options struct {
	// Backend runs the linear algebra; nil means backend.Default(). Models
	// and maps keep it for Transform.
	Backend backend.Backend
	// Progress, if not nil, receives progress reports from the goroutine
	// doing the work: Fit and Init report Stage "kernel" and "eigen"
	// (Done/Total 0/1 and 1/1), Incremental.AddRows Stage "points" after
	// every point (Done of Total rows).
	Progress zonal.ProgressFunc
	// MemoryBudget bounds the n x n kernel matrices and eigenvector buffers,
	// in bytes, checked before they are allocated; 0 means
	// zonal.DefaultMemoryBudget.
	MemoryBudget int64

	// MeanAdjust centres the data in feature space (K' = H K H). Without it
	// the eigendecomposition is of K itself. Fit and Incremental only
	// (Nystrom approximates K: it must be false there).
	MeanAdjust bool
	// Components keeps the top r eigenpairs; 0 keeps all of them. For
	// Incremental a positive value truncates after every update (see the
	// package documentation for the error this introduces). Fit and
	// Incremental only (it must be 0 for Nystrom).
	Components int

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

	// RCond (Nystrom and NewNystromMap only): eigenvalues of K_mm at most
	// RCond * lambda_max are treated as zero in the pseudo-inverse K_mm^+;
	// 0 means m * eps (the LAPACK-style default).
	RCond float64
}

func (o *Options) backend() backend.Backend {
	if o.Backend != nil {
		return o.Backend
	}
	return backend.Default()
}

// check validates the options; the error wraps zonal.ErrParam.
func (o *Options) check() error {
	if o.Components < 0 || o.CheckEvery < 0 || o.Probes < 0 || o.MemoryBudget < 0 ||
		math.IsNaN(o.ReorthThreshold) || o.ReorthThreshold < 0 || math.IsNaN(o.RCond) || o.RCond < 0 || math.IsInf(o.RCond, 0) {
		return fmt.Errorf("kpca: negative or NaN option (components %d, check every %d, probes %d, memory budget %d, reorth threshold %g, rcond %g): %w",
			o.Components, o.CheckEvery, o.Probes, o.MemoryBudget, o.ReorthThreshold, o.RCond, zonal.ErrParam)
	}
	return nil
}

// checkNystrom validates the options of a Nystrom approximation, which
// approximates the uncentred K with every eigenpair of K_mm.
func (o *Options) checkNystrom() error {
	if err := o.check(); err != nil {
		return err
	}
	if o.MeanAdjust || o.Components != 0 {
		return fmt.Errorf("kpca: Nystrom takes neither MeanAdjust nor Components (got %v, %d): %w", o.MeanAdjust, o.Components, zonal.ErrParam)
	}
	return nil
}

// checkBudget refuses an allocation of need bytes for what beyond the budget
// (zonal.ErrTooLarge).
func (o *Options) checkBudget(what string, need int64) error {
	return budget.Check("kpca: "+what, need, o.MemoryBudget)
}

// report sends a progress report when Progress is set.
func (o *Options) report(stage string, done, total int) {
	o.Progress.Report(zonal.Progress{Stage: stage, Done: done, Total: total})
}
