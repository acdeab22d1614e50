package kpca

import (
	"context"
	"testing"
	"time"

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
	x := testctx.Normal(81, 3000, 5, 1)
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
