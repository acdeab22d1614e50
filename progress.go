package zonal

// Progress is one progress report of a long operation (a fit, a feature
// build, a sampler level, a tuning grid, a KPCA run).
type Progress struct {
	// Stage names the phase, e.g. "features", "kernel", "factor", "cg",
	// "cells", "level", "points".
	Stage string
	// Done of Total units (blocks, iterations, cells, levels, points) are
	// finished; Total is 0 when it is not known in advance.
	Done, Total int
	// Residual is the CG relative residual when Stage is "cg", else 0.
	Residual float64
}

// ProgressFunc receives progress reports. Every long operation in zonal takes
// one in its options struct (field Progress); nil means no reports. It is
// called from the goroutine doing the work (or, where the work is parallel,
// from its workers, serialised), so it must return quickly.
type ProgressFunc func(Progress)

// Report calls f with p when f is not nil.
func (f ProgressFunc) Report(p Progress) {
	if f != nil {
		f(p)
	}
}
