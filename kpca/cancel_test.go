package kpca

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/zonal-ml/zonal/internal/testctx"
	"github.com/zonal-ml/zonal/kernels"
)

// TestLongOperationsReturnOnCancel cancels batch kernel PCA of 3000 points
// and the batch Nystrom map of 3000 landmarks (each an O(n^3)
// eigendecomposition of seconds) 700 ms in, and asserts context.Canceled
// within testctx.Grace (1 s promised).
func TestLongOperationsReturnOnCancel(t *testing.T) {
	if testing.Short() {
		t.Skip("runs problems of seconds")
	}
	rng := rand.New(rand.NewPCG(81, 1))
	x := mat.NewDense(3000, 5, nil)
	for i := 0; i < 3000; i++ {
		for j := 0; j < 5; j++ {
			x.Set(i, j, rng.NormFloat64())
		}
	}
	k := kernels.Gaussian{Sigma: 2}
	delay := 700 * time.Millisecond
	testctx.CancelsWithin(t, "Fit(3000)", delay, func(ctx context.Context) error {
		_, err := Fit(ctx, k, x, Options{MeanAdjust: true})
		return err
	})
	testctx.CancelsWithin(t, "NewNystromMap(3000)", delay, func(ctx context.Context) error {
		_, err := NewNystromMap(ctx, k, x, Options{})
		return err
	})
}
