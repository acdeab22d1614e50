package tune

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/dataset"
	"github.com/zonal-ml/zonal/internal/budget"
	"github.com/zonal-ml/zonal/kernels"
	"github.com/zonal-ml/zonal/solvers"
)

// MethodParK tunes ParK (solvers.FitParK): SearchOptions.Cells Voronoi cells
// and Sizes total centres. Unlike the other methods it shares nothing
// between the lambdas of a group: each cell's partition depends on sigma
// and its FALKON preconditioner on lambda, so every (setting, fold) is one
// ParK fit, scored on the fold's held-out rows. Only CriterionCV applies
// (no closed form exists for a partitioned model).
const MethodParK Method = "park"

// DefaultCells is the cell count Q of MethodParK when SearchOptions.Cells
// is 0 (the CLI's default for -method park).
const DefaultCells = 4

// parkIterations bounds each cell's CG in tuning and refit, as
// falkonIterations does for FALKON.
const parkIterations = falkonIterations

// parkOptions are the ParK options of a fit on n rows at a setting.
func (s *searcher) parkOptions(size int, limit int64, workers int) solvers.ParKOptions {
	return solvers.ParKOptions{
		Options:    solvers.Options{Backend: s.be, MemoryBudget: limit},
		Cells:      s.cells(),
		Centers:    size,
		Partition:  s.opts.Partition,
		Iterations: parkIterations,
		Seed:       s.opts.Seed,
		Workers:    workers,
	}
}

func (s *searcher) cells() int {
	if s.opts.Cells == 0 {
		return DefaultCells
	}
	return s.opts.Cells
}

// checkPark validates the ParK options against the rows a fold trains on.
func (s *searcher) checkPark(sizes []int) error {
	if s.opts.Criterion != CriterionCV {
		return fmt.Errorf("%w: method park is scored by cross-validation or a split only (no closed-form %s for a partitioned model)", zonal.ErrParam, s.opts.Criterion)
	}
	q := s.cells()
	if q < 1 {
		return fmt.Errorf("%w: Cells must be >= 1 (0 means %d), got %d", zonal.ErrParam, DefaultCells, s.opts.Cells)
	}
	ntr := len(s.folds[0].Train)
	for _, f := range s.folds {
		ntr = min(ntr, len(f.Train))
	}
	for _, m := range sizes {
		if m < q {
			return fmt.Errorf("%w: %d centres for %d cells: every cell needs at least one", zonal.ErrParam, m, q)
		}
		if m > ntr {
			return fmt.Errorf("%w: %d centres but a fold trains on only %d rows", zonal.ErrParam, m, ntr)
		}
	}
	return nil
}

// parkScores fits ParK for every lambda on every fold (folds in parallel,
// each with an equal share of the memory budget) and returns the scores
// [lambda][fold]. A lambda whose fit fails numerically (a factor that is
// not positive definite) scores NaN; any other error ends the search.
func (s *searcher) parkScores(ctx context.Context, k kernels.Kernel, size int) ([][]float64, error) {
	_, d := s.x.Dims()
	_, kout := s.t.Dims()
	w := s.workers(0, 0)
	limit := budget.Or(s.opts.MemoryBudget)
	// The fold copies of x and the targets are what the search itself adds
	// to what every ParK fit checks against its own share.
	copies := budget.Floats(w, len(s.folds[0].Train)+len(s.folds[0].Test), d+kout) + s.pooledBytes()
	if err := budget.Check(fmt.Sprintf("tuning park on %d folds at once", w), copies, limit); err != nil {
		return nil, err
	}
	share := max(1, (limit-copies)/int64(w))
	inner := max(1, runtime.GOMAXPROCS(0)/w)
	return s.eachFold(ctx, w, func(fi int, f dataset.Fold, pred *mat.Dense, truth []float64, scores [][]float64) error {
		return s.parkFold(ctx, k, size, f, share, inner, pred, truth, scores, fi)
	})
}

// parkFold scores every lambda on one fold into scores[.][fi].
func (s *searcher) parkFold(ctx context.Context, k kernels.Kernel, size int, f dataset.Fold, share int64, workers int, pred *mat.Dense, truth []float64, scores [][]float64, fi int) error {
	xtr, ttr, xte := dataset.MustSelectRows(s.x, f.Train), dataset.MustSelectRows(s.t, f.Train), dataset.MustSelectRows(s.x, f.Test)
	for li, lam := range s.lambdas {
		if err := ctx.Err(); err != nil {
			return err
		}
		po := s.parkOptions(size, share, workers)
		po.Weights = s.weightsOf(f.Train)
		m, err := solvers.FitParK(ctx, k, xtr, ttr, lam, po)
		if errors.Is(err, zonal.ErrNotPositiveDefinite) {
			scores[li][fi] = math.NaN()
			continue
		}
		if err != nil {
			return err
		}
		if err := m.Predict(pred, xte); err != nil {
			return err
		}
		scores[li][fi] = s.scoreAt(li, fi, pred, truth, s.weightsOf(f.Test), f.Test)
	}
	return nil
}
