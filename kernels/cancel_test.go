package kernels

import (
	"context"
	"testing"
	"time"

	"github.com/zonal-ml/zonal/internal/testctx"
)

// TestLongOperationsReturnOnCancel cancels each long operation of the
// package 200 ms into a problem that takes many seconds and asserts that it
// returns context.Canceled within testctx.Grace (1 s promised): the Nystrom
// build at 3000 landmarks (its eigendecomposition alone is ~10^10 flops),
// leverage-score sampling of 3000 landmarks, and the Gegenbauer pilot on
// wide data.
func TestLongOperationsReturnOnCancel(t *testing.T) {
	if testing.Short() {
		t.Skip("runs problems of seconds")
	}
	k := Gaussian{Sigma: 3}
	delay := 200 * time.Millisecond
	land := randMatrix(61, 3000, 8, 1)
	// 1 s: past forming K_CC, into its eigendecomposition.
	testctx.CancelsWithin(t, "NewNystromFromLandmarks(3000)", time.Second, func(ctx context.Context) error {
		_, err := NewNystromFromLandmarks(ctx, k, land, Options{})
		return err
	})
	x := randMatrix(62, 12000, 8, 1)
	testctx.CancelsWithin(t, "NewNystrom(rls, 3000)", delay, func(ctx context.Context) error {
		_, err := NewNystrom(ctx, k, x, NystromOptions{Landmarks: 3000, Sampling: SamplingRLS, Seed: 1})
		return err
	})
	testctx.CancelsWithin(t, "NewNystrom(uniform, 3000)", delay, func(ctx context.Context) error {
		_, err := NewNystrom(ctx, k, x, NystromOptions{Landmarks: 3000, Seed: 1})
		return err
	})
	wide := randMatrix(63, 400, 2000, 0.02)
	testctx.CancelsWithin(t, "NewGegenbauerMap(pilot, d=2000)", delay, func(ctx context.Context) error {
		_, err := NewGegenbauerMap(ctx, Gaussian{Sigma: 1}, wide, GegenbauerOptions{Features: 4096})
		return err
	})
}
