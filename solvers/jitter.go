package solvers

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal"
	"github.com/zonal-ml/zonal/backend"
	"github.com/zonal-ml/zonal/internal/interrupt"
)

// factorWithJitter fills a (an n x n symmetric matrix) by calling fill and
// Cholesky-factors a + shift I (factorWithJitterBy: by chol, e.g.
// backend.CholeskyLower where the strict upper triangle holds other data).
// If that fails, it refills and retries with
// an added jitter of 1e-12, 1e-10, ..., 1e-4 times the mean diagonal; the
// jitter used is returned. A matrix that still cannot be factored gives an
// error wrapping zonal.ErrNotPositiveDefinite and the backend's zonal.ErrNotPositiveDefinite.
// ctx is checked before each attempt, and a cancellation during fill or a
// factorization returns ctx.Err() at once (the abandoned step finishes in
// the background).
func factorWithJitter(ctx context.Context, be backend.Backend, a *mat.Dense, shift float64, what string, fill func(*mat.Dense) error) (float64, error) {
	return factorWithJitterBy(ctx, a, shift, what, fill, be.Cholesky)
}

// factorWithJitterBy is factorWithJitter with the factorization chol.
func factorWithJitterBy(ctx context.Context, a *mat.Dense, shift float64, what string, fill func(*mat.Dense) error, chol func(blas64.General) error) (float64, error) {
	n, _ := a.Dims()
	var lastErr error
	jitter := 0.0
	scale := 0.0
	for attempt := 0; attempt < 6; attempt++ {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		// fill may be a dense product of seconds (the Syrk of FALKON's
		// T T^T): it runs under interrupt.Do like the factorization.
		var ferr error
		if err := interrupt.Do(ctx, func() { ferr = fill(a) }); err != nil {
			return 0, err
		}
		if ferr != nil {
			return 0, ferr
		}
		if attempt == 0 {
			for i := 0; i < n; i++ {
				scale += math.Abs(a.At(i, i))
			}
			scale /= float64(n)
			if scale == 0 {
				scale = 1
			}
		} else {
			jitter = scale * math.Pow(10, float64(-14+2*attempt))
		}
		raw := a.RawMatrix()
		for i := 0; i < n; i++ {
			raw.Data[i*raw.Stride+i] += shift + jitter
		}
		// The O(n^3) factorization cannot check ctx itself: a cancellation
		// returns at once and leaves it to finish on its own.
		var err error
		if cerr := interrupt.Do(ctx, func() { err = chol(raw) }); cerr != nil {
			return 0, cerr
		}
		if err == nil {
			return jitter, nil
		}
		lastErr = err
	}
	return 0, fmt.Errorf("%w %s (%dx%d) even with jitter %g: %w", zonal.ErrNotPositiveDefinite, what, n, n, jitter, lastErr)
}
