package kernels

import (
	"math"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/internal/budget"
)

// Options are the settings shared by every operation of this package that
// does bulk linear algebra. The specific option structs (FourierOptions,
// GegenbauerOptions, NystromOptions, RLSOptions, SelectOptions) embed it;
// functions without specific settings take it directly. The zero value is
// ready to use.
type Options struct {
	// Backend does the linear algebra (Gemm, Syrk, SymEig, Cholesky); nil
	// means backend.Default(). Feature maps keep it for Transform.
	Backend backend.Backend
	// Progress, if set, receives progress reports of the long operations
	// (kernel matrices, Nystrom and leverage-score builds, the truncation
	// pilot); each function's doc names its stages. It is called from the
	// goroutine doing the work, between blocks, and must return quickly.
	Progress zonal.ProgressFunc
	// MemoryBudget bounds the working arrays whose size comes from the
	// input (kernel matrices, landmark factors, frequency tables), in bytes;
	// zero means zonal.DefaultMemoryBudget. Exceeding it is an error wrapping
	// zonal.ErrTooLarge, returned before anything is allocated.
	MemoryBudget int64
}

// backend returns o.Backend, or backend.Default() when it is nil.
func (o Options) backend() backend.Backend {
	if o.Backend == nil {
		return backend.Default()
	}
	return o.Backend
}

// report sends p to o.Progress when it is set.
func (o Options) report(stage string, done, total int) {
	o.Progress.Report(zonal.Progress{Stage: stage, Done: done, Total: total})
}

// check returns nil when the arrays of the given byte sizes (budget.Floats)
// together fit the memory budget, else the budget error naming what.
func (o Options) check(what string, sizes ...int64) error {
	var need int64
	for _, s := range sizes {
		if need > math.MaxInt64-s {
			need = math.MaxInt64
			break
		}
		need += s
	}
	return budget.Check(what, need, o.MemoryBudget)
}

// quiet returns o without its progress callback, for inner steps whose own
// reports would interleave with the caller's.
func (o Options) quiet() Options {
	o.Progress = nil
	return o
}
