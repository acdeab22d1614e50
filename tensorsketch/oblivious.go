package tensorsketch

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/internal/budget"
	"github.com/zonal-ml/zonal/kernels"
)

// sketch is what the oblivious sketches (CountSketch, TensorSketch,
// PolySketch) share: the kernel's expansion, the input dimension d, the
// per-degree sketch size m, the feature dimension, the seed (the random
// tables are regenerated from it when a map is decoded) and the memory
// budget of Transform.
type sketch struct {
	e         expansion
	d, m, dim int
	seed      uint64
	limit     int64
}

// newSketch resolves k (see newExpansion) and lays out opts.Features.
func newSketch(k kernels.Kernel, d int, opts SketchOptions) (sketch, error) {
	e, err := newExpansion(k, opts.TaylorDegree)
	if err != nil {
		return sketch{}, err
	}
	return sketchOf(e, d, opts)
}

// sketchOf lays out opts.Features for the expansion e on R^d: polynomial,
// m = D features; Gaussian, one feature for degree 0 (the exact omega(x))
// and m = floor((D-1)/q) for each degree 1..q, so the dimension is
// 1 + q*m <= D.
func sketchOf(e expansion, d int, opts SketchOptions) (sketch, error) {
	if d < 1 {
		return sketch{}, fmt.Errorf("%w: input dimension must be >= 1, got %d", zonal.ErrParam, d)
	}
	D := opts.Features
	s := sketch{e: e, d: d, m: D, dim: D, seed: opts.Seed, limit: opts.MemoryBudget}
	switch {
	case !e.gauss && D < 1:
		return sketch{}, fmt.Errorf("%w: need Features >= 1, got %d", zonal.ErrParam, D)
	case e.gauss:
		s.m = (D - 1) / e.q
		if s.m < 1 {
			return sketch{}, fmt.Errorf("%w: Features = %d is too small for Taylor degree %d (need Features >= q+1)", zonal.ErrParam, D, e.q)
		}
		s.dim = 1 + e.q*s.m
	}
	return s, nil
}

// input converts x for Transform (see toRows), checking the copy, its
// prepared form and perWorker scratch bytes for each of the rowWorkers(n)
// workers against the map's budget.
func (s *sketch) input(x mat.Matrix, what string, perWorker int64) (*rows, error) {
	return toRows(x, s.d, s.limit, what, func(n, nnz int) int64 {
		return satAdd(s.e.prepBytes(n, nnz), budget.Bytes(perWorker, rowWorkers(n)))
	})
}

// marshal encodes the version, the kernel, d, D and the seed.
func (s *sketch) marshal(version uint64) []byte {
	var e enc
	e.u(version)
	e.expansion(s.e)
	e.i(s.d)
	e.i(s.dim)
	e.u(s.seed)
	return e.b
}

// decodeSketch reads what marshal wrote and rebuilds the layout. Versions
// listed in legacy were written without the kernel, which is then
// legacy[version]. Decoded maps use the default memory budget.
func decodeSketch(b []byte, legacy map[uint64]expansion) (sketch, error) {
	d := dec{b: b}
	e, ok := legacy[d.u()]
	if !ok {
		var err error
		if e, err = d.expansion(); err != nil {
			return sketch{}, err
		}
	}
	dd, D, seed := d.i(), d.i(), d.u()
	if d.err != nil {
		return sketch{}, d.err
	}
	s, err := sketchOf(e, dd, SketchOptions{Features: D, Seed: seed})
	if err != nil {
		return sketch{}, err
	}
	if s.dim != D {
		return sketch{}, fmt.Errorf("%w: encoded dimension %d does not match the layout %d", zonal.ErrFormat, D, s.dim)
	}
	return s, nil
}
