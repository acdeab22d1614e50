package tune

// Every call into kernels and solvers is in this file, so that changes of
// their signatures are edits here only.

import (
	"context"
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/kernels"
	"github.com/zonal-ml/zonal/solvers"
)

// kernelMatrix writes K(x, y) to dst.
func kernelMatrix(ctx context.Context, be backend.Backend, k kernels.Kernel, dst *mat.Dense, x, y mat.Matrix) error {
	return kernels.MatrixInto(ctx, dst, k, x, y, kernels.Options{Backend: be})
}

// featureMap builds the map of a ridge or FALKON setting: random Fourier
// features (D of them), or the Nystrom map on the rows idx of x (in
// K_CC's eigenbasis when basis, kernels.NewNystromBasis: for scoring).
func featureMap(be backend.Backend, k kernels.Kernel, x mat.Matrix, kind Map, size int, idx []int, seed uint64, basis bool) (kernels.FeatureMap, error) {
	if kind == MapFourier {
		_, d := x.Dims()
		return kernels.NewFourierMap(k, d, kernels.FourierOptions{Options: kernels.Options{Backend: be}, Features: size, Seed: seed})
	}
	land, err := dataset.SelectRows(x, idx)
	if err != nil {
		return nil, err
	}
	if basis {
		return kernels.NewNystromBasis(context.Background(), k, land, kernels.Options{Backend: be})
	}
	return kernels.NewNystromFromLandmarks(context.Background(), k, land, kernels.Options{Backend: be})
}

// falkonCenters draws the M centre rows that solvers.FitFalkon draws with
// uniform sampling and the same seed (solvers.UniformCenters), so that the
// tuned FALKON path and the refitted model use the same centres.
func falkonCenters(n, m int, seed uint64) []int { return solvers.UniformCenters(n, m, seed) }

// subsetWeights is the row weights of the rows idx (solvers.SubsetWeights;
// nil stays nil).
func subsetWeights(w []float64, idx []int) []float64 { return solvers.SubsetWeights(w, idx) }

// falkonIterations bounds FALKON's CG in the refit (solvers' default is 20).
const falkonIterations = 50

// refit fits the chosen setting on all rows with solvers. FALKON's CG does
// not always reach the exact solution the tuner scored (at lambda ~1e-9 on
// spam its preconditioned residual stalls near 0.2 and the test accuracy
// drops from 0.93 to 0.70): when it has not converged after
// falkonIterations, the same predictor, ridge on the Nystrom map of the
// same centres, is solved directly (Cholesky) instead, and note says so.
func refit(ctx context.Context, s *searcher, set Setting) (solvers.Model, string, error) {
	x, t := s.fullX, s.fullT
	k, err := s.kernel(set.Sigma)
	if err != nil {
		return nil, "", err
	}
	so := solvers.Options{Backend: s.be, MemoryBudget: s.opts.MemoryBudget, Weights: s.fullW}
	if s.logistic() {
		n, _ := x.Dims()
		m, err := solvers.FitLogistic(ctx, k, x, t, set.Lambda, solvers.LogisticOptions{Options: so, Centers: min(set.Size, n), Seed: s.opts.Seed, Intercept: s.opts.Intercept})
		return m, "", err
	}
	switch s.opts.Method {
	case MethodExact:
		m, err := solvers.FitKRR(ctx, k, x, t, set.Lambda, so)
		return m, "", err
	case MethodParK:
		po := s.parkOptions(set.Size, s.opts.MemoryBudget, 0)
		po.Weights = s.fullW
		m, err := solvers.FitParK(ctx, k, x, t, set.Lambda, po)
		return m, "", err
	case MethodFalkon:
		f, err := solvers.FitFalkon(ctx, k, x, t, set.Lambda, solvers.FalkonOptions{Options: so, Centers: set.Size, Seed: s.opts.Seed, Iterations: falkonIterations})
		if err != nil || f.CG().Converged {
			return f, "", err
		}
		h := f.CG().History
		note := fmt.Sprintf("FALKON's CG stopped at relative residual %.3g after %d iterations; refitted as ridge on the Nystrom map of the same %d centres (the same predictor, solved directly)",
			h[len(h)-1], f.CG().Iterations, set.Size)
		fm, err := s.mapFor(k, set.Size, x, false)
		if err != nil {
			return nil, "", err
		}
		r, err := solvers.FitRidge(ctx, fm, x, t, set.Lambda, solvers.RidgeOptions{Options: so})
		return r, note, err
	}
	fm, err := s.mapFor(k, set.Size, s.x, false)
	if err != nil {
		return nil, "", err
	}
	r, err := solvers.FitRidge(ctx, fm, x, t, set.Lambda, solvers.RidgeOptions{Options: so})
	return r, "", err
}
