package tune

import (
	"context"
	"fmt"
	"math"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
)

// GoldenOptions configures Golden.
type GoldenOptions struct {
	SearchOptions
	// Lo and Hi bracket sigma; 0 means MedianSigma / 8 and MedianSigma * 8.
	Lo, Hi float64
	// Evaluations is the number of sigmas evaluated (each with the whole
	// lambda path and every size); 0 means 8. At least 2.
	Evaluations int
	// Reuse is the result of an earlier Golden with the same data and
	// options except Evaluations (fewer) and BothIntercepts (a reused
	// sigma's matrix is not at hand: when it is the best, the fitted
	// intercept's group is built again): the search takes the same first
	// steps, so a sigma it evaluated (every size's rows present in
	// Reuse.Rows) is taken from there instead of evaluated again, and
	// Golden with Evaluations k after Golden with Evaluations j < k costs
	// k - j evaluations. The result lists the reused rows too; its
	// Seconds counts this call only.
	Reuse *Result
}

// invPhi is 1/phi = (sqrt 5 - 1)/2, the golden-section ratio.
var invPhi = (math.Sqrt(5) - 1) / 2

// Golden searches sigma by golden-section search on u = log sigma over
// [log Lo, log Hi]: the objective at u is the best score over the lambda
// grid (and sizes) at sigma = e^u, each evaluation costing one group per
// size (the lambda path, see Search). After the first two evaluations the
// bracket shrinks by 1/phi per evaluation, so 8 evaluations narrow it by
// phi^7 ~ 29, where a log-spaced grid of the same resolution needs about 29
// sigmas. With a unimodal objective in log sigma it converges to the
// minimiser inside the bracket; otherwise to a local one. The interior
// points never reach the bracket's ends: when the best sigma is at an end
// (a smooth target, where the largest sigma and the smallest lambda win),
// widen the bracket. Sigmas is ignored; every other option
// means what it means for Search, and so do the errors (plus zonal.ErrParam
// for a bad bracket or fewer than 2 evaluations).
func Golden(ctx context.Context, x mat.Matrix, y *mat.Dense, opts GoldenOptions) (*Result, error) {
	so := opts.SearchOptions
	so.Sigmas = nil
	s, err := newSearcher(x, y, &so)
	if err != nil {
		return nil, err
	}
	sizes, err := s.sizeGrid()
	if err != nil {
		return nil, err
	}
	evals := opts.Evaluations
	if evals == 0 {
		evals = 8
	}
	if evals < 2 {
		return nil, fmt.Errorf("%w: golden-section search needs at least 2 evaluations, got %d", zonal.ErrParam, evals)
	}
	lo, hi := opts.Lo, opts.Hi
	if lo == 0 || hi == 0 {
		med, err := MedianSigma(x, 0, so.Seed)
		if err != nil {
			return nil, err
		}
		if lo == 0 {
			lo = med / 8
		}
		if hi == 0 {
			hi = med * 8
		}
	}
	if err := checkSigma(lo); err != nil {
		return nil, err
	}
	if err := checkSigma(hi); err != nil {
		return nil, err
	}
	if !(lo < hi) {
		return nil, fmt.Errorf("%w: sigma bracket needs Lo < Hi, got [%g, %g]", zonal.ErrParam, lo, hi)
	}
	start := time.Now()
	res := s.newResult()
	s.total = evals * len(sizes) * len(s.lambdas)
	f := func(u float64) (float64, error) {
		best := math.Inf(1)
		for _, sz := range sizes {
			rows := reusedRows(opts.Reuse, math.Exp(u), sz, len(s.lambdas))
			if rows == nil {
				if rows, err = s.group(ctx, math.Exp(u), sz); err != nil {
					return 0, err
				}
			} else {
				s.done += len(rows)
			}
			res.Rows = append(res.Rows, rows...)
			res.Groups++
			for _, r := range rows {
				best = min(best, s.loss(r.Mean))
			}
		}
		return best, nil
	}
	a, b := math.Log(lo), math.Log(hi)
	c, d := b-invPhi*(b-a), a+invPhi*(b-a)
	fc, err := f(c)
	if err != nil {
		return nil, err
	}
	fd, err := f(d)
	if err != nil {
		return nil, err
	}
	for e := 2; e < evals; e++ {
		if fc <= fd {
			b, d, fd = d, c, fc
			c = b - invPhi*(b-a)
			if fc, err = f(c); err != nil {
				return nil, err
			}
		} else {
			a, c, fc = c, d, fd
			d = a + invPhi*(b-a)
			if fd, err = f(d); err != nil {
				return nil, err
			}
		}
	}
	return s.finish(ctx, res, start)
}

// reusedRows returns the rows of r at exactly sigma and size (one per
// lambda, want of them), or nil when r does not hold them all.
func reusedRows(r *Result, sigma float64, size, want int) []Row {
	if r == nil {
		return nil
	}
	var rows []Row
	for _, row := range r.Rows {
		if row.Sigma == sigma && row.Size == size {
			rows = append(rows, row)
		}
	}
	if len(rows) != want {
		return nil
	}
	return rows
}
