package tune

import (
	"context"

	"gonum.org/v1/gonum/mat"
)

// AutoRows is the default number of rows Auto tunes on.
const AutoRows = 4000

// Auto chooses sigma and lambda for a fit with no settings, as `zonal fit`
// defaults: Golden on log sigma over MedianSigma * [1/8, 8] with 6
// evaluations, each scoring the default lambda path (1e-10 .. 1e-1) by
// closed-form leave-one-out (one M x M eigendecomposition per sigma, no
// folds) for ridge and FALKON, by one 80/20 validation split for exact KRR
// and for LossLogistic,
// on a seeded subsample of at most AutoRows rows, the size from
// AutoCenters unless Sizes is set, and the best setting refitted on all
// rows. Any option set in opts is kept (a Criterion, Rows, Lambdas, Sizes,
// the bracket or the evaluations); Refit is always on. Errors are those of
// Golden.
func Auto(ctx context.Context, x mat.Matrix, y *mat.Dense, opts GoldenOptions) (*Result, error) {
	if opts.Criterion == "" && opts.Validation == 0 {
		if opts.Method == "" || opts.Method == MethodExact || opts.Loss == LossLogistic {
			// LOO needs the n x n eigendecomposition, ~150 Cholesky
			// factorisations on the pure-Go backend: a split is cheaper.
			// The logistic loss has no closed-form LOO at all.
			opts.Validation = 0.2
		} else {
			opts.Criterion = CriterionLOO
		}
	}
	if opts.Rows == 0 {
		opts.Rows = AutoRows
	}
	if opts.Evaluations == 0 {
		opts.Evaluations = 6
	}
	opts.Refit = true
	return Golden(ctx, x, y, opts)
}
