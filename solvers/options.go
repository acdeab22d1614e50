package solvers

import (
	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
)

// Options are the settings every solver shares. The zero value is usable.
type Options struct {
	// Backend does the linear algebra; nil means backend.Default() as it is
	// when the call starts. A fitted model keeps its fit's backend for
	// prediction, a loaded model the one Load was given.
	Backend backend.Backend
	// MemoryBudget bounds the large working arrays (kernel matrices, cached
	// K_nM, Z^T Z), in bytes; zero means zonal.DefaultMemoryBudget.
	MemoryBudget int64
	// Progress, if set, receives progress reports. It is called from the
	// fitting goroutine (ParK: from the cell workers, serialised).
	Progress zonal.ProgressFunc
	// Weights are per-row weights of a fit (nil: every row has weight 1).
	// See the package documentation for the weighted objective.
	Weights []float64
}

// backend resolves Options.Backend (never nil).
func (o Options) backend() backend.Backend {
	if o.Backend == nil {
		return backend.Default()
	}
	return o.Backend
}

// report sends p to Progress, if set.
func (o Options) report(p zonal.Progress) { o.Progress.Report(p) }
