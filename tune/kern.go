package tune

// Every call into kernels and solvers is in this file, so that changes of
// their signatures are edits here only.

import (
	"context"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/kernels"
	"github.com/zonal-ml/zonal/solvers"
)

// kernelMatrix writes K(x, y) to dst.
func kernelMatrix(ctx context.Context, be backend.Backend, k kernels.Kernel, dst *mat.Dense, x, y mat.Matrix) error {
	return kernels.MatrixIntoContext(ctx, dst, be, k, x, y)
}

// featureMap builds the map of a ridge or FALKON setting: random Fourier
// features (D of them), or the Nystrom map on the rows idx of x.
func featureMap(be backend.Backend, k kernels.Kernel, x *mat.Dense, kind string, size int, idx []int, seed uint64) (kernels.FeatureMap, error) {
	if kind == MapFourier {
		_, d := x.Dims()
		return kernels.NewFourier(be, k, d, kernels.FourierOptions{Features: size, Seed: seed})
	}
	return kernels.NewNystrom(be, k, gatherRows(x, idx))
}

// falkonCenters draws the M centre rows that solvers.FitFalkon draws with
// uniform sampling and the same seed (M distinct rows of 0..n-1 from the
// PCG stream (seed, 0x9e3779b97f4a7c15), sorted), so that the tuned FALKON
// path and the refitted model use the same centres. TestFalkonCentersMatch
// checks the coupling against FitFalkon's CenterIndices.
func falkonCenters(n, m int, seed uint64) []int {
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	idx := rng.Perm(n)[:m]
	slices.Sort(idx)
	return idx
}

// refit fits the chosen setting on all rows with solvers.
func refit(ctx context.Context, s *searcher, set Setting) (solvers.Model, error) {
	x, t := s.fullX, s.fullT
	k, err := s.kernel(set.Sigma)
	if err != nil {
		return nil, err
	}
	so := solvers.Options{Backend: s.be, MemoryBudget: s.opts.MemoryBudget}
	switch s.opts.Method {
	case MethodKRR:
		return solvers.FitKRR(ctx, k, x, t, set.Lambda, so)
	case MethodFalkon:
		return solvers.FitFalkon(ctx, k, x, t, set.Lambda, solvers.FalkonOptions{Options: so, Centers: set.Size, Seed: s.opts.Seed})
	}
	fm, err := s.mapFor(k, set.Size)
	if err != nil {
		return nil, err
	}
	return solvers.FitRidge(ctx, fm, x, t, set.Lambda, so)
}
