package solvers

import (
	"context"
	"testing"
	"time"

	"github.com/zonal-ml/zonal/internal/testctx"
	"github.com/zonal-ml/zonal/kernels"
)

// TestFitsReturnOnCancel cancels each fit 300 ms into a problem of many
// seconds and asserts that it returns context.Canceled within
// testctx.Grace (1 s promised): exact KRR on 5000 rows, 800 ms in (past the
// kernel matrix, into its Cholesky factor of 4 10^10 flops), FALKON and ParK
// with 3000 centres, ridge on 4096 Gegenbauer features.
func TestFitsReturnOnCancel(t *testing.T) {
	if testing.Short() {
		t.Skip("runs problems of seconds")
	}
	k := kernels.Gaussian{Sigma: 1}
	delay := 300 * time.Millisecond
	x, y := synth(5000, 6, 71)
	testctx.CancelsWithin(t, "FitKRR(5000)", 800*time.Millisecond, func(ctx context.Context) error {
		_, err := FitKRR(ctx, k, x, y, 1e-6, Options{})
		return err
	})
	x, y = synth(20000, 6, 72)
	testctx.CancelsWithin(t, "FitFalkon(3000 centres)", delay, func(ctx context.Context) error {
		_, err := FitFalkon(ctx, k, x, y, 1e-6, FalkonOptions{Centers: 3000, Iterations: 50, Seed: 1})
		return err
	})
	testctx.CancelsWithin(t, "FitFalkon(rls, 3000 centres)", delay, func(ctx context.Context) error {
		_, err := FitFalkon(ctx, k, x, y, 1e-6, FalkonOptions{Centers: 3000, Sampling: SamplingRLS, Iterations: 50, Seed: 1})
		return err
	})
	testctx.CancelsWithin(t, "FitParK(2 cells, 3000 centres)", delay, func(ctx context.Context) error {
		_, err := FitParK(ctx, k, x, y, 1e-6, ParKOptions{Cells: 2, Centers: 3000, Iterations: 50, Seed: 1})
		return err
	})
	// Ridge on 4096 Gegenbauer features: each block of 2048 rows is a
	// Transform and a 2048 x 4096 x 4096 Syrk (seconds), checking no context.
	gm, err := kernels.NewGegenbauerMap(context.Background(), k, x, kernels.GegenbauerOptions{Features: 4096, Q: 6, S: 2, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	testctx.CancelsWithin(t, "FitRidge(gegenbauer, 4096 features)", delay, func(ctx context.Context) error {
		_, err := FitRidge(ctx, gm, x, y, 1e-6, RidgeOptions{})
		return err
	})
}
